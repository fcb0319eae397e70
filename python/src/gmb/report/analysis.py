# SPDX-License-Identifier: BSD-3-Clause
"""One report's analysis: its answers and its tables, built with their claims held together (claims.held_together),
so that `gmb run`'s printed answers, `gmb report` and `gmb tables` make the same claims from the same results."""

from __future__ import annotations

from ..results.model import Results
from .answers import answers
from .answers_data import Answers
from .cells import Table
from .claims import held_together
from .tables import all_tables


# the answers and the tables of one store, decided together (claims held together over both)
Analysis = tuple[Answers, list[Table]]


def answers_and_tables(results: Results) -> Analysis:
    """The answers and the tables of ``results``; the answers' notes end with how many differences were tested and
    how many are claimed."""
    (a, ts), count = held_together(lambda: (answers(results), all_tables(results)))
    if count.tested:
        a.notes.append(count.text())
    return a, ts
