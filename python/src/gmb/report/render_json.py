# SPDX-License-Identifier: BSD-3-Clause
"""The answers and the tables as one JSON document (`gmb tables --json`), for programs that check them: a site's
nightly test (contrib/reframe), a dashboard. The answers keep their dataclass field names (answers_data.py); a
figure's point (the model's object behind it) is left out, its numbers are in the figure."""

from __future__ import annotations

import dataclasses
import json

from .answers_data import Answers
from .cells import Table

FORMAT = "gmb.answers/2"


def _plain(value):
    """Dataclasses as dicts of their fields (less the internal ones: repr=False), lists as lists, the rest as is."""
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.repr}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def answers_json(answers: Answers, tables: list[Table]) -> str:
    """A table's cell without a value is its reason (a string), as the text tables show it."""
    document = {"format": FORMAT, "answers": _plain(answers),
                "tables": [{"title": t.title, "columns": t.columns, "rows": [[_plain(c) for c in r] for r in t.rows],
                            "note": t.note} for t in tables]}
    return json.dumps(document, indent=1, default=str)
