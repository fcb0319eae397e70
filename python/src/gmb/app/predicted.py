# SPDX-License-Identifier: BSD-3-Clause
"""A profile's predictions as `gmb predict` and `gmb app` take and say them: the store read and checked against the
profile, each configuration's prediction in lines (ranked, what dominates, what is missing) and as data."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..results.model import Results
from ..results.profile import needs
from ..results.store import Store
from . import predict as predict_mod
from .predict import bin_label


def store_results(path: str) -> Results:
    p = Path(path)
    db = p / "store.sqlite" if p.is_dir() else p
    if not db.is_file():
        raise UsageError(f"{path}: no store there (a results directory of gmb run, or its store.sqlite)")
    return Results.load(Store(db))


def _store_hosts(results: Results) -> set[str]:
    return {r.get("host") for c in results.contexts for r in c.record.get("ranks") or [] if r.get("host")}


def predictions(profile: dict, results: Results, store: str, other_machine: bool = False):
    """The predictions, after the checks: the store measured this profile's hosts, and has some of its points."""
    mine, theirs = set(profile["hosts"]), _store_hosts(results)
    if theirs and not mine & theirs and not other_machine:
        raise UsageError(f"the profile ran on {', '.join(sorted(mine))}, the store {store} measured "
                         f"{', '.join(sorted(theirs))}: its figures are another machine's (--other-machine to price "
                         f"it with them anyway)")
    preds = predict_mod.predict(profile, results)
    if not any(p.priced for p in preds):
        wanted = "; ".join(n.label() for n in needs(profile)) or "none"
        raise UsageError(f"the store {store} has none of the figures this profile needs ({wanted}): measure them "
                         f"with `gmb run --for-profile PROFILE`")
    return preds


def prediction_lines(preds, profile: dict) -> list[str]:
    lines = []
    complete = [p for p in preds if p.complete]
    for i, p in enumerate(preds):
        if not p.own_us:
            lines.append(f"   {p.configuration}: nothing priced")
            continue
        rank, us, lo, hi = p.slowest
        outside = sorted({f"{x.row['call']} {bin_label(x.row['bin'])} ({x.how.split(' (')[0].split(':')[0]})"
                          for x in p.priced if x.how.startswith(("below", "above"))})
        wait, received = p.wait_us.get(rank, 0.0), p.received_us.get(rank, (0.0,))[0]
        lines.append(f"{i + 1 if p.complete else '-':>2} {p.configuration}: {us / 1e6:.4g} s [{lo / 1e6:.4g}, "
                     f"{hi / 1e6:.4g}] of communication (slowest rank {rank}"
                     + (f": its calls {(us - wait - received) / 1e6:.4g} s, receiving {received / 1e6:.4g} s, "
                        f"waiting for peers {wait / 1e6:.4g} s" if p.waits_from else "") + ")"
                     + (f"; outside the sizes measured: {', '.join(outside[:3])}" + (" ..." if len(outside) > 3
                                                                                        else "") if outside else ""))
        lines.append("     most of it: " + "; ".join(f"{k} {v / 1e6:.3g} s" for k, v in p.dominant(3)))
        for need, calls in p.missing.items():
            lines.append(f"     not priced: {calls} calls need {need.label()}, not in the store")
    if complete and len(complete) > 1:
        a, b = complete[0], complete[1]
        apart = a.slowest[3] < b.slowest[2]
        lines.append(f"predicted fastest: {a.configuration}, {b.slowest[1] / a.slowest[1]:.3g}x less communication "
                     f"than {b.configuration}" + ("" if apart else " (within the figures' intervals: no claim)"))
    waits_from = next((p.waits_from for p in preds if p.waits_from), None)
    load = profile.get("load") or {}
    if waits_from and load.get("busy"):
        lines.append(f"warning: the profile ran on a busy host ({load['why']}): the waits it carries are the host's "
                     f"as much as the application's; profile again when the host is quiet")
    lines.append(f"receiving: the peers' messages at their figures, times the share each rank waited for them in the "
                 f"profile; waiting for peers: its time in MPI beyond that and its calls, as the profile measured it "
                 f"under {waits_from}, the same under every configuration" if waits_from else
                 f"receives and waits not priced (its own calls only): the store has no figures of the configuration "
                 f"the profile ran under ({profile.get('library', 'not recorded')}), which tell in the profile's "
                 f"times its transfers from its waits")
    if any(p.missing for p in preds):
        lines.append("measure what is missing: gmb run --for-profile PROFILE (with the libraries above)")
    unpriced = predict_mod.unpriced_calls(profile)
    if unpriced:
        lines.append("calls gmb measures no figure for (not in any prediction): "
                     + ", ".join(f"{c} x{n}" for c, n in sorted(unpriced.items())))
    return lines


def prediction_json(p) -> dict:
    """A Prediction as data: the slowest rank's time, its part received and waited, and, as ``own_calls_*``, what
    its own calls alone predict (gmb predict before it priced receives and waits)."""
    priced = bool(p.own_us)
    rank, us, lo, hi = p.slowest if priced else (None, None, None, None)
    o_rank, o_us, o_lo, o_hi = p.own_slowest if priced else (None, None, None, None)
    return {"configuration": p.configuration, "complete": p.complete, "slowest_rank": rank, "predicted_s": _s(us),
            "low_s": _s(lo), "high_s": _s(hi), "wait_s": _s(p.wait_us.get(rank, 0.0)) if priced else None,
            "received_s": _s(p.received_us.get(rank, (0.0,))[0]) if priced else None, "waits_from": p.waits_from,
            "own_calls_s": _s(o_us), "own_calls_low_s": _s(o_lo), "own_calls_high_s": _s(o_hi),
            "own_calls_slowest_rank": o_rank,
            "per_rank_s": {str(r): v[0] / 1e6 for r, v in p.per_rank_us.items()},
            "dominant": [{"calls": k, "s": v / 1e6} for k, v in p.dominant(5)] if priced else [],
            "missing": [{"need": n.label(), "calls": c} for n, c in p.missing.items()]}


def _s(us):
    return None if us is None else us / 1e6
