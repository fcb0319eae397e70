# SPDX-License-Identifier: BSD-3-Clause
"""Answers: what a person choosing an MPI library (and its settings) for GPU data wants to know, from the results
model (results/model.py), as data (answers_data.py); answers_words.py says them, for render_text (a terminal),
render_html and answers_table (the report) and render_json (`gmb tables --json`).

The report's first section, also printed at the end of `gmb run`. Six answers, each a short sentence or table
row with numbers:

1. Per path present (an NVLink or PCIe pair of GPUs, one GPU, host -> device pinned or pageable and back, host,
   managed placements): the best and the worst library configuration by bandwidth (managed: by time) at one
   stated size, with % of the measured ceiling at that size and the 8 B one-way latency of each.
2. Where a gmb strategy (staged, pipelined, pipelined-gpu) beats the library's own path, and by how many times.
3. The settings that mattered (the doctor's findings, `meta.settings_that_matter`).
4. Collectives: bus bandwidth per operation and rank count, MPI configurations next to NCCL.
5. What was not measured, and why, a cause repeated over many points said once.
6. Where measured: the best one-sided (RMA) configuration per path, the range of the persistent calls' speedup
   over the regular ones, the overlap partitioned communication buys by marking partitions ready per block of
   the kernel rather than after it, collectives over node counts (strong and weak scaling: which configuration's
   time grows least, per size) and size sweeps at a fixed node count (the fastest by size, crossovers).

Rules. Figures are the combined points of points.combine (the geometric mean over launches, the 95 % interval from
the launches). A configuration is called fastest (or a strategy said to beat the library) only when the 95 % interval
of its ratio to each other one excludes 1 (cells.clearly_apart, inference.ratio) and no point it rests on is blocked
(one launch, busy launches, quantised figures: cells.claim_blockers); otherwise the answer says why no claim is made
(wording.no_difference_text). The size is stated: the largest size every configuration on that path measured, preferring a size at which
a ceiling of that path was measured (peaks.Ceilings.at). Precision: half the interval relative to the median
(Point.precision), "cap reached" when an adaptive launch stopped at its cap before reaching its target.
"""

from __future__ import annotations

import json

from ..machine.load import busy_launch
from ..results.model import Results
from ..results.points import Point
from ..results.result_facts import Sides
from .answers_data import (DIRECT, Answers, CollectiveAnswer, Figure, MissingAnswer, MissingSubject, SettingAnswer,
                           bandwidth_points, measured, nccl_libraries, pick_size, two_sided, verdict)
from .answers_features import one_sided_answers, partitioned_answers, persistent_answers
from .answers_paths import path_answers, strategy_answers
from .scaling import scaling_answers, size_sweep_answers
from .cells import collective_results, latency_results
from .wording import path_label


def _settings_answers(results: Results) -> tuple[list[SettingAnswer], str]:
    try:
        found = json.loads(results.meta.get("settings_that_matter") or "[]")
    except ValueError:
        found = []
    if not found:
        return [], "not checked in this campaign (no GPU, or no engine built with CUDA)"
    out, quiet = [], []
    for s in found:
        for f in s.get("findings") or []:
            out.append(SettingAnswer(s["library"], f["setting"], f["effect"]))
        if not s.get("findings"):
            quiet.append(s["library"])
    note = ""
    if not out:
        note = f"none found: no setting changed the doctor's answer ({', '.join(quiet)})"
    elif quiet:
        note = f"no setting changed the doctor's answer for {', '.join(quiet)}"
    return out, note


def _collective_answers(results: Results) -> list[CollectiveAnswer]:
    nccl = nccl_libraries(results)
    groups: dict[tuple, list[Point]] = {}
    for p in measured(results.points(collective_results(results))):
        if (p.ranks or 0) < 2:  # one rank moves nothing between ranks: its bus bandwidth is 0 by definition
            continue
        groups.setdefault((p.operation or "", p.ranks or 0, p.memory), []).append(p)
    out = []
    for (op, ranks, memory), pts in groups.items():
        per_lib: dict[str, dict[int, Point]] = {}
        for p in pts:
            cur = per_lib.setdefault(p.library, {}).get(p.bytes)
            if cur is None or p.median > cur.median:
                per_lib[p.library][p.bytes] = p
        size = pick_size({lib: set(s) for lib, s in per_lib.items()}, lambda b: False)
        figs = [Figure(lib, s[size].median, "GB/s", s[size].precision, s[size].capped, point=s[size])
                for lib, s in per_lib.items() if size in s]
        figs.sort(key=lambda f: -f.value)
        shown = sorted(figs, key=lambda f: (f.point.base_library not in nccl, -f.value))
        out.append(CollectiveAnswer(op, ranks, memory, size, shown, verdict(figs, True),
                                    [f.library for f in shown if f.point.base_library in nccl],
                                    sorted(lib for lib in per_lib if size not in per_lib[lib])))
    out.sort(key=lambda a: (a.memory != "device", "device" not in a.memory, a.memory, a.operation, a.ranks))
    return out


_LAUNCH_STATUS = {"failed": "launch failed", "timeout": "timed out", "unsupported": "not supported",
                  "validation-failed": "wrong data received", "bad-input": "arguments refused",
                  "interrupted": "interrupted", "skipped": "not run", "wrong-library": "ran another MPI library",
                  "running": "did not finish", "finalize-hang": "measured, then hung in MPI_Finalize"}
_RESULT_STATUS = {"failed": "wrong data received (validation failed)", "unsupported": "not supported",
                  "skipped": "not measured"}


def _where(sides: Sides, path: str | None, strategy: str | None) -> str:
    """The path of a missing point as the answers name it, with its strategy ('' for none)."""
    parts = [path_label(sides, path)] if sides.kinds else []
    if strategy not in DIRECT:
        parts.append(strategy)
    return " ".join(parts)


def _missing_answers(results: Results) -> list[MissingAnswer]:
    causes: dict[str, dict] = {}

    def add(cause: str, subject: tuple[str, str, str], launch: bool = False, nbytes: int | None = None):
        c = causes.setdefault(cause, {"subjects": {}, "launches": 0})
        sizes = c["subjects"].setdefault(subject, set())
        if nbytes is not None:
            sizes.add(nbytes)
        c["launches"] += launch

    said_by_points = set()  # launches whose own records say why their points were not measured
    for r in results.results:
        if r.status == "ok":
            continue
        said_by_points.add(r.launch_id)
        why = _RESULT_STATUS.get(r.status, r.status)
        cause = f"{why}: {r.reason}" if r.reason else why
        # a peaks record stands for one copy kind (network, gpu-copies ...), not for peaks as a whole
        bench = f"{r.benchmark} {r.operation}" if r.ceiling and r.operation else r.benchmark
        add(cause, (r.library, bench, _where(r.sides, r.path_class, r.strategy)),
            nbytes=r.bytes if r.status == "failed" else None)
    for x in results.launches:
        if x.status == "ok" or (x.status == "unsupported" and x.launch_id in said_by_points):
            continue
        why = _LAUNCH_STATUS.get(x.status, x.status or "not finished")
        cause = f"{why}: {x.reason}" if x.reason else f"{why} (no reason recorded)"
        path = x.planned_path if x.planned_path not in ("ceilings", "managed") else None
        add(cause, (x.library, x.benchmark, _where(Sides.of_label(x.memory), path, x.strategy)), launch=True)
    for s in results.skipped:
        add(f"skipped: {s.reason}", (s.library, s.what, ""))
    out = [MissingAnswer(cause, [MissingSubject(lib, bench, where, tuple(sorted(sizes)))
                                 for (lib, bench, where), sizes in c["subjects"].items()], c["launches"])
           for cause, c in causes.items()]
    out.sort(key=lambda m: (-len(m.subjects), m.cause))
    return out


def answers(results: Results) -> Answers:
    """The answers of a store (see the module's doc)."""
    bandwidth, latency = bandwidth_points(results), two_sided(measured(results.points(latency_results(results))))
    paths, chosen = path_answers(results, bandwidth, latency)
    strategies = strategy_answers(results, chosen, bandwidth)
    settings, settings_note = _settings_answers(results)
    collectives = _collective_answers(results)
    missing = _missing_answers(results)
    features = (one_sided_answers(results) + persistent_answers(results) + partitioned_answers(results)
                + scaling_answers(results) + size_sweep_answers(results))
    notes = _notes(results, bandwidth + latency + [f.point for c in collectives for f in c.figures])
    empty = ""
    if not (paths or strategies or collectives or features):
        launches = results.launches
        if not results.results and not launches and not results.skipped:
            empty = "No answers: this store holds no results (nothing was launched or ingested)."
        elif launches and not any(x.status == "ok" for x in launches):
            empty = (f"No answers: none of the {len(launches)} launches gave a figure of MPI moving data "
                     f"(see Not measured).")
        else:
            empty = ("No answers: no figure of data moved between ranks (point to point or collectives) in this "
                     "store" + (" (see Not measured)." if missing else "."))
    return Answers(paths, strategies, settings, settings_note, collectives, missing, empty, features, notes)


def _notes(results: Results, points: list[Point]) -> list[str]:
    """What holds for every answer: that its points were measured in one launch each (no claims),
    and the launches that ran while this host was busy, and results stored without their engines' descriptions."""
    notes = []
    if points and all(p.one_launch for p in points):
        notes.append("Each figure comes from one launch: no configuration is said faster than another, since "
                     "launches differ more than the samples of one launch; repeat the campaign with "
                     "--repetitions 3 or more for claims that hold across launches.")
    launches = [x for x in results.launches if x.status not in ("skipped", None)]
    busy = [x for x in launches if busy_launch(x.load)]
    if busy:
        why = busy[0].load.get("why", "")
        notes.append(f"{len(busy)} of {len(launches)} launches ran on a busy host ({why}, the first of them): their "
                     f"figures may be low; they are flagged 'busy host' in the tables and no claim rests on them.")
    if results.undescribed():
        notes.append("No engine description was stored with these results (records ingested without their "
                     "RESULTS/engines/*.json): no figure is compared with a ceiling, and none is taken as counting "
                     "both directions.")
    return notes
