# SPDX-License-Identifier: BSD-3-Clause
"""The report of `gmb app`: its section "Your application": the profile's histogram (calls by kind and size, and
where their time went), the prediction per configuration and the verification (measured beside predicted, each pair
tested, where the prediction missed and why)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from ..outputs import write_new
from ..report.cells import Table
from ..report.html import _CSS
from ..report.render_html import escape, figure_html, table_html
from ..results.profile import NOT_PRICED, SENDS, need_of, totals
from .predict import bin_label

# where a rank's time in MPI went: the sends priced at their figure, the receives and waits (the other side of
# messages, and waiting for them), the collectives priced, and calls gmb has no figure for
BREAKDOWN = ("priced sends", "receives and waits", "priced collectives", "calls not priced")


def breakdown(profile: dict, rank: int) -> dict[str, float]:
    """A rank's time in MPI calls (call and wait), by BREAKDOWN's kinds, s."""
    out = dict.fromkeys(BREAKDOWN, 0.0)
    for row in profile["rows"]:
        if row["rank"] != rank:
            continue
        t = row["call_s"] + row["wait_s"]
        need = need_of(row)
        if need is not None:
            out["priced collectives" if need.benchmark == "coll" else "priced sends"] += t
        elif row["call"] in NOT_PRICED or row["call"] in SENDS:  # a send not priced: to MPI_PROC_NULL
            out["receives and waits"] += t
        else:
            out["calls not priced"] += t
    return out


def paths_of(profile: dict) -> set[str]:
    """The paths a profile's point-to-point messages took."""
    return {row["path"] for row in profile["rows"] if row.get("path")}


def missed(measured_mpi_s: float | None, predicted_s: float | None, parts: dict[str, float] | None,
           run_paths: set[str] | None = None, profile_paths: set[str] | None = None) -> str:
    """Why measured and predicted communication differ: the runs' messages took other paths than the profile's (a
    placement of their own), or where the measured time went."""
    if not measured_mpi_s or not predicted_s or not parts:
        return ""
    ratio = measured_mpi_s / predicted_s
    if run_paths and profile_paths and run_paths != profile_paths:
        return (f"measured MPI time {ratio:.3g}x the prediction: the runs' messages took {', '.join(sorted(run_paths))}"
                f", the profile's {', '.join(sorted(profile_paths))}: the runs were placed otherwise than the profiled "
                f"one (--hostfile, --ranks-per-node), so the prediction is of another run")
    if 0.5 <= ratio <= 2:
        return f"measured MPI time {ratio:.2g}x the prediction: the benchmarks' figures account for it"
    total = sum(parts.values()) or 1.0
    biggest = max(parts, key=parts.get)
    if ratio < 1:
        return (f"measured MPI time {ratio:.3g}x the prediction (less): the application's messages overlap each other "
                f"or its computation (several in flight, the transfer under way while it computes), which the "
                f"benchmarks' figures, one message or one window at a time, do not")
    why = {"priced sends": "the sends took longer in the application than in the benchmarks: they wait for their "
                           "receivers (load imbalance, synchronisation) or compete with the application's own work, "
                           "which a benchmark that only communicates does not see",
           "receives and waits": "time waiting for messages to arrive: the peers were still computing (load "
                                 "imbalance), which no communication benchmark measures",
           "priced collectives": "the collectives took longer than in the benchmarks: ranks arrive at them at "
                                 "different times (imbalance), or the application's sizes or counts differ",
           "calls not priced": "calls gmb measures no figure for (barriers, scans, one-sided calls)"}[biggest]
    return (f"measured MPI time {ratio:.3g}x the prediction (more); {100 * parts[biggest] / total:.0f} % of it in "
            f"{biggest}: {why}")


def busy_text(busy_runs: int, runs: int, profile_load: dict | None) -> str:
    """Where other work on this host beside the ranks (machine/load.py) lengthened the waits the prediction takes
    over from the profile, or those of the runs: "; the profile ran on a busy host (...), 1 of 4 runs"."""
    profile_busy = bool(profile_load and profile_load.get("busy"))
    if not profile_busy and not busy_runs:
        return ""
    said = [f"the profile ({profile_load['why']})"] if profile_busy else []
    said += [f"{busy_runs} of {runs} runs"] if busy_runs else []
    return (f"; {' and '.join(said)} ran on a busy host: the waits (a rank waiting for a peer that other work kept "
            f"from its core) are the host's as much as the application's")


def _histogram_table(profile: dict) -> Table:
    return Table("The profile: calls by kind, memory, path and size (all ranks)",
                 ["call", "memory", "path or ranks", "size", "calls", "bytes", "time in call and waits (s)"],
                 [[c, m, w, bin_label(b), n, nb, round(t, 6)] for (c, m, w, b), (n, nb, t, _) in
                  sorted(totals(profile, by_bin=True).items(), key=lambda kv: -kv[1][2])],
                 note=f"{profile['ranks']} ranks; {profile['mpi_library']}; command: {' '.join(profile['command'])}")


def _histogram_figure(profile: dict) -> bytes | None:
    try:
        import matplotlib.pyplot as plt

        from ..report.drawing import png as _png  # the report's own PNG writer (it selects the Agg backend)
    except ImportError:
        return None
    calls: dict[str, dict[int, int]] = {}
    for row in profile["rows"]:
        if row["call"] in NOT_PRICED:
            continue
        calls.setdefault(row["call"], {})
        calls[row["call"]][row["bin"]] = calls[row["call"]].get(row["bin"], 0) + row["count"]
    if not calls:
        return None
    bins = sorted({b for c in calls.values() for b in c})
    fig, ax = plt.subplots(figsize=(12, 4.5))
    bottom = [0] * len(bins)
    for call, counts in sorted(calls.items()):
        heights = [counts.get(b, 0) for b in bins]
        ax.bar(range(len(bins)), heights, bottom=bottom, label=call)
        bottom = [a + h for a, h in zip(bottom, heights)]
    ax.set_xticks(range(len(bins)), [bin_label(b) for b in bins], rotation=30, ha="right", fontsize=9)
    ax.set_ylabel("calls (all ranks)")
    if max(bottom) > 100 * max(1, min(h for h in bottom if h)):
        ax.set_yscale("log")  # a few sizes of many calls would hide the others
    ax.set_title("Messages by size and call")
    ax.legend(fontsize=9)
    return _png(fig)


def estimate_text(e: dict | None, unit: str = "") -> str:
    """A measured figure over runs: "0.431 [0.386, 0.481]"."""
    if not e:
        return "-"
    band = f" [{e['low']:.4g}, {e['high']:.4g}]" if e["low"] is not None else " (one run: no interval)"
    return f"{e['value']:.4g}{unit}{band}"


def predicted_text(pred: dict | None) -> str:
    if not pred:
        return "-"
    return (f"{pred['predicted_s']:.4g} s [{pred['low_s']:.4g}, {pred['high_s']:.4g}]"
            + ("" if pred["complete"] else " (incomplete)"))


def pair_text(p: dict) -> str:
    """One pair of configurations: measured ratio, its test, and the prediction beside it."""
    verdict = "proven" if p.get("proven") else "not proven (Holm, 95 % over all pairs)"
    band = f" [{p['low']:.3g}, {p['high']:.3g}]" if p["low"] is not None else ""
    said = ""
    if "predicted_ahead" in p:
        order = "the same way" if p["predicted_ahead"] else "the other way round"
        said = (f"; predicted {order}" + ("" if p.get("proven") else " (the measured order is not proven)")
                + f": {p['behind']} predicted {1e3 * p['predicted_difference_s']:+.3g} ms of communication"
                + (f", measured {1e3 * p['measured_mpi_difference_s']:+.3g} ms of MPI time"
                   if p["measured_mpi_difference_s"] is not None else "")
                + (f", {p['measured_figure_difference']:+.3g} of the figure"
                   if p["measured_figure_difference"] is not None else ""))
    return f"{p['ahead']} ahead of {p['behind']}: {p['ratio']:.3g}x{band}, {verdict}{said}"


def _verification_table(summary: dict) -> Table:
    rows = [[r["configuration"], f"{r['launches']}" + (f" ({r['busy_runs']} on a busy host)" if r.get("busy_runs")
                                                        else ""), r["failed"], estimate_text(r["figure"]),
             estimate_text(r["mpi_s"], " s"), predicted_text(r["predicted_s"]), r.get("missed", "")]
            for r in summary["configurations"]]
    return Table("Measured and predicted, per configuration", ["configuration", "runs", "failed", summary["figure"],
                                                                "MPI time, slowest rank", "predicted communication",
                                                                "where the prediction missed"], rows)


def report_html(summary: dict, profile: dict | None, prediction_lines: list[str]) -> str:
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>gmb app</title><style>{_CSS}</style></head>"
             f"<body><h1>gmb app: {escape(' '.join(summary['command']))}</h1>",
             f"<p class='note'>Generated {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} by gmb "
             f"{__version__}; {summary['ranks']} ranks; figure: {escape(summary['figure'])}.</p>",
             "<section id='application'><h2>Your application</h2>"]
    if profile:
        parts.append(table_html(_histogram_table(profile), "profile"))
        png = _histogram_figure(profile)
        if png:
            parts.append(figure_html("profile", "The profile's messages by size and call", png))
    if prediction_lines:
        parts.append("<h3>The prediction</h3><pre>" + escape("\n".join(prediction_lines)) + "</pre>")
    parts.append(table_html(_verification_table(summary), "verification"))
    parts.append("<h3>Each pair</h3><ul>" + "".join(f"<li>{escape(pair_text(p))}</li>" for p in summary["pairs"])
                 + "</ul>")
    parts.append("</section></body></html>")
    return "\n".join(parts)


def write_app_report(outdir: Path, summary: dict, profile: dict | None, prediction_lines: list[str]) -> Path:
    return write_new(outdir / "report.html", report_html(summary, profile, prediction_lines))
