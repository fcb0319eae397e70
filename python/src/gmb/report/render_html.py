# SPDX-License-Identifier: BSD-3-Clause
"""HTML fragments of the report: a table, and the answers section."""

from __future__ import annotations

import base64
import html

from .answers_data import FEATURE_TOPICS, PRECISION_NOTE, Answers
from .answers_table import answers_table
from .answers_words import feature_sentence, missing_sentence, setting_sentence, strategy_sentence
from .cells import Absent, Table
from .overview import overview_html


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


def _list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>" if items else ""


def answers_html(a: Answers) -> str:
    """The answers as an HTML fragment: <section id="answers"> with lists and tables, every value escaped."""
    out = ['<section id="answers"><h2>Answers</h2>']
    if a.empty:
        out.append(f"<p>{escape(a.empty)}</p>")
        if a.missing:
            out.append("<h3>Not measured</h3>" + _list([missing_sentence(m) for m in a.missing]))
        out.append("</section>")
        return "\n".join(out)
    out.append(overview_html(a))
    out += [f'<p class="warn">{escape(note)}</p>' for note in a.notes]
    if a.paths or a.collectives:
        out.append(answers_table(a))
    out.append("<h3>Where a gmb strategy beats the library's own path</h3>")
    if a.strategies:
        out.append(_list([strategy_sentence(s) for s in a.strategies]))
    else:
        out.append("<p>No gmb strategy was measured.</p>")
    out.append("<h3>Settings that mattered</h3>")
    out.append(_list([setting_sentence(s) for s in a.settings]))
    if a.settings_note:
        out.append(f"<p>{escape(a.settings_note[0].upper() + a.settings_note[1:])}.</p>")
    for topic, heading in FEATURE_TOPICS.items():
        said = [feature_sentence(f) for f in a.features if f.topic == topic]
        if said:
            out.append(f"<h3>{escape(heading)}</h3>" + _list(said))
    if a.missing:
        out.append("<h3>Not measured</h3>" + _list([missing_sentence(m) for m in a.missing]))
    out.append(f'<p class="note">{escape(PRECISION_NOTE)}</p>')
    out.append("</section>")
    return "\n".join(out)
