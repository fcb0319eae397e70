# SPDX-License-Identifier: BSD-3-Clause
"""The claims of one report held together. Every difference the answers and tables test (cells.clearly_apart) is a
claim; a report makes only those that Benjamini-Hochberg keeps over all of them at a 5 % false discovery rate, so that
many comparisons do not make some false ones by chance (docs/methodology.md). ``held_together(build)`` runs the
report's analysis twice: once to collect the p-value of every difference tested (each pair of points once), then to
decide with the cut-off those p-values give. Outside it (a single comparison) each difference is decided at 95 %."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Callable, Hashable, TypeVar

from ..results.inference import LEVEL, Ratio

FDR = 1 - LEVEL  # the false discovery rate a report's claims are held to

T = TypeVar("T")


@dataclass
class _Ledger:
    cutoff: float | None  # None: the first pass, which only collects
    tested: dict = field(default_factory=dict)  # the pair of points -> its p-value


@dataclass(frozen=True)
class ClaimCount:
    """How many differences a report tested and how many it claims."""
    tested: int
    made: int

    def text(self) -> str:
        return (f"{self.tested} difference(s) tested, {self.made} claimed: a claim is made where the 95 % interval "
                f"of the ratio excludes 1 and Benjamini-Hochberg keeps it at a {FDR:.0%} false discovery rate over "
                "every difference this report tested.")


_ledger: ContextVar[_Ledger | None] = ContextVar("claims_ledger", default=None)


def decide(pair: Hashable, r: Ratio) -> bool:
    """Whether the difference ``r`` of a ``pair`` of points is claimed: its interval excludes 1 and, inside
    held_together, its p-value is within the report's Benjamini-Hochberg cut-off."""
    ledger = _ledger.get()
    p = 1.0 if r.p is None else r.p
    if ledger is not None:
        ledger.tested[pair] = p
    if r.apart == 0:
        return False
    return ledger is None or ledger.cutoff is None or p <= ledger.cutoff


def bh_cutoff(pvalues: list[float], q: float = FDR) -> float:
    """The largest p-value Benjamini-Hochberg keeps at rate ``q`` (-1 where it keeps none)."""
    ranked = sorted(pvalues)
    m = len(ranked)
    kept = [p for k, p in enumerate(ranked, start=1) if p <= k * q / m]
    return kept[-1] if kept else -1.0


def held_together(build: Callable[[], T]) -> tuple[T, ClaimCount]:
    """build() with every difference it tests decided together (see the module's doc), and the count of them."""
    first = _Ledger(None)
    token = _ledger.set(first)
    try:
        build()
    finally:
        _ledger.reset(token)
    cutoff = bh_cutoff(list(first.tested.values()))
    second = _Ledger(cutoff)
    token = _ledger.set(second)
    try:
        out = build()
    finally:
        _ledger.reset(token)
    return out, ClaimCount(len(second.tested), sum(p <= cutoff for p in second.tested.values()))
