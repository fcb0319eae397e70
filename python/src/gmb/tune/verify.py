# SPDX-License-Identifier: BSD-3-Clause
"""`gmb tune --verify TUNE_DIR RUN_DIR`: what a search recommended, measured again by a plain `gmb run` (of its
tune.toml, with its tune-libraries.toml), set beside what the search measured. Per recommended range and size: the
search's figure and interval, the run's, whether they agree (the interval of their ratio holds 1, at the level that
keeps every size checked true together), and whether the
gain over the defaults holds in the run: the run's launches confirm it as the search's own confirmation did
(claim_checks.confirm, Holm over every recommended value x size checked).

A record belongs to an arm of a race when it is of the race's identity (its defaults' records but for their size:
library configuration, benchmark, operation, memory, strategy, options, ranks, hosts, path) and ran with exactly the
defaults' settings (the configuration's and its block's own) with the arm's on top: an unrelated run's figures are
never taken for a race's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..errors import UsageError
from ..report.wording import bounds_text
from ..results.claim_checks import bonferroni_level, confirm
from ..results.inference import ratio
from ..results.model import Results
from ..results.points import Point, PointKey, combine
from ..results.store import open_results
from ..results.store_file import StoreError
from ..results.stored_rows import Result
from ..results.tune_answer import ANSWER_FILE, read_answer
from .native.manifest import CAMPAIGN, MANIFEST, read_loads
from .confirmation import by_launch, proven_ahead
from .races import DEFAULTS


def _results(path: Path) -> Results:
    try:
        return Results.load(open_results(path))
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def record_identity(r: Result, metric: str) -> dict:
    """What a race's records have in common whatever knob value they ran with: their point (points.PointKey: library
    configuration, benchmark, operation, memory, strategy, options, ranks, hosts, binding, path), without the size,
    the statistic and the settings."""
    key = dataclasses.asdict(PointKey.of(r, metric))
    for part in ("bytes", "metric", "settings"):
        del key[part]
    return key


def arm_points(results: Results, race: dict, settings: dict[str, str]) -> dict[int, Point]:
    """The race's points (by size): records of the race's identity (its defaults' records but for their size) that
    ran with its defaults' settings (the configuration's and its block's own) and ``settings`` on top, exactly."""
    identity = race.get("identity")
    if not identity:
        return {}
    wanted = {**identity["settings"], **settings}
    chosen = [r for r in results.ok(race["benchmark"]) if r.config.settings == wanted
              and record_identity(r, race["metric"]) == identity["point"]]
    return {p.bytes: p for p in combine(chosen, metric=race["metric"])}


def _store_of(path: Path) -> Path:
    return (path / "store.sqlite" if path.is_dir() else path).resolve()


def _confirmation(arm: dict[int, Point], defaults: dict[int, Point], sizes: list[int], higher: bool, tried: int):
    """The run's confirmation of a recommended value at ``sizes`` (those both measured in two launches or more), and
    those sizes; (None, []) where there is none."""
    sizes = [s for s in sizes if s in arm and s in defaults and arm[s].reps >= 2 and defaults[s].reps >= 2]
    if not sizes:
        return None, []
    value, base = (by_launch({s: {str(x.launch_id): x.median for x in side[s].launches} for s in sizes}, sizes)
                   for side in (arm, defaults))
    if len(value[0]) < 2 or len(base[0]) < 2:
        return None, []
    return confirm(value, base, higher, tried), sizes


def verify(answer: dict, tuned: Results, run: Results, loaded: dict | None = None) -> list[dict]:
    """One row per recommended range and size: the search's (``tuned``: its records) and the run's figures of the
    recommended settings and of the defaults, agreement, and whether the gain holds (confirmed by the run's
    launches, corrected for every recommended value x size checked). ``loaded``: (race index, range's first size)
    -> the settings that load the library's own files carrying that recommendation (native.json): the run's side is
    the one measured with those, and only the recommendations they carry are checked."""
    rows = []
    wanted = [(index, r) for index, race in enumerate(answer["races"]) for r in race["recommendation"]
              if r["arm"] != DEFAULTS and (loaded is None or (index, r["low"]) in loaded)]
    checked = sum(len(r["sizes"]) for _, r in wanted)
    for index, r in wanted:
        race = answer["races"][index]
        higher = race["higher_is_better"]
        run_settings = r["settings"] if loaded is None else loaded[(index, r["low"])]
        sides = {"tune": (arm_points(tuned, race, r["settings"]), arm_points(tuned, race, {})),
                 "run": (arm_points(run, race, run_settings), arm_points(run, race, {}))}
        sizes = [s["bytes"] for s in r["sizes"]]
        confirmation, confirmed = _confirmation(*sides["run"], sizes, higher, checked)
        for size in sizes:
            (t_arm, t_def), (r_arm, r_def) = ((a.get(size), d.get(size)) for a, d in sides.values())
            row = {"configuration": race["configuration"], "path": race["path"], "bytes": size,
                   "settings": run_settings, "unit": race["unit"], "tune": t_arm, "run": r_arm,
                   "run_defaults": r_def, "agrees": None, "gain_holds": None}
            if t_arm and r_arm and t_arm.median > 0 and r_arm.median > 0:
                row["agrees"] = ratio(t_arm.values, r_arm.values, t_arm.noise, r_arm.noise,
                                      level=bonferroni_level(checked)).apart == 0
            if r_arm and r_def:
                row["gain_holds"] = size in confirmed and confirmation.better[confirmed.index(size)]
                row["run_gain"] = r_arm.median / r_def.median if higher else r_def.median / r_arm.median
            rows.append(row)
    return rows


def verify_comparisons(answer: dict, run: Results) -> list[dict]:
    """Per comparison of configurations at their defaults (path, size): whether each claim of the search (a
    configuration ahead of another) holds in the run: proven there over both configurations' launches
    (confirmation.proven_ahead, two launches or more a side)."""
    races = {(r["configuration"], r["path"]): r for r in answer["races"]}
    defaults: dict[tuple[str, str], dict[int, Point]] = {}  # each race's defaults, combined once for all its sizes
    rows = []
    for c in answer["comparisons"]:
        figures = {}
        for e in c["ranking"]:
            key = (e["configuration"], c["path"])
            if key not in defaults:
                defaults[key] = arm_points(run, races[key], {})
            figures[e["configuration"]] = defaults[key].get(c["bytes"])
        higher = races[(c["best"], c["path"])]["higher_is_better"]
        for entry in c["ranking"]:
            for other in entry["ahead_of"]:
                a, b = figures[entry["configuration"]], figures[other]
                holds = None if not (a and b) else proven_ahead(a, b, higher)
                search = {e["configuration"]: e["figure"] for e in c["ranking"]}
                rows.append({"path": c["path"], "bytes": c["bytes"], "unit": c["unit"], "ahead": entry["configuration"],
                             "behind": other, "search": (search[entry["configuration"]], search[other]),
                             "run": (a, b), "holds": holds})
    return rows


def verify_text(rows: list[dict]) -> list[str]:
    def fig(p: Point | None, unit: str) -> str:
        if p is None:
            return "not measured"
        return f"{p.median:.4g} {unit} [{bounds_text(p.low, p.high)}, {p.reps} launches]"

    lines = []
    for row in rows:
        said = {True: "agrees", False: "DIFFERS", None: "not comparable"}[row["agrees"]]
        holds = {True: "the gain holds", False: "the gain does NOT hold", None: "gain not measured"}[row["gain_holds"]]
        gain = f" ({100 * (row['run_gain'] - 1):+.0f} %)" if "run_gain" in row else ""
        lines.append(f"{row['configuration']}, {row['path']} at {row['bytes']} B, "
                     + " ".join(f"{k}={v}" for k, v in row["settings"].items())
                     + f": search {fig(row['tune'], row['unit'])}; run {fig(row['run'], row['unit'])}: {said}; "
                     f"{holds}{gain} over the run's defaults {fig(row['run_defaults'], row['unit'])}")
    return lines or ["the search recommended no setting"]


def comparisons_text(rows: list[dict]) -> list[str]:
    def fig(p: Point | None) -> str:
        return "not measured" if p is None else f"{p.median:.4g} [{bounds_text(p.low, p.high)}, {p.reps} launches]"

    return [f"{r['path']} at {r['bytes']} B: {r['ahead']} ahead of {r['behind']} "
            f"(search {r['search'][0][0]:.4g} vs {r['search'][1][0]:.4g} {r['unit']}): "
            + {True: "holds", False: "does NOT hold", None: "not measured in the run"}[r["holds"]]
            + f" (run {fig(r['run'][0])} vs {fig(r['run'][1])})" for r in rows]


def command(tune_dir: str, run_dir: str) -> int:
    """Exit 0 when every recommendation's gain holds (the run confirms it) and every claim of a comparison holds, 1
    otherwise (a figure that differs from the search's is said, and is no claim of the search failing); 2 (UsageError) for the search against itself, or a directory that cannot be read as what it is."""
    search_dir, run_path = Path(tune_dir), Path(run_dir)
    if _store_of(search_dir) == _store_of(run_path):
        raise UsageError(f"--verify {tune_dir} {run_dir}: that is the search against itself; give as RUN_DIR a run of "
                         f"its tune.toml (gmb run --config {search_dir / 'tune-libraries.toml'} --no-detect "
                         f"{search_dir / 'tune.toml'})")
    answer = read_answer(search_dir, "--verify")
    claimed = [r for r in answer["races"] if r.get("identity") is None and (
        any(x["arm"] != DEFAULTS for x in r["recommendation"]) or
        any(r["configuration"] == e["configuration"] and r["path"] == c["path"]
            for c in answer["comparisons"] for e in c["ranking"]))]
    if claimed:
        raise UsageError(f"{search_dir / ANSWER_FILE}: races[{answer['races'].index(claimed[0])}] "
                         f"({claimed[0]['configuration']}, {claimed[0]['path']}) does not say which records are its "
                         f"own (no identity: written by an older gmb tune); search again to verify it")
    tuned, run = _results(search_dir), _results(run_path)
    rows = verify(answer, tuned, run)
    loads = read_loads(search_dir)
    native_rows = verify(answer, tuned, run, loads) if loads else []
    compared = verify_comparisons(answer, run)
    print("\n".join(["== recommended settings", *verify_text(rows), *_native_text(loads, native_rows),
                     "== configurations compared at their defaults",
                     *(comparisons_text(compared) or ["no comparison"])]))
    # a run of tune.toml measures the settings, one of tune-native.toml the files loaded: each is judged where the
    # run measured it (the settings where it measured neither)
    judged = [checked for checked in (rows, native_rows) if any(r["run"] for r in checked)] or [rows]
    gains = all(r["gain_holds"] for checked in judged for r in checked)
    return 0 if gains and all(r["holds"] is not False for r in compared) else 1


def _native_text(loads: dict | None, rows: list[dict]) -> list[str]:
    """The native files' section: each recommendation they carry, measured with the files loaded."""
    if not loads:
        return []
    if not any(r["run"] for r in rows):
        return [f"== the libraries' own files loaded ({MANIFEST})",
                f"this run did not load them (a run of {CAMPAIGN} does)"]
    return [f"== the libraries' own files loaded ({MANIFEST})", *verify_text(rows)]
