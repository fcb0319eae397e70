# SPDX-License-Identifier: BSD-3-Clause
"""The answers and the tables as one JSON document (`gmb tables --json`), for programs that check them: a site's
nightly test (contrib/reframe), a dashboard. The answers keep their dataclass field names (answers_data.py), with
their words beside them ("sentence", and a path's "verdict" and "latency_verdict", as the terminal says them); a
figure's point (the model's object behind it) is left out, its numbers are in the figure."""

from __future__ import annotations

import dataclasses
import json

from .answers_data import (Answers, CollectiveAnswer, MissingAnswer, OneSidedAnswer, PartitionedAnswer, PathAnswer,
                           PersistentAnswer, ScalingAnswer, SettingAnswer, StrategyAnswer, SweepAnswer)
from .answers_words import (collective_sentence, feature_sentence, missing_sentence, path_sentence, setting_sentence,
                            strategy_sentence, verdict_said)
from .cells import Table

FORMAT = "gmb.answers/3"

# each answer's words, under the keys the document gives them (answers_words says them as the terminal does)
_WORDS = {
    PathAnswer: lambda p: {"sentence": path_sentence(p), "verdict": verdict_said(p.figures, p.ranking),
                           "latency_verdict": verdict_said(p.latency_figures, p.latency) if p.latency else ""},
    StrategyAnswer: lambda s: {"sentence": strategy_sentence(s)},
    SettingAnswer: lambda s: {"sentence": setting_sentence(s)},
    CollectiveAnswer: lambda c: {"sentence": collective_sentence(c)},
    MissingAnswer: lambda m: {"sentence": missing_sentence(m)},
    **{kind: lambda f: {"topic": f.topic, "sentence": feature_sentence(f)}
       for kind in (OneSidedAnswer, PersistentAnswer, PartitionedAnswer, ScalingAnswer, SweepAnswer)},
}


def _plain(value):
    """Dataclasses as dicts of their fields (less the internal ones: repr=False) and an answer's words, lists as
    lists, the rest as is."""
    if dataclasses.is_dataclass(value):
        out = {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.repr}
        words = _WORDS.get(type(value))
        return out | words(value) if words else out
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def answers_json(answers: Answers, tables: list[Table]) -> str:
    """A table's cell without a value is its reason (a string), as the text tables show it."""
    document = {"format": FORMAT, "answers": _plain(answers),
                "tables": [{"title": t.title, "columns": t.columns, "rows": [[_plain(c) for c in r] for r in t.rows],
                            "note": t.note} for t in tables]}
    return json.dumps(document, indent=1, default=str)
