# SPDX-License-Identifier: BSD-3-Clause
"""Answer 6: the best one-sided configuration per path, the persistent calls' speedup, and the overlap partitioned
communication buys (answers.py says how)."""

from __future__ import annotations

from statistics import median

from ..results.model import Point, Results
from ..results.peaks import ceilings
from ..results.records import one_sided
from .answers_data import FeatureAnswer, measured, nearest, pick_size
from .cells import clearly_apart, size_label
from .feature_tables import partitioned_overlap, persistent_pairs
from .wording import order, path_label, pct, precision_text, sig3, times

def _ranked_text(points: list[Point], higher: bool, unit: str, avail=None) -> str:
    """The best configuration (library and operation) of some points of one size, with its precision and % of
    ceiling, and whether it is clearly ahead of the next one."""
    ranked = sorted(points, key=lambda p: -p.median if higher else p.median)
    best = ranked[0]
    parts = [precision_text(best.precision, best.capped)]
    if avail is not None:
        name, ceil = avail.of_point(best)
        parts.append(f"{pct(100 * best.median / ceil)} of ceiling {name}" if ceil else
                     f"no ceiling measured at {size_label(best.bytes)}")
    text = f"{best.library} {best.operation} {sig3(best.median)} {unit} ({', '.join(parts)})"
    if len(ranked) == 1:
        return text + ", the only one measured"
    second = ranked[1]
    if all(clearly_apart(best, p) for p in ranked[1:]):  # apart from every other, not only the runner-up
        return text + (f", fastest of {len(ranked)}; next {second.library} "
                       f"{second.operation} {sig3(second.median)} {unit}")
    near = next(p for p in ranked[1:] if not clearly_apart(best, p))
    return text + f", not proven fastest of {len(ranked)}: not apart from {near.library} {near.operation}"


def one_sided_answers(results: Results) -> list[FeatureAnswer]:
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
        said = []
        bandwidth = kinds.get("bandwidth", [])
        if bandwidth:
            sizes: dict[str, set[int]] = {}
            for p in bandwidth:
                sizes.setdefault(f"{p.library} {p.operation}", set()).add(p.bytes)
            size = pick_size(sizes, lambda b: avail.at(bandwidth[0].benchmark, path, sides.send, sides.recv, b)[1]
                              is not None)
            said.append(f"bandwidth at {size_label(size)}: "
                        + _ranked_text([p for p in bandwidth if p.bytes == size], True, "GB/s", avail))
        latency = kinds.get("latency", [])
        if latency:
            size = nearest({p.bytes for p in latency})
            said.append(f"latency at {size_label(size)} B: "
                        + _ranked_text([p for p in latency if p.bytes == size], False, "us"))
        out.append(FeatureAnswer("one-sided", f"{path_label(sides, path)}: {'; '.join(said)}"))
    out.sort(key=lambda a: order(a.sentence.partition(":")[0]))
    return out


def persistent_answers(results: Results) -> list[FeatureAnswer]:
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
        out.append(FeatureAnswer("persistent", (
            f"{lib} ({', '.join(what)}): persistent calls {times(min(speedups))} to {times(max(speedups))} the "
            f"speed of the regular ones over {len(pairs)} points; clearly faster at {faster}, clearly slower at "
            f"{len(apart) - faster}, not proven different at {len(pairs) - len(apart)}")))
    return out


def partitioned_answers(results: Results) -> list[FeatureAnswer]:
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
    out = []
    for (lib, sides, path), by_parts in sorted(figures.items()):
        per = []
        for parts, by_ready in sorted(by_parts.items()):
            block, after = by_ready.get("per-block"), by_ready.get("after-kernel")
            if block is not None and after is not None:
                per.append(f"P={parts} {block:.0f} % vs {after:.0f} % ({block - after:+.0f} points)")
            else:
                per.append(f"P={parts} " + ", ".join(f"{ready} {v:.0f} %" for ready, v in sorted(by_ready.items())))
        out.append(FeatureAnswer("partitioned", (
            f"{lib}, {path_label(sides, path)}, at {size_label(largest[(lib, sides, path)])}: overlap per-block vs "
            f"after-kernel: {'; '.join(per)}")))
    return out
