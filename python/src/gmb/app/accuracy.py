# SPDX-License-Identifier: BSD-3-Clause
"""How accurate `gmb predict` is, from what `gmb app` wrote: for each application and configuration the measured MPI
time (the slowest rank's, over its runs) beside the predicted communication, and over all of them the median
relative error, the share of configuration pairs (within an application) whose order was predicted right, and the
coverage (how often the measured time lies inside the predicted interval). Two predictions are scored on the same
runs: gmb predict's (each rank's own calls, its receives and its waits priced) and each rank's own calls alone (what
gmb predict said before it priced receives and waits). scripts/prediction-accuracy runs the benchmark;
docs/application.md has the figures."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field

# what the benchmark reports against
TARGETS = {"median_error": 0.10, "order_right": 0.90, "coverage": 0.90}
# each prediction scored: its name -> the keys of gmb app's predicted_s that hold its value and interval
PREDICTED, OWN_CALLS = "gmb predict", "own calls only (before)"
MODELS = {PREDICTED: ("predicted_s", "low_s", "high_s"),
          OWN_CALLS: ("own_calls_s", "own_calls_low_s", "own_calls_high_s")}


@dataclass
class Application:
    """One application of the benchmark: gmb app's summary (app.json) of its runs, the configurations that cannot
    run it (and why), the configuration its profile ran under, and what else the script recorded (command, load)."""
    name: str
    shape: str
    summary: dict | None
    cannot_run: dict[str, str] = field(default_factory=dict)
    profiled_under: str | None = None
    notes: dict = field(default_factory=dict)
    profile_busy: bool = False  # the profile ran on a busy host (its ``load``, machine/load.py)


@dataclass
class Case:
    """One (application, configuration): measured MPI time (s, with its interval) and each model's prediction."""
    application: str
    configuration: str
    runs: int
    measured: dict | None  # {"value", "low", "high", "launches"} or None
    predicted: dict[str, tuple[float, float | None, float | None]]  # model -> (value, low, high)
    complete: bool
    profiled: bool
    status: str  # "measured", or why not
    busy_runs: int = 0  # runs on a busy host
    profile_busy: bool = False

    @property
    def quiet(self) -> bool:
        """Neither its runs nor the profile ran beside other work."""
        return not self.busy_runs and not self.profile_busy

    def error(self, model: str) -> float | None:
        """|predicted - measured| / measured."""
        if not self.scored(model):
            return None
        return abs(self.predicted[model][0] - self.measured["value"]) / self.measured["value"]

    def inside(self, model: str) -> bool | None:
        """Whether the measured time lies inside the predicted interval."""
        if not self.scored(model):
            return None
        _, low, high = self.predicted[model]
        return low is not None and high is not None and low <= self.measured["value"] <= high

    def overlaps(self, model: str) -> bool | None:
        """Whether the measured and the predicted intervals share a value."""
        if not self.scored(model) or self.measured.get("low") is None:
            return None
        _, low, high = self.predicted[model]
        return low is not None and high is not None and low <= self.measured["high"] and self.measured["low"] <= high

    def scored(self, model: str) -> bool:
        return (self.status == "measured" and self.complete and bool(self.measured) and self.measured["value"] > 0
                and model in self.predicted)


def _predicted(pred: dict | None) -> dict[str, tuple]:
    """Each model's (value, low, high) from gmb app's predicted_s (a summary written before receives and waits were
    priced has the first model only: its own calls, under the first keys)."""
    if not pred or pred.get("predicted_s") is None:
        return {}
    if "own_calls_s" not in pred:
        return {OWN_CALLS: (pred["predicted_s"], pred.get("low_s"), pred.get("high_s"))}
    return {model: (pred[value], pred.get(low), pred.get(high)) for model, (value, low, high) in MODELS.items()}


def cases_of(app: Application) -> list[Case]:
    """The application's cases: one per configuration gmb app ran, and one per configuration that cannot run it."""
    out = []
    for row in (app.summary or {}).get("configurations", []):
        pred = row.get("predicted_s")
        measured = row.get("mpi_s")
        status = ("measured" if measured else
                  f"no MPI time measured ({row.get('failed', 0)} of its runs failed)" if row.get("failed")
                  else "no MPI time measured")
        out.append(Case(app.name, row["configuration"], row.get("launches", 0), measured, _predicted(pred),
                        bool(pred and pred.get("complete")), row["configuration"] == app.profiled_under, status,
                        row.get("busy_runs", 0), app.profile_busy))
    for conf, why in sorted(app.cannot_run.items()):
        out.append(Case(app.name, conf, 0, None, {}, False, False, f"cannot run: {why}"))
    return out


@dataclass
class PairOrder:
    """Two configurations of one application: which measured less MPI time, which was predicted less, and whether
    their measured intervals lie apart (only then is the measured order itself known)."""
    application: str
    ahead: str  # measured less MPI time
    behind: str
    predicted_right: dict[str, bool]  # model -> predicted the same order
    measured_apart: bool


def pair_orders(cases: list[Case]) -> list[PairOrder]:
    out = []
    by_app: dict[str, list[Case]] = {}
    for c in cases:
        if any(c.scored(m) for m in MODELS):
            by_app.setdefault(c.application, []).append(c)
    for app, scored in by_app.items():
        scored = sorted(scored, key=lambda c: c.measured["value"])
        for i, a in enumerate(scored):
            for b in scored[i + 1:]:
                apart = (a.measured.get("high") is not None and b.measured.get("low") is not None
                         and a.measured["high"] < b.measured["low"])
                right = {m: a.predicted[m][0] <= b.predicted[m][0] for m in MODELS if a.scored(m) and b.scored(m)}
                out.append(PairOrder(app, a.configuration, b.configuration, right, apart))
    return out


def scores(cases: list[Case], pairs: list[PairOrder], model: str) -> dict:
    """One model's median relative error, order right (all pairs, and those measured apart) and coverage."""
    errors = [c.error(model) for c in cases if c.scored(model)]
    inside = [c.inside(model) for c in cases if c.scored(model)]
    pairs = [p for p in pairs if model in p.predicted_right]
    apart = [p for p in pairs if p.measured_apart]
    return {"cases": len(errors),
            "median_error": statistics.median(errors) if errors else None,
            "order_right": _share([p.predicted_right[model] for p in pairs]), "pairs": len(pairs),
            "order_right_apart": _share([p.predicted_right[model] for p in apart]), "pairs_apart": len(apart),
            "coverage": _share(inside),
            "overlap": _share([o for o in (c.overlaps(model) for c in cases) if o is not None])}


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def accuracy(apps: list[Application]) -> dict:
    """The whole benchmark as data: every case, every pair, and each model's scores over all cases and over those
    of configurations other than the profiled one (where the waits are the profile's own run, replayed)."""
    cases = [c for app in apps for c in cases_of(app)]
    subsets = {"all": cases, "not profiled": [c for c in cases if not c.profiled],
               "quiet": [c for c in cases if c.quiet]}
    return {"targets": TARGETS,
            "scores": {name: {m: scores(sub, pair_orders(sub), m) for m in MODELS} for name, sub in subsets.items()},
            "cases": [{**asdict(c), "quiet": c.quiet, "error": {m: c.error(m) for m in MODELS},
                       "inside": {m: c.inside(m) for m in MODELS}} for c in cases],
            "pairs": [asdict(p) for p in pair_orders(cases)],
            "applications": [{"name": a.name, "shape": a.shape, "profiled_under": a.profiled_under,
                              "cannot_run": a.cannot_run, "profile_busy": a.profile_busy, **a.notes} for a in apps]}


# ----------------------------------------------------------------------------------------------------- the table
def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f} %"


def _interval(value: float | None, low: float | None = None, high: float | None = None) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" + (f" [{low:.4g}, {high:.4g}]" if low is not None and high is not None else "")


SUBSETS = {"all": "", "not profiled": ", the profiled configuration left out",
           "quiet": ", only cases whose profile and runs no other work ran beside"}


def _right(flag: bool | None) -> str:
    return {True: "right", False: "wrong", None: "-"}[flag]


def _score_row(name: str, s: dict) -> str:
    def verdict(key: str, good) -> str:
        x = s[key]
        return "" if x is None else " (met)" if good(x) else " (missed)"
    return (f"| {name} | {s['cases']} | {_pct(s['median_error'])}"
            f"{verdict('median_error', lambda x: x <= TARGETS['median_error'])} | "
            f"{_pct(s['order_right'])} of {s['pairs']}{verdict('order_right', lambda x: x >= TARGETS['order_right'])}"
            f" | {_pct(s['order_right_apart'])} of {s['pairs_apart']} | "
            f"{_pct(s['coverage'])}{verdict('coverage', lambda x: x >= TARGETS['coverage'])} | {_pct(s['overlap'])} |")


def _case_row(c: dict) -> str:
    if c["status"] != "measured":
        return f"| {c['application']} | {c['configuration']} | {c['runs']} | {c['status']} | | | | | | |"
    m = c["measured"]
    busy = f", {c['busy_runs']} busy" if c["busy_runs"] else ""
    cells = [c["application"], c["configuration"] + (" (profiled)" if c["profiled"] else ""), f"{c['runs']}{busy}",
             _interval(m["value"], m.get("low"), m.get("high"))]
    for model in MODELS:
        p = c["predicted"].get(model)
        cells += [_interval(*p) + ("" if c["complete"] else " (incomplete)") if p else "-",
                  _pct(c["error"][model]), {True: "yes", False: "no", None: "-"}[c["inside"][model]]]
    return "| " + " | ".join(cells) + " |"


def markdown(result: dict, heading: str = "How accurate `gmb predict` is") -> str:
    """The benchmark's table: scores per model (all cases, and without the profiled configurations), each case and
    each pair."""
    lines = [f"# {heading}", "", *result.get("preamble", []), "",
             "| prediction | cases | median error (target <= 10 %) | order right, pairs (target >= 90 %) | "
             "order right, pairs measured apart | coverage (target >= 90 %) | intervals overlap |",
             "|---|---|---|---|---|---|---|"]
    for subset, said in SUBSETS.items():
        for model in MODELS:
            lines.append(_score_row(model + said, result["scores"][subset][model]))
    lines += ["", "| application | configuration | runs | measured MPI time, slowest rank (s) | "
              + " | ".join(f"{m} (s) | error | inside" for m in MODELS) + " |", "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [_case_row(c) for c in result["cases"]]
    lines += ["", "| application | measured ahead | behind | measured apart | " + " | ".join(MODELS) + " |",
              "|---|---|---|---|---|---|"]
    for p in result["pairs"]:
        lines.append(f"| {p['application']} | {p['ahead']} | {p['behind']} | {'yes' if p['measured_apart'] else 'no'}"
                     + "".join(f" | {_right(p['predicted_right'].get(m))}" for m in MODELS) + " |")
    lines += ["", "| application | shape | profiled under | notes |", "|---|---|---|---|"]
    for a in result["applications"]:
        notes = "; ".join(f"{k}: {v}" for k, v in a.items()
                          if k not in ("name", "shape", "profiled_under", "cannot_run", "profile_busy"))
        busy = " (on a busy host)" if a["profile_busy"] else ""
        lines.append(f"| {a['name']} | {a['shape']} | {a['profiled_under'] or '-'}{busy} | {notes} |")
    return "\n".join(lines) + "\n"
