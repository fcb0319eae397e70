# SPDX-License-Identifier: BSD-3-Clause
"""HTML fragments of the report: a table, and the answers section."""

from __future__ import annotations

import base64
import html

from .answers_data import FEATURE_TOPICS, PRECISION_NOTE, Answers, Figure, PathAnswer
from .cells import Absent, Table, clearly_apart, size_label
from .wording import pct, precision_text, sig3, times, who


def escape(v) -> str:
    """A value as HTML text, None as nothing."""
    return html.escape("" if v is None else str(v))


def shown(v) -> str:
    """A value as the report writes it: never a raw Python True, False or None."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    return "not recorded" if v is None or v == "" else str(v)


class Markup(str):
    """A table cell that is HTML already (the environment's fold), written as it is."""


def _cell(v) -> str:
    if isinstance(v, Markup):
        return f"<td>{v}</td>"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f'<td class="num">{escape(v)}</td>'
    if isinstance(v, Absent):  # no value: the reason, set apart from values
        return f'<td class="why">{escape(v)}</td>'
    return f"<td>{escape(shown(v))}</td>"


def table_html(t: Table, table_id: str = "") -> str:
    out = [f'<h3>{escape(t.title)}</h3>']
    if t.note:
        out.append(f'<p class="note">{escape(t.note)}</p>')
    if not t.rows:
        out.append('<p class="note">(no rows)</p>')
        return "\n".join(out)
    out.append(f'<table id="{escape(table_id)}"><thead><tr>' + "".join(f"<th>{escape(c)}</th>" for c in t.columns)
               + "</tr></thead><tbody>")
    for r in t.rows:
        out.append(f"<tr>{''.join(_cell(v) for v in r)}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def figure_html(fid: str, title: str, png: bytes) -> str:
    """A figure embedded in the page as base64 PNG, with its title as caption."""
    b64 = base64.b64encode(png).decode()
    return (f"<figure id='fig-{fid}'><img alt='{escape(title)}' src='data:image/png;base64,{b64}'>"
            f"<figcaption>{escape(title)}</figcaption></figure>")


def _role(p: PathAnswer, f: Figure) -> str:
    """What answer 1 says of one configuration, for its table row."""
    best = p.figures[0]
    if len(p.figures) == 1:
        return "only one measured"
    if f is best:
        return (f"fastest, {times(p.ratio)} the slowest" if p.fastest and p.ratio else "fastest" if p.fastest
                else "best, within precision of another")
    if f is p.figures[-1] and p.slowest:
        return "slowest"
    return "" if clearly_apart(best.point, f.point) else "within precision of the best"


def _num(v: float | None, why: str = "not measured") -> str:
    """A numeric cell, or the reason it holds no number (no cell of the report is left empty)."""
    return f'<td class="num">{escape(sig3(v))}</td>' if v is not None else f"<td>{escape(why)}</td>"


def _text(v: str, why: str) -> str:
    return f"<td>{escape(v or why)}</td>"


def _list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>" if items else ""


def answers_html(a: Answers) -> str:
    """The answers as an HTML fragment: <section id="answers"> with lists and tables, every value escaped."""
    out = ['<section id="answers"><h2>Answers</h2>']
    if a.empty:
        out.append(f"<p>{escape(a.empty)}</p>")
        if a.missing:
            out.append("<h3>Not measured</h3>" + _list([m.sentence for m in a.missing]))
        out.append("</section>")
        return "\n".join(out)
    out.append(f'<p class="note">{escape(PRECISION_NOTE)}</p>')
    out += [f'<p class="warn">{escape(note)}</p>' for note in a.notes]
    if a.paths:
        out.append("<h3>Which library, per path</h3>")
        out.append(_list([p.sentence for p in a.paths]))
        out.append('<table id="answers-paths"><thead><tr>' + "".join(
            f"<th>{escape(c)}</th>" for c in ("path", "benchmark", "size", "configuration", "figure", "unit",
                                          "precision", "% of ceiling", "ceiling", "latency (us)", "latency size",
                                          "answer")) + "</tr></thead><tbody>")
        for p in a.paths:
            for f in p.figures:
                role = _role(p, f)
                ceiling = f"{p.ceiling} {sig3(p.ceiling_GBps)} GB/s" if p.ceiling else p.no_ceiling
                out.append("<tr>" + "".join([
                    f"<td>{escape(p.path)}</td>", f"<td>{escape(p.benchmark)}</td>", f"<td>{escape(size_label(p.bytes))}</td>",
                    f"<td>{escape(who(f))}</td>", _num(f.value), f"<td>{escape(f.unit)}</td>",
                    _text(precision_text(f.precision, f.capped), "not known"),
                    _num(f.pct_of_ceiling, p.no_ceiling or "no ceiling") if f.pct_of_ceiling is None else
                    f'<td class="num">{escape(pct(f.pct_of_ceiling))}</td>',
                    _text(ceiling, "no ceiling"), _num(f.latency_us),
                    f"<td>{escape(size_label(f.latency_bytes) + ' B') if f.latency_bytes else 'not measured'}</td>",
                    _text(role, "in between")]) + "</tr>")
        out.append("</tbody></table>")
    out.append("<h3>Where a gmb strategy beats the library's own path</h3>")
    if a.strategies:
        out.append(_list([s.sentence for s in a.strategies]))
    else:
        out.append("<p>No gmb strategy was measured.</p>")
    out.append("<h3>Settings that mattered</h3>")
    out.append(_list([s.sentence for s in a.settings]))
    if a.settings_note:
        out.append(f"<p>{escape(a.settings_note[0].upper() + a.settings_note[1:])}.</p>")
    if a.collectives:
        out.append("<h3>Collectives (bus bandwidth)</h3>")
        out.append(_list([c.sentence for c in a.collectives]))
        out.append('<table id="answers-collectives"><thead><tr>' + "".join(
            f"<th>{escape(c)}</th>" for c in ("operation", "ranks", "memory", "size (total)", "configuration",
                                          "bus bandwidth (GB/s)", "precision", "answer")) + "</tr></thead><tbody>")
        for c in a.collectives:
            for f in c.figures:
                role = ("fastest" if f.library == c.fastest else "slowest" if f.library == c.slowest else
                        "within precision of the others" if c.fastest is None else "")
                if role == "fastest" and c.ratio:
                    role += f", {times(c.ratio)} the slowest"
                out.append("<tr>" + "".join([
                    f"<td>{escape(c.operation)}</td>", f'<td class="num">{escape(c.ranks)}</td>', f"<td>{escape(c.memory)}</td>",
                    f"<td>{escape(size_label(c.bytes))}</td>", f"<td>{escape(f.library)}</td>", _num(f.value),
                    _text(precision_text(f.precision, f.capped), "not known"), _text(role, "in between")]) + "</tr>")
        out.append("</tbody></table>")
    for topic, heading in FEATURE_TOPICS.items():
        said = [f.sentence for f in a.features if f.topic == topic]
        if said:
            out.append(f"<h3>{escape(heading)}</h3>" + _list(said))
    if a.missing:
        out.append("<h3>Not measured</h3>" + _list([m.sentence for m in a.missing]))
    out.append("</section>")
    return "\n".join(out)
