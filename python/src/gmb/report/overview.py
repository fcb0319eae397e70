# SPDX-License-Identifier: BSD-3-Clause
"""The report's first figure: which library configuration is fastest on which path, and how close to the measured
ceiling, in one HTML table a person takes in at a glance.

Rows are the paths of answer 1, columns the library configurations (NCCL first). Each cell is the path's headline
figure as the answers chose it (bandwidth at the answer's size; a time where the path has only times) with its % of
the ceiling measured at that size. The colour goes from red (0 %) to green (100 % of the ceiling); on a path without
a ceiling it goes by rank within the row. The fastest is marked only where the answers call it fastest (its interval
apart from every other's: answers_data.verdict), so the figure never claims more than the answers do.
"""

from __future__ import annotations

import html

from .answers_data import Answers, Figure, PathAnswer
from .cells import size_text
from .wording import pct_of_ceiling_text, sig3

WINNER = "\u2605 fastest"
CSS = """
table.overview{table-layout:fixed;font-size:14px;margin:.5em 0}
table.overview th{vertical-align:bottom;font-weight:normal;font-size:12px;overflow-wrap:anywhere}
table.overview th.path{width:14em;text-align:left;vertical-align:middle;font-size:13px}
table.overview th b{font-size:14px} table.overview td{text-align:center;padding:4px 3px;line-height:1.25}
table.overview .v{font-weight:bold;font-size:15px} table.overview td.none{color:#777;background:#fafafa}
.overview-key{font-size:13px;color:#444;margin:.2em 0 1em}
"""


def _esc(v) -> str:
    return html.escape(str(v))


def _is_nccl(f: Figure) -> bool:
    base = f.point.base_library if f.point is not None else f.library
    return base.lower().startswith("nccl")


def columns(paths: list[PathAnswer]) -> list[str]:
    """The configurations of every path, NCCL first, then by name."""
    figs = {f.library: f for p in paths for f in p.figures}
    return sorted(figs, key=lambda lib: (not _is_nccl(figs[lib]), lib))


def shade(share: float) -> str:
    """A background colour for a share between 0 (red) and 1 (green), light enough to read dark text on."""
    share = min(max(share, 0.0), 1.0)
    return f"hsl({120 * share:.0f},60%,80%)"


def _share(p: PathAnswer, f: Figure) -> float | None:
    """How good a figure is on its path, 0 to 1: its share of the ceiling, else its rank in the row (the answers
    list figures best first); None for a figure alone on a path without a ceiling (nothing to rank it against)."""
    if f.pct_of_ceiling is not None:
        return f.pct_of_ceiling / 100
    if len(p.figures) < 2:
        return None
    return 1 - p.figures.index(f) / (len(p.figures) - 1)


def _header(name: str) -> str:
    """A configuration's name: the library in bold, what tells its configurations apart below it, breakable."""
    base, sep, rest = name.partition(" ")
    return f"<b>{_esc(base)}</b>" + (f"<br>{_esc(rest).replace(', ', ', <wbr>')}" if sep else "")


def _row_header(p: PathAnswer) -> str:
    what = f"{p.benchmark} at {size_text(p.bytes)}"
    ceiling = f"ceiling {p.ceiling_label or p.ceiling} {sig3(p.ceiling_GBps)} GB/s" if p.ceiling else "no ceiling"
    return f"<th class='path'><b>{_esc(p.path)}</b><br>{_esc(what)}, {_esc(ceiling)}</th>"


def _cell(p: PathAnswer, lib: str) -> str:
    f = next((f for f in p.figures if f.library == lib), None)
    if f is None:
        why = f"not at {size_text(p.bytes)}" if lib in p.not_at_size else "not measured"
        return f"<td class='none'>{_esc(why)}</td>"
    share = _share(p, f)
    style = f" style='background:{shade(share)}'" if share is not None else ""
    lines = [f"<span class='v'>{_esc(sig3(f.value))} {_esc(f.unit)}</span>",
             _esc(pct_of_ceiling_text(f)) if f.pct_of_ceiling is not None else "no ceiling"]
    if f.strategy:
        lines.append(f"via {_esc(f.strategy)}")
    if p.fastest == lib:  # qualified as the answers qualify it, where a figure of the path is from one launch
        lines.append(f"<b>{WINNER}</b>")
    return f"<td{style}>{'<br>'.join(lines)}</td>"


def overview_html(a: Answers) -> str:
    """The first figure: a table of paths by configuration; "" when no path was answered."""
    if not a.paths:
        return ""
    libs = columns(a.paths)
    head = "<th class='path'>path: benchmark at size, ceiling</th>" + "".join(
        f"<th>{_header(lib)}</th>" for lib in libs)
    rows = "".join(f"<tr>{_row_header(p)}{''.join(_cell(p, lib) for lib in libs)}</tr>" for p in a.paths)
    key = ("Each cell: the path's headline figure at the size in its row (bandwidth; a time where the path has "
           "only times) and its % of the ceiling measured at that size (a figure through a staged strategy, or of "
           "several pairs: of its own ceiling, named). Colour: red 0 % to green 100 % of the "
           f"ceiling; by rank within the row where none was measured. {WINNER}: the 95 % interval of its ratio to every "
           "other configuration's figure on that path excludes 1, over 2 launches or more.")
    # a column no wider than a few figures need: a lone configuration does not stretch over the page
    width = min(100, 16 + 14 * len(libs))
    return (f"<figure id='overview'><table class='overview' style='width:{width}%'><thead><tr>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table><figcaption class='overview-key'>{_esc(key)}</figcaption></figure>")
