"""Tables derived from the store: combined repetitions, fraction of peak, non-ok points. CSV export.

Combining repetitions (separate launches of the same point): the point's value is the median of the
per-launch medians; its interval is the envelope [min ci95_low, max ci95_high] over launches, which covers
both the within-launch CI of each median and the spread between launches (conservative on purpose).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from statistics import median

from .peaks import ceiling_for, ceilings
from .store import Store

METRIC_OF = {"latency": "t", "bw": "bw", "bibw": "bw", "mbw": "bw", "coll": "busbw", "nbc": "t",
             "peaks": "bw", "halo": "t", "um": "t"}
HIGHER_IS_BETTER = {"bw", "busbw", "rate"}
UNIT_OF = {"t": "us", "bw": "GB/s", "busbw": "GB/s", "rate": "M msg/s"}


@dataclass
class Point:
    library: str
    benchmark: str
    operation: str | None
    memory: str
    strategy: str | None
    ranks: int | None
    bytes: int
    path_class: str | None
    nominal: float | None
    metric: str
    median: float
    low: float  # interval (see module doc)
    high: float
    p5: float
    p95: float
    reps: int


def combine(rows: list[dict], metric: str | None = None) -> list[Point]:
    """Group result rows over repetitions per (library, benchmark, operation, memory, strategy, ranks, path class,
    bytes): device:device between two GPUs and on one GPU are different points."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        m = metric or METRIC_OF.get(r["benchmark"], "t")
        if r.get(f"{m}_median") is None:
            continue
        key = (r["library"], r["benchmark"], r["operation"], r["memory"], r["strategy"], r["ranks"],
               r["path_class"], r["bytes"], m)
        groups.setdefault(key, []).append(r)
    out = []
    for (lib, bench, op, mem, strat, ranks, _path, nbytes, m), rs in groups.items():
        meds = [r[f"{m}_median"] for r in rs]
        lows = [r[f"{m}_ci95_low"] if r[f"{m}_ci95_low"] is not None else r[f"{m}_median"] for r in rs]
        highs = [r[f"{m}_ci95_high"] if r[f"{m}_ci95_high"] is not None else r[f"{m}_median"] for r in rs]
        p5s = [r[f"{m}_p5"] if r[f"{m}_p5"] is not None else r[f"{m}_median"] for r in rs]
        p95s = [r[f"{m}_p95"] if r[f"{m}_p95"] is not None else r[f"{m}_median"] for r in rs]
        out.append(Point(lib, bench, op, mem, strat, ranks, nbytes, rs[0]["path_class"], rs[0]["nominal_GBps"], m,
                         median(meds), min(lows), max(highs), min(p5s), max(p95s), len(rs)))
    out.sort(key=lambda p: (p.library, p.benchmark, p.operation or "", p.memory, p.strategy or "", p.ranks or 0,
                            p.path_class or "", p.bytes))
    return out


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list]
    note: str = ""

    def write_csv(self, path: Path):
        with open(path, "x", newline="") as f:
            w = csv.writer(f)
            w.writerow(self.columns)
            w.writerows(self.rows)


def fraction_of_peak(store: Store) -> Table:
    """Per library, benchmark (bw, bibw, mbw), memory placement and path: peak MPI bandwidth over sizes,
    its share of the measured ceiling and of the nominal link rate."""
    avail = ceilings(store)
    best: dict[tuple, Point] = {}
    for p in combine([r for b in ("bw", "bibw", "mbw") for r in store.results(b)]):
        key = (p.library, p.benchmark, p.memory, p.strategy, p.path_class)
        if key not in best or p.median > best[key].median:
            best[key] = p
    # Sizes whose data arrived wrong are not results: the peak is over the sizes that validated, and the
    # table says how many did not (a library that corrupts large messages must not look merely slow).
    failed: dict[tuple, set] = {}
    for b in ("bw", "bibw", "mbw"):
        for r in store.results(b, status="failed"):
            key = (r["library"], r["benchmark"], r["memory"], r["strategy"], r["path_class"])
            failed.setdefault(key, set()).add(r["bytes"])
    rows = []
    for (lib, bench, mem, strat, path), p in sorted(best.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        send, _, recv = mem.partition(":")
        op, ceil = ceiling_for(bench, path, send, recv, avail)
        nominal = p.nominal * (2 if bench == "bibw" else 1) if p.nominal else None
        rows.append([lib, bench, mem, strat or "", path or "", _size(p.bytes), round(p.median, 3),
                     round(100 * p.median / ceil, 1) if ceil else "", op or "",
                     round(ceil, 2) if ceil else "", round(100 * p.median / nominal, 1) if nominal else "",
                     nominal if nominal else "", len(failed.get((lib, bench, mem, strat, path), ())) or ""])
    return Table("Fraction of peak", ["library", "benchmark", "memory", "strategy", "path", "at size",
                                      "peak MPI GB/s", "% of ceiling", "ceiling", "ceiling GB/s",
                                      "% of nominal", "nominal GB/s", "sizes failed validation"], rows,
                 "Peak = best median over sizes (median of repetitions) among the sizes whose data validated. "
                 "Ceiling measured without MPI by the peaks benchmark; bibw is compared with twice the one-way "
                 "ceiling and nominal rate. 'sizes failed validation': message sizes where the library delivered "
                 "wrong data (no figure is taken from them).")


def collectives_table(store: Store, largest: int = 3) -> Table:
    """Bus bandwidth per collective operation, rank count and memory at the largest sizes, one column per library
    (MPI libraries and NCCL side by side), the fastest library and how many times faster it is than the slowest
    one. This is where an MPI allreduce on device buffers that is hundreds of times slower than NCCL's shows."""
    pts = [p for p in combine(store.results("coll")) if p.bytes > 0]
    libs = sorted({p.library for p in pts})
    groups: dict[tuple, dict[int, dict[str, Point]]] = {}
    for p in pts:
        groups.setdefault((p.operation or "", p.ranks or 0, p.memory), {}).setdefault(p.bytes, {})[p.library] = p
    rows = []
    for (op, ranks, mem), by_size in sorted(groups.items()):
        # the largest sizes measured by more than one library (comparable), else the largest sizes
        shared = [b for b, per_lib in by_size.items() if len(per_lib) > 1]
        for b in sorted(shared or by_size, reverse=True)[:largest][::-1]:
            per_lib = by_size[b]
            best = max(per_lib.values(), key=lambda p: p.median)
            worst = min(per_lib.values(), key=lambda p: p.median)
            ratio = round(best.median / worst.median, 1) if len(per_lib) > 1 and worst.median > 0 else ""
            rows.append([op, ranks, mem, _size(b),
                         *[round(per_lib[lib].median, 2) if lib in per_lib else "" for lib in libs],
                         best.library if len(per_lib) > 1 else "", ratio])
    return Table("Collectives: bus bandwidth at the largest sizes (GB/s)",
                 ["operation", "ranks", "memory", "size", *libs, "fastest", "fastest / slowest"], rows,
                 "Bus bandwidth (nccl-tests factors), median of repetitions; the largest sizes that more than one "
                 "library measured. fastest / slowest: how many times the fastest library's bus bandwidth "
                 "exceeds the slowest one's.")


def ceilings_table(store: Store) -> Table:
    rows = [[op, round(v, 2)] for op, v in sorted(ceilings(store).items())]
    return Table("Measured ceilings (no MPI)", ["operation", "GB/s"], rows)


def latency_table(store: Store, sizes=(1, 8, 1024, 65536, 1 << 20)) -> Table:
    pts = [p for p in combine(store.results("latency")) if p.bytes in sizes]
    cols = sorted({p.bytes for p in pts})
    rowmap: dict[tuple, dict[int, float]] = {}
    for p in pts:
        rowmap.setdefault((p.library, p.memory, p.strategy or "", p.path_class or ""), {})[p.bytes] = p.median
    rows = [[*k, *[round(v[c], 3) if c in v else "" for c in cols]] for k, v in sorted(rowmap.items())]
    return Table("One-way latency (us, median)", ["library", "memory", "strategy", "path",
                                                  *[_size(c) for c in cols]], rows)


def status_table(store: Store) -> Table:
    rows = [[r["library"], r["benchmark"], r["memory"], r["strategy"] or "", r["status"], r["reason"] or "",
             r["points"]] for r in store.non_ok()]
    for s in store.skipped():
        rows.append([s["library"], s["what"], "", "", "skipped", s["reason"], ""])
    for launch in store.launches():
        if launch["status"] not in ("ok",):
            rows.append([launch["library"], launch["benchmark"], launch["memory"] or "", launch["strategy"] or "",
                         f"launch {launch['status']}", launch["reason"] or "", launch["launch_id"]])
    return Table("Not measured (unsupported, failed, skipped, timed out)",
                 ["library", "benchmark", "memory", "strategy", "status", "reason", "points / launch"], rows)


def all_tables(store: Store) -> list[Table]:
    return [fraction_of_peak(store), ceilings_table(store), latency_table(store), collectives_table(store),
            status_table(store)]


def export_csv(tables: list[Table], outdir: str | Path) -> list[Path]:
    """One CSV per table; refuses to overwrite (files opened with mode 'x')."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for t in tables:
        name = "".join(c if c.isalnum() else "_" for c in t.title.lower()).strip("_")
        while "__" in name:
            name = name.replace("__", "_")
        path = outdir / f"{name}.csv"
        if path.exists():
            raise FileExistsError(f"{path} exists; not overwriting")
        t.write_csv(path)
        written.append(path)
    return written


def _size(b: int) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


size_label = _size
