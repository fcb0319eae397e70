# SPDX-License-Identifier: BSD-3-Clause
"""The report's Settings section: what `gmb tune` answered (the store's meta "tune", the JSON of tune.json). Per
library configuration and path, the settings recommended per size range with their gain over the defaults, both
figures with their intervals and the ready launcher and export lines; every knob value tried, by verdict; the
configurations of one installation compared at their defaults; the knobs offered and not offered; a figure of each
knob value's gain."""

from __future__ import annotations

import json

from ..errors import UsageError
from ..results.model import Results
from ..results.tune_answer import VERDICTS
from .cells import Absent, Table, size_label
from .render_html import Markup, escape, table_html
from .wording import sig3, times

TUNE_META = "tune"
DEFAULTS = "defaults"
COMBINED = "combined"
WITH_WHY = ("broken", "not measured")  # verdicts said with the value's why
BASELINE = "baseline"
# what the section reads of the answer's top level
_ANSWER_KEYS = ("budget_s", "used_s", "rounds", "launches", "cut_short", "min_launches", "races")


def tune_answer(results: Results) -> dict | None:
    """The answer `gmb tune` stored with these results, None when there is none."""
    text = results.meta.get(TUNE_META)
    if not text:
        return None
    try:
        found = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"the store's tune answer (meta '{TUNE_META}') is not JSON: {exc}") from None
    missing = [k for k in _ANSWER_KEYS if k not in found] if isinstance(found, dict) else list(_ANSWER_KEYS)
    if missing or not isinstance(found["races"], list):
        raise UsageError(f"the store's tune answer (meta '{TUNE_META}') is not an answer of gmb tune: without "
                         f"{', '.join(missing) or 'a list of races'}")
    return found


def gain_text(gain: float) -> str:
    """A gain over the defaults (a ratio, above 1 better) as a signed percentage: 1.121 -> "+12.1 %"."""
    return f"{round(100 * (gain - 1), 1) + 0.0:+.1f} %"  # + 0.0: no "-0.0 %" for a loss too small to show


def interval_text(f: list, unit: str = "") -> str:
    """[median, low, high, launches] as "12.1 GB/s [11.8, 12.4]" (the interval as the report writes others)."""
    value = f"{sig3(f[0])} {unit}".rstrip()
    return f"{value} (no interval)" if f[1] is None or f[2] is None else f"{value} [{sig3(f[1])}, {sig3(f[2])}]"


def versus_text(arm: list, defaults: list, unit: str) -> str:
    """An arm's figure against the defaults': "12.1 GB/s [11.8, 12.4] vs 8.50 [8.30, 8.70], 3 launches each"."""
    launches = f"{arm[3]} launches each" if arm[3] == defaults[3] else f"{arm[3]} and {defaults[3]} launches"
    return f"{interval_text(arm, unit)} vs {interval_text(defaults)}, {launches}"


def span_text(low: int, high: int) -> str:
    return size_label(low) if low == high else f"{size_label(low)} - {size_label(high)}"


def arm_label(arm: dict) -> str:
    """A knob value as "NAME=VALUE"; the combination of the winners with its settings."""
    if arm["key"] == COMBINED:
        return f"{COMBINED}: " + " ".join(f"{k}={v}" for k, v in arm["settings"].items())
    return arm["key"]


def race_label(race: dict) -> str:
    return f"{race['configuration']}, {race['path']}"


def _code_lines(lines: list[str], css: str = "") -> Markup:
    cls = f" class='{css}'" if css else ""
    return Markup("<br>".join(f"<code{cls}>{escape(line)}</code>" for line in lines))


def summary_html(answer: dict) -> str:
    """One line on the search itself: its budget and what it used, launches and rounds, whether the budget ran out;
    the configurations or paths it did not search and why."""
    line = (f"The search used {answer['used_s']:.0f} s of its {answer['budget_s']:.0f} s budget: "
            f"{answer['launches']} launches in {answer['rounds']} rounds, at least {answer['min_launches']} launches "
            "per value before it is called better, worse or no different from the defaults.")
    if answer["cut_short"]:
        line += " The budget ran out: the last round was cut short."
    out = f"<p>{escape(line)}</p>"
    skipped = answer.get("skipped") or []
    if skipped:
        out += "<p class='note'>Not searched:</p><ul>" + "".join(
            f"<li>{escape(': '.join(str(part) for part in s))}</li>" for s in skipped) + "</ul>"
    return out


def recommendations_table(answer: dict) -> Table:
    """Per configuration, path and size range: the settings recommended (or the defaults), their gain at the size
    where it is largest with both figures, and the lines that set them."""
    rows = []
    for race in answer["races"]:
        unit = race["unit"]
        if race.get("unanswered"):
            rows.append([race["configuration"], f"{race['path']} ({race['benchmark']}, {unit})", Absent("none"),
                         Absent(race["unanswered"]), Absent("-"), Absent("-"), Absent("none")])
        for r in race["recommendation"]:
            where = [race["configuration"], f"{race['path']} ({race['benchmark']}, {unit})",
                     span_text(r["low"], r["high"])]
            if r["arm"] == DEFAULTS:
                rows.append(where + ["defaults: no setting beat them", Absent("none"), Absent("-"),
                                     Absent("none needed")])
                continue
            best = max(r["sizes"], key=lambda s: s["gain"])
            figures = versus_text(best["arm"], best["defaults"], unit) if best["arm"] else Absent("not measured")
            rows.append(where + [_code_lines([f"{k}={v}" for k, v in r["settings"].items()]), _gain_cell(r, best),
                                 figures, _code_lines([r["command"], r["export"]], "ready")])
    return Table("Recommended settings", ["configuration", "path (benchmark, unit)", "sizes", "recommended settings",
                                          "gain over the defaults", "settings vs defaults [interval]",
                                          "ready lines (launcher, export)"], rows,
                 "Per size range, the knob value (or the winners combined) that fresh launches, which played no part "
                 "in selecting it, confirmed better than the defaults (docs/tune.md); the gain is the confirmation's, "
                 "over the sizes it holds, with its interval (a search before the confirmation: the gain at the size "
                 "where it was largest). The launcher line "
                 "runs the configuration with the settings (append the program); the export line sets them for any "
                 "launch.")


def _gain_cell(recommendation: dict, best: dict) -> str:
    """The confirmed gain over its span with its interval; a search before the confirmation: its largest gain."""
    r = recommendation
    if r.get("gain") is None or not r.get("span"):
        return f"{gain_text(best['gain'])} at {size_label(best['bytes'])}"
    low, high = r["span"]
    over = size_label(low) if low == high else f"{size_label(low)} - {size_label(high)}"
    interval = "" if r.get("gain_low") is None else f" [{gain_text(r['gain_low'])}, {gain_text(r['gain_high'])}]"
    return f"{gain_text(r['gain'])}{interval} over {over}"


def change(arm: dict) -> tuple[float, int | None]:
    """A knob value's largest change against the defaults (better or worse, a ratio) and its size; its best gain
    where an older answer does not say it."""
    if "change" in arm:
        return arm["change"], arm["change_bytes"]
    return arm["best_gain"], arm["best_bytes"]


def _value_text(arm: dict) -> str:
    """A knob value with its largest change against the defaults, and for a broken one why."""
    text = arm_label(arm)
    if arm["verdict"] in WITH_WHY:
        return f"{text}: {arm['why'] or 'no reason recorded'}"
    ratio, at = change(arm)
    if at is None:
        return f"{text} (not measured)"
    launches = f", {arm['launches']} launch{'es' if arm['launches'] != 1 else ''}"
    return f"{text} ({gain_text(ratio)} at {size_label(at)}{launches})"


def _verdict_rank(word: str) -> int:
    """Where a verdict comes in the section: in the order of VERDICTS, a word not listed there last."""
    return VERDICTS.index(word) if word in VERDICTS else len(VERDICTS)


def verdicts_table(answer: dict) -> Table:
    """Per configuration and path, the knob values tried grouped by verdict, each with its best gain."""
    rows = []
    for race in answer["races"]:
        groups: dict[str, list[dict]] = {}
        for arm in race["arms"]:
            if arm["verdict"] != BASELINE:
                groups.setdefault(arm["verdict"], []).append(arm)
        where = [race["configuration"], race["path"]]
        if race["note"]:
            rows.append(where + ["ended early", race["note"]])
        for word in sorted(groups, key=_verdict_rank):
            rows.append(where + [word, Markup("<br>".join(escape(_value_text(a)) for a in groups[word]))])
        if not groups:
            rows.append(where + [Absent("none"), Absent(race.get("unanswered") or "no knob value was tried")])
    return Table("Knob values by verdict", ["configuration", "path", "verdict", "values (largest change at its size, "
                                                                                "launches)"], rows,
                 "better / worse / no difference: the value's interval against the defaults' at some size, after "
                 f"{answer['min_launches']} launches or more; cut early: the search stopped racing it sooner (what "
                 "its launches suggested, no claim); broken: its launches failed or gave wrong results; not measured: "
                 "no figure of it beside the defaults', and why.")


def comparisons_table(answer: dict) -> Table:
    """The configurations of one installation (Open MPI's pml ob1 and ucx, NCCL over it) against each other at their
    defaults, best first: ">" where one is proven ahead of the next, "~" where no claim is made."""
    rows = []
    for c in answer.get("comparisons") or []:
        ranking = c["ranking"]
        figures = Markup("<br>".join(f"{escape(e['configuration'])}: {escape(interval_text(e['figure'], c['unit']))}"
                                     for e in ranking))
        order = "".join((("" if not k else " > " if e["configuration"] in ranking[k - 1]["ahead_of"] else " ~ ")
                         + e["configuration"] + ("" if not k else f" ({times(e['behind'])} behind)"))
                        for k, e in enumerate(ranking))
        rows.append([c["path"], size_label(c["bytes"]), figures, order, min(e["figure"][3] for e in ranking)])
    return Table("Configurations compared at their defaults",
                 ["path", "size", "figures [interval]", "order", "launches (fewest)"], rows,
                 "Configurations of one installation (e.g. Open MPI with pml ob1 and with ucx), each at its defaults, "
                 "best first: \">\" where one is proven ahead of the next over enough launches, \"~\" "
                 "where the difference is not proven or too few launches allow no claim.")


def _offers_table(conf: dict) -> Table:
    rows = []
    for o in conf["offers"]:
        together = ", with " + " ".join(f"{k}={v}" for k, v in o["together"].items()) if o.get("together") else ""
        tried = (Absent(f"not offered: {o['refused']}") if o["refused"] else
                 ", ".join(o["values"]) + together if o["values"] else Absent("no value besides the default"))
        rows.append([Markup(f"<code>{escape(o['knob'])}</code>"), o["layer"], ", ".join(o["paths"]), o["why"],
                     o["default"] if o["default"] is not None else Absent("not known"), tried,
                     o["note"] or Absent(o["source"])])
    return Table(f"Knobs of {conf['name']}", ["knob", "layer", "paths", "what it changes", "default", "values tried",
                                             "found by"], rows)


def offers_html(answer: dict) -> str:
    """Per configuration, behind a fold: each knob, its default and the values tried, or why it was not offered."""
    out = ["<h3>Knobs offered</h3>"]
    for i, conf in enumerate(answer.get("configurations") or []):
        offered = sum(1 for o in conf["offers"] if not o["refused"])
        summary = (f"{conf['name']}: {offered} knob{'s' if offered != 1 else ''} offered, "
                   f"{len(conf['offers']) - offered} not offered")
        out.append(f"<details><summary>{escape(summary)}</summary>{table_html(_offers_table(conf), f'tune-offers-{i}')}"
                   "</details>")
    return "\n".join(out)


def tuned_html(answer: dict) -> str:
    tuned = answer.get("tuned") or []
    if not tuned:
        return ""
    items = [f"<li><code>{escape(t['name'])}</code>: {escape(t['base'])} with "
             + " ".join(f"<code>{escape(k)}={escape(v)}</code>" for k, v in t["settings"].items())
             + f" (for {escape(', '.join(t['paths']))})</li>" for t in tuned]
    return ("<p class='note'>Tuned configurations (<code>gmb run --tuned</code> measures them beside the "
            "defaults):</p><ul>" + "".join(items) + "</ul>")


def answers_html(answer: dict) -> str:
    """A search's report opens with its answer: the search in a line, the settings recommended per configuration,
    path and size range (or why there is none), the tuned configurations. The records below it are every knob value
    measured as a configuration of its own, most of them cut after a launch or two: figures, never claims, so the
    answers drawn from a campaign's records are not drawn from them."""
    return "\n".join([
        "<section id=\"answers\"><h2>Answers</h2>", summary_html(answer),
        table_html(recommendations_table(answer), "tune-recommendations"), tuned_html(answer),
        "<p class='note'>The tables and figures below show every knob value the search launched as a configuration of "
        "its own (named by the setting it changes), most of them in one or two launches: figures, not claims. What "
        "they prove is above and in the Settings section.</p></section>"])


def settings_section(answer: dict, figure: str) -> str:
    """The Settings section of an answer of `gmb tune`, after its recommendations (answers_html): every knob value
    tried by verdict, the figure of their gains (HTML: the figure, or why there is none), the configurations
    compared at their defaults, the knobs offered."""
    parts = ["<section id='tune'><h2>Settings</h2>", table_html(verdicts_table(answer), "tune-verdicts"), figure]
    if answer.get("comparisons"):
        parts.append(table_html(comparisons_table(answer), "tune-comparisons"))
    parts += [offers_html(answer), "</section>"]
    return "\n".join(parts)
