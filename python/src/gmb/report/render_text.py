# SPDX-License-Identifier: BSD-3-Clause
"""Plain text for a terminal: the answers (the end of `gmb run`) and the tables (`gmb tables`)."""

from __future__ import annotations

import textwrap

from .answers_data import FEATURE_TOPICS, Answers, CollectiveAnswer, MissingAnswer
from .answers_words import (collective_sentence, feature_sentence, missing_sentence, path_sentence,
                            setting_sentence, strategy_sentence)
from .cells import Table, size_label
from .wording import precision_text, short, sig3

WIDTH = 100  # text columns


_GLUED = (" %", " GB/s", " us", " B ", " B)", " B,", " B;")


def _wrap(line: str, indent: str = "  ") -> list[str]:
    """Wrapped at WIDTH columns, a number never parted from its unit."""
    for unit in _GLUED:
        line = line.replace(unit, "\xa0" + unit[1:])
    return [w.replace("\xa0", " ") for w in textwrap.wrap(line, WIDTH, initial_indent=indent,
                                                          subsequent_indent=indent + "    ",
                                                          break_on_hyphens=False, break_long_words=False)]


def answers_text(a: Answers) -> str:
    """The answers as plain text for a terminal (the end of `gmb run`), lines of at most 100 columns."""
    if a.empty:  # one line; what was not measured, and why, under it
        return "\n".join([a.empty] + [line for m in a.missing for line in _wrap(_missing_line(m))])
    lines = ["== Answers (geometric means over launches; +-x %: 95 % interval; fastest: ratio proven)"]
    for note in a.notes:
        lines += _wrap(note, indent="")
    if a.paths:
        lines.append("Which library, per path (the library's own path):")
        for p in a.paths:
            lines += _wrap(path_sentence(p))
    if a.strategies:
        lines.append("Where a gmb strategy beats the library's own path:")
        beaten = [s for s in a.strategies if s.beats or s.direct_GBps is None]
        for s in beaten:
            lines += _wrap(strategy_sentence(s))
        rest = [s for s in a.strategies if not s.beats and s.direct_GBps is not None]
        if rest:
            lines += _wrap("not beaten: " + "; ".join(
                f"{s.path}, {s.library} ({s.strategy} {sig3(s.strategy_GBps)} vs {sig3(s.direct_GBps)} GB/s at "
                f"{size_label(s.bytes)}" + (")" if s.ratio else ", not proven different)") for s in rest))
        if not beaten:
            lines.append("  none: the library's own path is the fastest wherever a strategy was measured")
    lines.append("Settings that mattered:" + (f" {a.settings_note}" if a.settings_note and not a.settings else ""))
    for s in a.settings:
        lines += _wrap(short(setting_sentence(s), 300))
    if a.settings and a.settings_note:
        lines += _wrap(a.settings_note)
    if a.collectives:
        lines.append("Collectives (bus bandwidth):")
        lines += [line for text in _collective_lines(a.collectives) for line in _wrap(text)]
    for topic, heading in FEATURE_TOPICS.items():
        said = [feature_sentence(f) for f in a.features if f.topic == topic]
        if said:
            lines.append(f"{heading}:")
            lines += [line for text in said for line in _wrap(text)]
    if a.missing:
        lines.append("Not measured:")
        for m in a.missing:
            lines += _wrap(_missing_line(m))
    return "\n".join(lines)


def _missing_line(m: MissingAnswer) -> str:
    """The sentence with its cause shortened for a terminal (the report has it whole)."""
    cause, n = " ".join(m.cause.split()), 150
    mark = cause.find("[first library error:")  # what the library said first: usually the cause, kept
    if len(cause) > n and mark > 0:
        tail = short(cause[mark:], n - 40)
        cause = short(cause[:mark], n - len(tail)) + " " + tail
    return missing_sentence(m, short(cause, n + 10))


def _collective_lines(collectives: list[CollectiveAnswer]) -> list[str]:
    """One line per answer, except that the operations one configuration alone measured at one rank count, memory
    and size share a line."""
    alone: dict[tuple, list[CollectiveAnswer]] = {}
    for c in collectives:
        if len(c.figures) == 1:
            alone.setdefault((c.figures[0].library, c.ranks, c.memory, c.bytes), []).append(c)
    out = []
    for c in collectives:
        if len(c.figures) > 1:
            out.append(collective_sentence(c))
            continue
        key = (c.figures[0].library, c.ranks, c.memory, c.bytes)
        group = alone.pop(key, None)
        if group is None:
            continue  # already said with the first of its group
        if len(group) == 1:
            out.append(collective_sentence(c))
            continue
        lib, ranks, memory, nbytes = key
        listed = ", ".join(f"{g.operation} {sig3(g.figures[0].value)} GB/s "
                           f"({precision_text(g.figures[0].precision, g.figures[0].capped)})" for g in group)
        other = "MPI" if c.nccl else "NCCL"
        out.append(f"{lib}, {ranks} ranks, {memory} memory, at {size_label(nbytes)}: {listed}; no {other} figure "
                   f"to compare with")
    return out


def table_text(table: Table) -> str:
    """A table as aligned columns under its title."""
    widths = [max(len(str(c)), *(len(str(r[i])) for r in table.rows)) if table.rows else len(str(c))
              for i, c in enumerate(table.columns)]
    lines = [table.title, "  ".join(str(c).ljust(w) for c, w in zip(table.columns, widths))]
    for r in table.rows:
        lines.append("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))
    return "\n".join(lines)
