# SPDX-License-Identifier: BSD-3-Clause
"""What the engines that wrote a store's results say about what they measured: their benchmarks (which one counts
both directions, which ones are bandwidths), memory kinds (which side is host memory, pinned or pageable),
transfer strategies (which side stages through what) and the copies ``peaks`` measures (which path each bounds).

Every engine's description (``gmb-bench list --format json``) is stored with its library's results (the store's
``engines`` table, a results directory's ``engines/`` files). The tables, answers and figures ask these facts,
never a list of their own. Several engines: the first that lists a name answers for it (engines of one source tree
agree; a store made again from raw records labels them by their contexts, the engine files by the campaign's names).
Records stored without any description (ingested without their ``engines/*.json``) get no facts: no ceiling bounds
them and none of their benchmarks counts both directions; the report says so.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.description import Benchmark, Ceiling, DescriptionError, EngineDescription, MemoryKind, Strategy

ENGINE_FILE_SCHEMA = "gmb.engine-of/1"  # a results directory's engines/<library>.json: a library and its description


@dataclass(frozen=True)
class EngineFacts:
    benchmarks: dict[str, Benchmark] = field(default_factory=dict)
    kinds: dict[str, MemoryKind] = field(default_factory=dict)
    strategies: dict[str, Strategy] = field(default_factory=dict)
    ceilings: tuple[Ceiling, ...] = ()
    described: tuple[str, ...] = ()  # the libraries whose engine's description was stored

    @classmethod
    def of(cls, descriptions: dict[str, EngineDescription]) -> EngineFacts:
        benchmarks: dict[str, Benchmark] = {}
        kinds: dict[str, MemoryKind] = {}
        strategies: dict[str, Strategy] = {}
        ceilings: dict[str, Ceiling] = {}
        for d in descriptions.values():
            for name, b in d.benchmarks.items():
                benchmarks.setdefault(name, b)
            for name, k in d.kinds.items():
                kinds.setdefault(name, k)
            for name, s in d.strategies.items():
                strategies.setdefault(name, s)
            for c in d.ceilings:
                ceilings.setdefault(c.operation, c)
        return cls(benchmarks, kinds, strategies, tuple(ceilings.values()), tuple(sorted(descriptions)))

    def bidirectional(self, benchmark: str) -> bool:
        """Its figures count both directions at once (bibw, rma_bibw)."""
        b = self.benchmarks.get(benchmark)
        return bool(b and b.bidirectional)

    def bandwidth_order(self, benchmark: str) -> tuple:
        """Which bandwidth benchmark answers for a path first: point to point before multi-pair before the others
        (one-sided, partitioned), one direction before both, then by name."""
        b = self.benchmarks.get(benchmark)
        if b is None or not b.bandwidth:
            return (3, 0, benchmark)
        family = {"pt2pt": 0, "multi-pair": 1}.get(b.family, 2)
        return (family, 1 if b.bidirectional else 0, benchmark)

    def host_side(self, kind: str | None) -> bool:
        """Memory the CPU holds: host memory, pinned or pageable, and managed memory placed on the host."""
        k = self.kinds.get(kind or "")
        return bool(k and k.host_accessible and (not k.gpu_backed or k.placement == "host"))

    def host_memory(self, kind: str | None) -> str:
        """The host-memory property a host side's copies are measured with: "page_locked" or "pageable"."""
        k = self.kinds.get(kind or "")
        return "page_locked" if k and k.page_locked else "pageable"

    def copies(self, direction: str, host_memory: str) -> list[str]:
        """The host<->device copies (peaks operations) of that direction over host memory of that property."""
        return [c.operation for c in self.ceilings if c.direction == direction and c.host_memory == host_memory]

    def bounding(self, path_class: str, sides: tuple[str | None, ...] = ()) -> list[str]:
        """The copies that bound transfers over a path class (the largest measured at a size bounds:
        peaks.Ceilings); one measured on buffers of a property (the network's on GPU buffers) only where every side
        of the transfer (``sides``: its memory kinds) has that property."""
        return [c.operation for c in self.ceilings if path_class in c.bounds
                and (c.buffers is None or (bool(sides) and all(self._has(k, c.buffers) for k in sides)))]

    def ceiling(self, operation: str) -> Ceiling | None:
        """The copy of that name, as the engines describe it."""
        return next((c for c in self.ceilings if c.operation == operation), None)

    def _has(self, kind: str | None, prop: str) -> bool:
        k = self.kinds.get(kind or "")
        return bool(k and getattr(k, prop, False) is True)


def engine_file(library: str, description: EngineDescription) -> dict:
    """What a results directory keeps in engines/<library>.json."""
    return {"schema": ENGINE_FILE_SCHEMA, "library": library, "description": description.raw}


def read_engine_file(path: str | Path) -> tuple[str, EngineDescription]:
    """(library, its engine's description) from an engines/<library>.json file; ValueError saying what is wrong."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{p}: not an engine file ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != ENGINE_FILE_SCHEMA or not isinstance(data.get("library"), str):
        raise ValueError(f"{p}: not an engine file (a JSON object with schema {ENGINE_FILE_SCHEMA!r}, the library's "
                         f"name and its engine's description, as gmb run writes into RESULTS/engines/)")
    try:
        return data["library"], EngineDescription(data.get("description"), source=str(p))
    except DescriptionError as exc:
        raise ValueError(str(exc)) from None


def keep_engines(outdir: Path, store, descriptions: dict[str, EngineDescription]):
    """Keep each library's engine description with its results: in the store (what the report reads) and as
    RESULTS/engines/<library>.json (what ``gmb ingest`` takes back with the raw records). A file is never
    overwritten: a name already taken gets a number."""
    folder = outdir / "engines"
    folder.mkdir(exist_ok=True)
    for library, description in sorted(descriptions.items()):
        store.record_engine(library, description.raw)
        stem = re.sub(r"[^A-Za-z0-9._+-]", "_", library)
        for n in itertools.count(1):
            try:
                with open(folder / (f"{stem}.json" if n == 1 else f"{stem}.{n}.json"), "x") as f:
                    json.dump(engine_file(library, description), f, indent=1, sort_keys=True)
                break
            except FileExistsError:
                continue
