# SPDX-License-Identifier: BSD-3-Clause
"""Answer 6: the best one-sided configuration per path, the persistent calls' speedup, and the overlap partitioned
communication buys (answers.py says how)."""

from __future__ import annotations

from statistics import median

from ..results.model import Results
from ..results.peaks import ceilings
from ..results.points import Point
from ..results.result_facts import one_sided
from .answers_data import (OneSidedAnswer, PartitionedAnswer, PersistentAnswer, RankedPoints, measured, nearest,
                           pick_size)
from .cells import clearly_apart
from .feature_tables import partitioned_overlap, persistent_pairs
from .wording import order, path_label


def _ranked(points: list[Point], higher: bool, avail=None) -> RankedPoints:
    """Some points of one size ranked best first, whether the best is apart from every other one (not only the
    runner-up), and its ceiling (``avail``: bandwidth)."""
    ranked = sorted(points, key=lambda p: -p.median if higher else p.median)
    best = ranked[0]
    near = next((p for p in ranked[1:] if not clearly_apart(best, p)), None)
    name, ceil = avail.of_point(best) if avail is not None else (None, None)
    return RankedPoints(best.bytes, ranked, len(ranked) > 1 and near is None, near, name, ceil)


def one_sided_answers(results: Results) -> list[OneSidedAnswer]:
    """Per path, the best one-sided configuration (library, operation, synchronisation, window creation) by one-way
    bandwidth at the largest size all measured (preferring one with a ceiling), and by latency at 8 B."""
    avail = ceilings(results)
    points = measured(results.points(results.where(one_sided)))
    by_path: dict[tuple, dict[str, list[Point]]] = {}
    for p in points:
        kind = "bandwidth" if p.metric == "bw" and not results.engines.bidirectional(p.benchmark) else "latency" if p.metric == "t" \
            else None
        if kind:
            by_path.setdefault((p.sides, p.path_class), {}).setdefault(kind, []).append(p)
    out = []
    for (sides, path), kinds in by_path.items():
        answer = OneSidedAnswer(path=path_label(sides, path))
        bandwidth = kinds.get("bandwidth", [])
        if bandwidth:
            sizes: dict[str, set[int]] = {}
            for p in bandwidth:
                sizes.setdefault(f"{p.library} {p.operation}", set()).add(p.bytes)
            size = pick_size(sizes, lambda b: avail.at(bandwidth[0].benchmark, path, sides.send, sides.recv, b)[1]
                             is not None)
            answer.bandwidth = _ranked([p for p in bandwidth if p.bytes == size], True, avail)
        latency = kinds.get("latency", [])
        if latency:
            size = nearest({p.bytes for p in latency})
            answer.latency = _ranked([p for p in latency if p.bytes == size], False)
        out.append(answer)
    out.sort(key=lambda a: order(a.path))
    return out


def persistent_answers(results: Results) -> list[PersistentAnswer]:
    """Per library, the range of the persistent calls' speedup over the regular calls of the same launches, and at how
    many points either form is clearly faster."""
    by_lib: dict[str, list] = {}
    for pair in persistent_pairs(results):
        if pair.speedup is not None and pair.persistent.bytes > 0:
            by_lib.setdefault(pair.persistent.library, []).append(pair)
    out = []
    for lib, pairs in sorted(by_lib.items()):
        speedups = [x.speedup for x in pairs]
        apart = [x for x in pairs if clearly_apart(x.persistent, x.regular)]
        faster = sum(x.speedup > 1 for x in apart)
        what = sorted({" ".join(filter(None, [x.persistent.benchmark, x.operation])) for x in pairs})
        out.append(PersistentAnswer(library=lib, measured=what, lowest=min(speedups), highest=max(speedups),
                                    points=len(pairs), faster=faster, slower=len(apart) - faster))
    return out


def partitioned_answers(results: Results) -> list[PartitionedAnswer]:
    """Per library, memory and path, at the largest size measured: the overlap % with partitions marked ready per
    block of the kernel against after it, per partition count (medians over repetitions: the engine gives the
    overlap no interval, so no "faster" is said)."""
    figures: dict[tuple, dict[int, dict[str, float]]] = {}
    largest: dict[tuple, int] = {}
    groups = partitioned_overlap(results)
    for lib, sides, path, nbytes, _parts, _ready in groups:
        largest[(lib, sides, path)] = max(largest.get((lib, sides, path), 0), nbytes)
    for (lib, sides, path, nbytes, parts, ready), metrics in groups.items():
        if nbytes == largest[(lib, sides, path)]:
            overlaps = [m["overlap_pct"] for m in metrics]
            figures.setdefault((lib, sides, path), {}).setdefault(parts, {})[str(ready)] = median(overlaps)
    return [PartitionedAnswer(library=lib, path=path_label(sides, path), bytes=largest[(lib, sides, path)],
                              overlap_pct=dict(sorted(by_parts.items())))
            for (lib, sides, path), by_parts in sorted(figures.items())]
