# SPDX-License-Identifier: BSD-3-Clause
"""Answers 1 and 4 as one compact table: a row per question (a path's bandwidth, the same path's latency, a
collective's bus bandwidth) with its answer, the best figure, its % of ceiling and the evidence behind it. The
verdicts are the answers' own (answers_data.verdict): the table words them (answers_words), it judges nothing itself."""

from __future__ import annotations

import html

from .answers_data import Answers, CollectiveAnswer, Figure, PathAnswer
from .answers_words import ceiling_finding_said, no_ceiling_said, verdict_said
from .cells import size_text
from .wording import no_difference_text, pct, pct_of_ceiling_text, precision_text, ratio_said, sig3, who

COLUMNS = ("question / path", "answer", "figure", "% of ceiling", "evidence")


def _figure(f: Figure) -> str:
    return f"{sig3(f.value)} {f.unit} ({precision_text(f.precision, f.capped)})"


def _others(figs: list[Figure], with_pct: bool) -> str:
    """The figures behind the best one, each with its configuration."""
    return ", ".join(f"{who(f)} {_figure(f)}" + (f", {pct_of_ceiling_text(f)}"
                                                 if with_pct and f.pct_of_ceiling is not None else "")
                     for f in figs)


def _bandwidth_row(p: PathAnswer) -> list[str]:
    best = p.figures[0]
    what = "bandwidth" if best.unit == "GB/s" else "time"
    evidence = []
    if p.ceiling:
        evidence.append(f"ceiling {p.ceiling_label or p.ceiling} {sig3(p.ceiling_GBps)} GB/s at {size_text(p.bytes)}")
    finding = ceiling_finding_said(p)
    if finding:
        evidence.append(finding)
    if len(p.figures) > 1:
        evidence.append(f"best {who(best)}; then {_others(p.figures[1:], True)}")
    if p.not_at_size:
        evidence.append(f"not measured at {size_text(p.bytes)}: {', '.join(p.not_at_size)}")
    if p.sizes_measured and p.sizes_measured[0] != p.sizes_measured[1]:
        lo, hi = p.sizes_measured
        evidence.append(f"sizes measured on this path: {size_text(lo)} to {size_text(hi)}")
    share = (pct(best.pct_of_ceiling) + (f" of {best.own_ceiling}" if best.own_ceiling else "")
             if best.pct_of_ceiling is not None else no_ceiling_said(p) or "no ceiling")
    return [f"{p.path}: {what} ({p.benchmark}) at {size_text(p.bytes)}", verdict_said(p.figures, p.ranking), _figure(best), share,
            "; ".join(evidence) or "one configuration measured it"]


def _latency_row(p: PathAnswer) -> list[str] | None:
    if p.latency is None or p.figures[0].unit != "GB/s":  # a time row already answers by time
        return None
    figures = p.latency_figures
    best = figures[0]
    sizes = {f.point.bytes for f in figures}
    at = size_text(sizes.pop()) if len(sizes) == 1 else "the size nearest 8 B"
    evidence = (f"best {who(best)}; then {_others(figures[1:], False)}" if len(figures) > 1
                else "one configuration measured it")
    return [f"{p.path}: latency at {at}", verdict_said(figures, p.latency), _figure(best), "no ceiling: a latency", evidence]


def _collective_verdict(c: CollectiveAnswer) -> str:
    if len(c.figures) == 1:
        return f"only {c.figures[0].library}"
    if c.fastest:
        return f"fastest {c.fastest}" + (f", {ratio_said(c.ratio)} {c.slowest}" if c.ratio else "")
    if c.slowest:
        return f"slowest {c.slowest}, {ratio_said(c.ratio)} behind the best"
    return no_difference_text(f.point for f in c.figures)


def _collective_row(c: CollectiveAnswer) -> list[str]:
    ranked = sorted(c.figures, key=lambda f: -f.value)
    evidence = f"best {ranked[0].library}; then {_others(ranked[1:], False)}" if len(ranked) > 1 else \
        "no other configuration measured it"
    return [f"{c.operation}, {c.ranks} ranks, {c.memory} memory: bus bandwidth at {size_text(c.bytes)}",
            _collective_verdict(c), _figure(ranked[0]), "no ceiling for collectives", evidence]


def answers_table(a: Answers) -> str:
    """The table, every value escaped."""
    rows = []
    for p in a.paths:
        rows.append(_bandwidth_row(p))
        latency = _latency_row(p)
        if latency:
            rows.append(latency)
    rows += [_collective_row(c) for c in a.collectives]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in r) + "</tr>" for r in rows)
    # data-paths: how many paths are answered, so that the browser check knows the first figure must be there
    return (f'<table id="answers-table" class="answers" data-paths="{len(a.paths)}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{body}</tbody></table>')
