# SPDX-License-Identifier: BSD-3-Clause
"""What `gmb tune` answers, as data (tune.json, the store's meta "tune": what the report's Settings section reads),
as text, and as the campaign that reproduces it: per configuration and path, the settings recommended per size
range as a ready command line, their gain over the defaults with both intervals, the knobs that made no difference,
those that broke correctness; per installation and path, how its configurations (Open MPI's pmls) compare at their
defaults; the tuned configurations `gmb run --tuned` measures beside the defaults."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from pathlib import Path

from .catalogue import configuration_settings, format_offers
from .paths import ROUND_PRECISION, round_options
from .confirmation import CONFIRM_LAUNCHES, proven_ahead, proven_sizes, recommendation, tried, verdict
from .races import DEFAULTS, Race, best_gain, largest_change, unmeasured
from .selection import MIN_LAUNCHES, cut_saw
from ..results.claim_checks import bonferroni_level
from ..results.tune_answer import VERDICTS
from ..campaign.spec import Campaign
from ..report.cells import size_label
from ..engine import configurations as confs_mod
from ..engine.configurations import Configuration
from ..machine.knobs import Offer

UNITS = {"bw": "GB/s", "busbw": "GB/s", "t": "us", "rate": "M messages/s"}
REPRODUCE_REPETITIONS = CONFIRM_LAUNCHES  # as many launches as the search confirmed it with: as able to confirm it


def _figures(arm) -> dict[str, list]:
    return {str(size): [f.median, f.low, f.high, f.launches] for size, f in sorted(arm.figures.items())}


def ready_lines(conf: Configuration, settings: dict[str, str]) -> dict[str, str]:
    """The configuration with ``settings`` on top, as its launcher's command line (before the program) and as an
    ``export`` line."""
    lib = conf.library
    every = {**lib.env, **settings}
    command = [Path(lib.launcher_path).name, *lib.launcher_args, *conf.launcher.setting_arguments(every)]
    export = {**configuration_settings(conf), **settings}
    return {"command": shlex.join(command) + " ...",
            "export": "export " + " ".join(f"{k}={shlex.quote(v)}" for k, v in export.items())}


def unanswered(race: Race, ended: str) -> str:
    """Why a race recommends nothing, not even the defaults ("" where it does): nothing was tried on it, or its
    defaults were never measured (``ended``: why the search ended)."""
    if race.untried:
        return f"nothing tried: {race.untried}"
    if not race.defaults.figures:
        return f"not measured: {race.note or ended + ' before its defaults were measured'}"
    return ""


def _race(race: Race, conf: Configuration, ended: str) -> dict:
    ranges = []
    nothing = unanswered(race, ended)
    for r in [] if nothing else recommendation(race):
        entry = {"low": r.low, "high": r.high, "arm": r.arm, "settings": r.settings,
                 "sizes": [{"bytes": size, "gain": g, "arm": [f.median, f.low, f.high, f.launches] if f else None,
                            "defaults": [d.median, d.low, d.high, d.launches]} for size, g, f, d in r.sizes]}
        if r.arm != DEFAULTS:  # the gain is the confirmation's, over the sizes of its span, with its interval
            entry.update(ready_lines(conf, r.settings))
            entry.update({"gain": r.gain, "gain_low": r.gain_low, "gain_high": r.gain_high, "span": list(r.span),
                          "worse_sizes": list(r.worse)})
        ranges.append(entry)
    arms = []
    for a in race.arms:
        g, at = best_gain(race, a)
        change, change_at = largest_change(race, a)
        better, worse = proven_sizes(a)
        arms.append({"key": a.key, "knob": a.knob, "settings": a.settings, "state": a.state, "why": a.why,
                     "verdict": "baseline" if a.key == DEFAULTS else verdict(race, a), "best_gain": g,
                     "best_bytes": at, "change": change, "change_bytes": change_at, "launches": a.launches,
                     "saw": "" if a.key == DEFAULTS else cut_saw(race, a), "selected": a.selected,
                     "fresh_launches": a.fresh_launches, "better_sizes": better, "worse_sizes": worse,
                     "figures": _figures(a)})
    return {"configuration": race.configuration, "path": race.path, "kind": race.kind, "metric": race.metric,
            "unit": UNITS.get(race.metric, ""), "higher_is_better": race.higher_is_better,
            "benchmark": race.block.benchmarks[0], "memory": race.block.memory[0] or None,
            "operation": (race.block.operations or [None])[0], "sizes": race.sizes, "note": race.note,
            "unanswered": nothing, "identity": race.identity, "tried": tried(race), "arms": arms,
            "recommendation": ranges}


def _comparisons(races: list[Race], confs: dict[str, Configuration]) -> list[dict]:
    """Per installation with several configurations on a path (Open MPI's pml ob1 and ucx, NCCL over it) and per
    size: the configurations at their defaults from best to worst, each with how far behind the best it is and the
    configurations it is proven ahead of (confirmation.proven_ahead over each one's launches, measured in MIN_LAUNCHES
    launches or more; the level Bonferroni-corrected over every pair and size compared, so that all the claims of
    the table hold together at 95 %)."""
    groups: dict[tuple[str, str], list[Race]] = {}
    for race in races:
        groups.setdefault((confs[race.configuration].library.identity, race.path), []).append(race)
    compared = [g for g in groups.values() if len(g) > 1]
    tests = sum(len(g) * (len(g) - 1) // 2 * len(set.intersection(*(set(r.sizes) for r in g))) for g in compared)
    level = bonferroni_level(tests)
    out = []
    for group in compared:
        path = group[0].path
        higher = group[0].higher_is_better
        for size in sorted(set.intersection(*(set(r.sizes) for r in group))):
            figs = sorted(((r.configuration, r.defaults.figures[size]) for r in group),
                          key=lambda cf: cf[1].median, reverse=higher)
            best = figs[0][1]
            sure = {c for c, f in figs if f.launches >= MIN_LAUNCHES}
            out.append({"path": path, "bytes": size, "unit": UNITS.get(group[0].metric, ""), "best": figs[0][0],
                        "ranking": [{"configuration": c, "figure": [f.median, f.low, f.high, f.launches],
                                     "behind": (best.median / f.median if higher else f.median / best.median)
                                     if f.median > 0 else None,
                                     "ahead_of": [o for o, g in figs
                                                  if {c, o} <= sure and proven_ahead(f, g, higher, level)]}
                                    for c, f in figs]})
    return out


def ordering(c: dict) -> str:
    """A comparison in a line: "a 320 GB/s > b 146 (2.19x behind) ~ c 140 (2.29x behind)", ">" where the one before
    is proven ahead (confirmation.proven_ahead), "~" where no claim can be made."""
    out = ""
    for k, entry in enumerate(c["ranking"]):
        if k:
            out += " > " if entry["configuration"] in c["ranking"][k - 1]["ahead_of"] else " ~ "
        out += f"{entry['configuration']} {entry['figure'][0]:.4g}" + (f" {c['unit']}" if not k else
                                                                         f" ({entry['behind']:.2f}x behind)")
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")


def _tuned(race_entries: list[dict]) -> list[dict]:
    """Per configuration, each distinct set of recommended settings as a configuration of its own: "<name>-tuned"
    where there is one, "<name>-tuned-<first path>" where paths recommend different sets."""
    by_conf: dict[str, list[tuple[dict, str]]] = {}
    for race in race_entries:
        for r in race["recommendation"]:
            if r["arm"] != DEFAULTS:
                by_conf.setdefault(race["configuration"], []).append((r["settings"], race["path"]))
    out = []
    for conf, found in by_conf.items():
        sets: dict[str, tuple[dict, list[str]]] = {}
        for settings, path in found:
            key = repr(sorted(settings.items()))
            sets.setdefault(key, (settings, []))[1].append(path)
        for settings, paths in sets.values():
            paths = list(dict.fromkeys(paths))
            name = f"{conf}-tuned" if len(sets) == 1 else f"{conf}-tuned-{_slug(paths[0])}"
            out.append({"name": name, "base": conf, "settings": settings, "paths": paths})
    return out


def answer(races: list[Race], confs: list[Configuration], all_offers: dict[str, list[Offer]], skipped: list,
           budget_s: float, used_s: float, rounds: int, launches: int, cut_short: bool, ended: str,
           stopped: str | None = None) -> dict:
    """The whole answer as JSON-able data (``ended``: why the search ended, said of what it did not measure;
    ``stopped``: why it ended before its time, a signal or a failure, if it did)."""
    by_name = {c.name: c for c in confs_mod.runnable(confs)}
    for race in races:
        unmeasured(race, ended)
    entries = [_race(race, by_name[race.configuration], ended) for race in races]
    return {"budget_s": budget_s, "used_s": round(used_s, 1), "rounds": rounds, "launches": launches,
            "cut_short": cut_short or stopped is not None, "stopped": stopped, "min_launches": MIN_LAUNCHES,
            "confirm_launches": CONFIRM_LAUNCHES,
            "races_measured": sum(bool(e["sizes"]) for e in entries),  # races whose defaults were measured
            "precision": [p for p, _ in ROUND_PRECISION],
            "configurations": [{"name": name, "offers": [_offer(o) for o in offs]}
                               for name, offs in all_offers.items()],
            "skipped": [list(s) for s in skipped], "races": entries,
            "comparisons": _comparisons(races, by_name), "tuned": _tuned(entries)}


def _offer(o: Offer) -> dict:
    k = o.knob
    return {"knob": k.name, "layer": k.layer, "paths": list(k.paths), "why": k.why, "default": o.default,
            "values": list(o.values), "refused": o.refused, "note": o.note, "source": k.source,
            "together": dict(k.together)}


def offers_text(conf: Configuration, all_offers: list[Offer]) -> list[str]:
    return format_offers(f"{conf.name} ({conf.launcher.name})", all_offers)


def _fig(f: list | None, unit: str) -> str:
    return "-" if not f else f"{f[0]:.4g} {unit} [{f[1]:.4g}-{f[2]:.4g}, {f[3]} launches]"


def _race_title(race: dict) -> str:
    what = {"busbw": "bus bandwidth", "t": "time", "rate": "message rate"}.get(race["metric"], "bandwidth")
    return f"{race['configuration']}, {race['path']} ({race['benchmark']} {what}, {race['unit']})"


def sizes_text(sizes: list[int], every: list[int]) -> str:
    """Sizes as ranges of the race's sizes (``every``): "8 - 64K, 4M"."""
    runs: list[list[int]] = []
    for size in sorted(sizes):
        if runs and every.index(size) == every.index(runs[-1][-1]) + 1:
            runs[-1].append(size)
        else:
            runs.append([size])
    return ", ".join(size_label(r[0]) + ("" if len(r) == 1 else f" - {size_label(r[-1])}") for r in runs)


def gain_text(r: dict) -> str:
    """A confirmed value's gain over its span, with its interval: "+10.2 % [+4.1, +16.6] over 1M - 4M"."""
    interval = "" if r["gain_low"] is None else \
        f" [{100 * (r['gain_low'] - 1):+.1f}, {100 * (r['gain_high'] - 1):+.1f}]"
    span = size_label(r["span"][0]) + ("" if r["span"][0] == r["span"][1] else f" - {size_label(r['span'][1])}")
    return f"{100 * (r['gain'] - 1):+.1f} %{interval} over {span}"


def _recommendation_lines(race: dict) -> list[str]:
    """A race's answer: why it has none, or per size range the defaults or the settings recommended, with the gain
    its confirmation launches measured, both figures and the ready lines."""
    if race.get("unanswered"):
        return [f"  {_race_title(race)}: {race['unanswered']}"]
    lines = [f"  {_race_title(race)}:"] + ([f"    not searched to the end: {race['note']}"] if race["note"] else [])
    for r in race["recommendation"]:
        span = size_label(r["low"]) + ("" if r["low"] == r["high"] else f" - {size_label(r['high'])}")
        if r["arm"] == DEFAULTS:
            lines.append(f"    {span}: the defaults (no value tried was confirmed better)")
            continue
        best = max(r["sizes"], key=lambda s: s["gain"])
        worse = f"; proven WORSE at {sizes_text(r['worse_sizes'], race['sizes'])}" if r.get("worse_sizes") else ""
        lines.append(f"    {span}: {r['arm']}  {gain_text(r)} (confirmation launches; at "
                     f"{size_label(best['bytes'])} {_fig(best['arm'], race['unit'])} vs defaults "
                     f"{_fig(best['defaults'], race['unit'])}){worse}")
        lines += [f"        {r['command']}", f"        {r['export']}"]
    return lines


def _arm_text(race: dict, a: dict) -> str:
    """A knob value as its verdict lists it: with the sizes of a mixed one, why one was not confirmed, what the cut
    saw."""
    if a["verdict"] == "mixed":
        return (f"{a['key']} (better at {sizes_text(a['better_sizes'], race['sizes'])}, worse at "
                f"{sizes_text(a['worse_sizes'], race['sizes'])})")
    if a["verdict"] in ("better", "worse"):
        sizes = a["better_sizes"] if a["verdict"] == "better" else a["worse_sizes"]
        return f"{a['key']} (at {sizes_text(sizes, race['sizes'])})"
    if a["verdict"] == "selected, not confirmed":
        return f"{a['key']} ({a['why'] or _not_confirmed(race, a)})"
    if a["verdict"].startswith("cut early"):
        return f"{a['key']} ({a['saw']})" if a["saw"] else a["key"]
    return a["key"]


def _not_confirmed(race: dict, a: dict) -> str:
    return (f"{a['fresh_launches']} fresh launches: proven better at no size, corrected for the {race['tried']} "
            "values x sizes tried")


def _verdict_lines(race: dict) -> list[str]:
    """The knob values a race tried, by verdict; a broken or unmeasured one with why (values that share a why
    together)."""
    lines = []
    for word in VERDICTS:
        arms = [a for a in race["arms"] if a["verdict"] == word]
        if not arms:
            continue
        if word not in ("broken", "not measured"):
            lines.append(f"    {word}: " + "; ".join(_arm_text(race, a) for a in arms))
            continue
        by_why: dict[str, list[str]] = {}
        for a in arms:
            by_why.setdefault(a["why"] or "no reason recorded", []).append(a["key"])
        lines.append(f"    {word}: " + "; ".join(f"{', '.join(keys)} ({why})" for why, keys in by_why.items()))
    return [f"  {race['configuration']}, {race['path']}:", *lines] if lines else []


def claims(result: dict) -> bool:
    """Whether the answer claims anything a run can measure again: a recommended setting, or a configuration ahead of
    another."""
    return any(r["arm"] != DEFAULTS for race in result["races"] for r in race["recommendation"]) or \
        any(e["ahead_of"] for c in result["comparisons"] for e in c["ranking"])


def answer_text(result: dict) -> list[str]:
    """The answer for a person, the recommendations first: per configuration and path the settings per size range
    (or why there is no answer), with the gain, both intervals and the ready lines; then the knob values tried, by
    verdict; the configurations compared at their defaults; the tuned configurations."""
    lines = [f"== gmb tune: {result['launches']} launches in {result['rounds']} rounds, {result['used_s']:.0f} s of "
             f"{result['budget_s']:.0f} s" + (" (the budget ran out: the last round was cut short)"
                                              if result["cut_short"] and not result.get("stopped") else "")
             + (f" ({result['stopped']}: the answer so far)" if result.get("stopped") else ""),
             "Recommended, per configuration and path:"]
    for race in result["races"]:
        lines += _recommendation_lines(race)
    verdicts = [line for race in result["races"] for line in _verdict_lines(race)]
    if verdicts:
        lines += [f"Knob values by verdict (better, mixed, worse: proven on {result['confirm_launches']} fresh launches "
                  "of the value and of the defaults, corrected for every value x size tried; selected, not "
                  "confirmed and cut early: no claim):", *verdicts]
    if result["comparisons"]:
        lines.append("Configurations compared at their defaults ('>' proven ahead over the launches, '~' no claim):")
        lines += [f"  {c['path']} at {size_label(c['bytes'])}: {ordering(c)}" for c in result["comparisons"]]
    for t in result["tuned"]:
        lines.append(f"tuned configuration {t['name']}: {t['base']} with "
                     + " ".join(f"{k}={v}" for k, v in t["settings"].items()) + f" (for {', '.join(t['paths'])})")
    return lines


def reproducing_campaign(result: dict, races: list[Race]) -> Campaign:
    """The campaign that measures again what the answer claims: each race's block at the finest precision, with the
    defaults and each recommended set of settings as points of their own, REPRODUCE_REPETITIONS launches each."""
    blocks = []
    for race, entry in zip(races, result["races"]):
        sets = [{}]
        for r in entry["recommendation"]:
            if r["arm"] != DEFAULTS and r["settings"] not in sets:
                sets.append(r["settings"])
        blocks.append(replace(round_options(race.block, len(ROUND_PRECISION) - 1), settings=sets))
    return Campaign("tune-check", blocks, repetitions=REPRODUCE_REPETITIONS, order="random")
