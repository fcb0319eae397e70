# SPDX-License-Identifier: BSD-3-Clause
"""The results model: a store's records read once, as typed results, their points and their configurations named.

``Results.load(store)`` reads every result, context, launch and skipped point of a store once (stored_rows) and parses
each record's JSON once; tables, answers, figures, comparisons and CSV read this model, never the store. Its points
(points.combine) are made once per metric, whichever subset asks. Points of one library that differ in a setting,
the binding or the hosts are named apart (configuration_labels).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from ..engine.description import EngineDescription
from .engine_facts import EngineFacts
from .points import Point, PointKey, combine
from .result_facts import CEILINGS
from .run_conditions import RunConditions
from .store import Store
from .stored_rows import (Context, LaunchRecord, Result, Skipped, column_json, once_each, read_launch, read_result,
                          readable)


@dataclass
class Results:
    """Everything a report reads of a store, read once (Results.load)."""
    results: list[Result]  # every status, ordered by library, benchmark, memory and size
    contexts: list[Context]
    launches: list[LaunchRecord]
    skipped: list[Skipped]
    meta: dict[str, str] = field(default_factory=dict)
    engines: EngineFacts = field(default_factory=EngineFacts)  # what the engines that wrote them say
    # What of the store was left out, for its reader to be told: rows that cannot be read (a damaged store), rows
    # that repeat a measurement
    left_out: list[str] = field(default_factory=list)
    _points: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # metric -> combine(ok())

    @classmethod
    def load(cls, store: Store) -> Results:
        problems: Counter = Counter()
        launches = readable(store.launches(), read_launch, "launches", problems)
        loads = {x.launch_id: x.load for x in launches}
        results, repeated = once_each(readable([{**r, "launch_load": loads.get(r["launch_id"])}
                                                for r in store.results(status=None)], read_result, "results", problems))
        labels = configuration_labels(results)
        for r in results:
            r.configuration, r.variant = labels[_label_key(r)]
        contexts = readable(store.contexts(), lambda c: Context(
            c["run_id"], c["launch_id"], c["library"], c["library_version"], c["gpu_awareness"],
            column_json(c, "json", {}, required=True)), "contexts", problems)
        skipped = [Skipped(s["library"], s["what"], s["reason"]) for s in store.skipped()]
        meta = {r["key"]: r["value"] for r in store.rows("SELECT key, value FROM meta")}
        engines = EngineFacts.of({lib: EngineDescription(raw, source=f"{store.path}: the engine of {lib}")
                                  for lib, raw in store.engines().items()})
        left_out = []
        if problems:
            left_out.append(
                f"{store.path}: {sum(problems.values())} row(s) cannot be read ("
                + "; ".join(f"{what}: {n}" for what, n in sorted(problems.items())) + "): left out of every table, "
                f"figure and comparison; the store is damaged: make a new one from its record files (gmb ingest "
                f"NEW.sqlite RESULTS/raw/*.jsonl RESULTS/engines/*.json)")
        if repeated:
            left_out.append(f"{store.path}: the store holds {repeated} duplicate row(s) of results (the same run and "
                            f"point stored more than once): each measurement counted once")
        return cls(results, contexts, launches, skipped, meta, engines, left_out)

    def ceilings(self) -> list[Result]:
        """The ok ceiling records (peaks): what bounds each path, measured without MPI."""
        return [r for r in self.ok() if r.ceiling]

    def ok(self, benchmark: str | None = None) -> list[Result]:
        """The ok results (of one benchmark)."""
        return [r for r in self.results if r.status == "ok" and benchmark in (None, r.benchmark)]

    def points(self, chosen: list[Result] | None = None, metric: str | None = None) -> list[Point]:
        """The points of the ok results (those of ``chosen`` where given), of their headline statistic or of
        ``metric``. The ok results are combined once per metric, so every answer and table reads the same points,
        whole: each with all its launches, its launch noise pooled over its whole series, whichever subset asks."""
        if metric not in self._points:
            self._points[metric] = combine(self.ok(), metric)
        if chosen is None:
            return self._points[metric]
        keys = {PointKey.of(r, metric or r.headline) for r in chosen if (metric or r.headline) in r.stats}
        return [p for p in self._points[metric] if p.key in keys]

    def where(self, keep, status: str | None = "ok") -> list[Result]:
        """The results (of that status; None: any) whose record passes ``keep``, benchmark by benchmark."""
        chosen = [r for r in self.results if status in (None, r.status) and keep(r.record)]
        return sorted(chosen, key=lambda r: r.benchmark)

    def libraries(self) -> list[str]:
        return sorted({r.library for r in self.results})

    def undescribed(self) -> bool:
        """No engine description came with these results (records ingested without their engines/*.json): nothing
        tells what bounds their transfers or which benchmark counts both directions."""
        return bool(self.results) and not self.engines.described


# ---------------------------------------------------------------------------------------------- configuration names
def _label_key(r: Result) -> tuple:
    return r.library, r.benchmark, r.ranks, r.config.canonical


def point_label_key(p: Point) -> tuple:
    """The key of a point's configuration in configuration_labels."""
    return p.key.library, p.key.benchmark, p.key.ranks, p.config.canonical if p.config else ""


def configuration_labels(results: list[Result], hosts: bool = True) -> dict[tuple, tuple[str, str]]:
    """(library, benchmark, ranks, canonical configuration) -> (the configuration's name, its variant). The name is
    the library's, followed by the settings and hosts that differ among the library's results and the binding that
    differs among those of the same rank count (launchers bind 2 ranks otherwise than 4 by default), ceilings aside:
    they measure no library; e.g. "openmpi-5.0.7-ucx [UCX_RNDV_THRESH=8192]", the library's name alone where nothing
    differs. The variant names the options that differ among the library's results of the benchmark ("window=16"),
    "" where none do. ``hosts=False``: names without the hosts, for a configuration over node counts."""
    configs = {_label_key(r): r.config for r in results}
    by_library: dict[str, list[RunConditions]] = {}
    by_ranks: dict[tuple, list[RunConditions]] = {}
    by_benchmark: dict[tuple, list[RunConditions]] = {}
    for (lib, bench, ranks, _), c in configs.items():
        if bench != CEILINGS:  # a ceiling measures no library: its settings name no configuration
            by_library.setdefault(lib, []).append(c)
            by_ranks.setdefault((lib, ranks), []).append(c)
        by_benchmark.setdefault((lib, bench), []).append(c)

    def differing(cs: list[RunConditions], part: str) -> list[str]:
        names = sorted({k for c in cs for k in getattr(c, part)})
        return [k for k in names if len({json.dumps(getattr(c, part).get(k)) for c in cs}) > 1]

    labels = {}
    for key, c in configs.items():
        lib, bench, ranks, _ = key
        mates = by_library.get(lib, [c])
        # the settings it sets that differ; only where it sets none of them, the ones it leaves unset
        keys = differing(mates, "settings")
        parts = [f"{k}={c.settings[k]}" for k in keys if k in c.settings] or [f"{k} unset" for k in keys]
        if len({x.binding for x in by_ranks.get((lib, ranks), [c])}) > 1:
            parts.append(f"binding {c.binding or 'not recorded'}")
        if hosts and len({x.hosts for x in mates}) > 1:
            parts.append(f"{c.hosts} host{'s' if c.hosts != 1 else ''}" if c.hosts else "hosts not recorded")
        variant = [f"{k}={_option_text(c.options[k])}" if k in c.options else f"{k} not given"
                   for k in differing(by_benchmark[(lib, bench)], "options")]
        labels[key] = (f"{lib} [{', '.join(parts)}]" if parts else lib, " ".join(variant))
    return labels


def _option_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)
