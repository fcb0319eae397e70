"""Planning: a campaign expanded into engine launches (one per block, benchmark, library, memory, strategy, ranks,
operation and repetition), with what cannot run skipped and the reason; the results directory and its plan file
(``plan.json``, what a resume runs from)."""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from .mpilibs import MpiLibrary
from .outputs import write_new
from .spec import DEFAULT_OPERATIONS, PT2PT, Block, Campaign, CampaignError, bench_names, kind_ok, parse_memory

# What the engine can do with --transport nccl (the engine refuses the rest with status "unsupported").
NCCL_BENCHMARKS = ("latency", "bw", "bibw", "coll")
NCCL_OPERATIONS = ("bcast", "reduce", "allreduce", "allgather", "allgatherv", "gather", "gatherv", "scatter",
                   "scatterv", "alltoall", "alltoallv", "reduce_scatter_block")
NCCL_NO_OPERATION = {"reduce_scatter": "NCCL reduces-scatters equal counts only: use reduce_scatter_block",
                     "barrier": "NCCL has no barrier"}


@dataclass
class Launch:
    launch_id: str
    library: str
    benchmark: str
    memory: str
    strategy: str
    ranks: int
    repetition: int
    engine_args: list[str]  # after the engine path, without --out
    env: dict[str, str]
    planned_path: str | None
    bind: str | None
    timeout_s: float


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", s).strip("_") or "x"


def engine_args(bench: str, block: Block, memory: str, strategy: str, operation: str | None = None,
                transport: str = "mpi") -> list[str]:
    a = [bench]
    if operation is None and bench in DEFAULT_OPERATIONS:
        operation = (block.operations or DEFAULT_OPERATIONS[bench])[0]
    if operation:
        a.append(operation)
    if block.sizes:
        a += ["--sizes", str(block.sizes)]
    if memory:
        send, recv = parse_memory(memory)
        a += ["--send", send, "--recv", recv]
    if strategy:
        a += ["--strategy", strategy]
    if transport != "mpi":  # the engine's default; older engines do not know the option
        a += ["--transport", transport]
    for k, v in block.options.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            a.append(flag)
        elif v is False or v is None:
            continue
        else:
            a += [flag, str(v)]
    return a


def not_aware_reason(lib: MpiLibrary, short: bool = False) -> str:
    """Why device pointers are not handed to ``lib`` (its ``cuda_aware`` is False, or None: unknown, planned as
    not aware: a library that cannot move device memory may crash or deliver wrong data)."""
    if lib.cuda_aware is None:
        what = ("CUDA awareness unknown (treated as not aware; `gmb doctor` proves it, declare cuda_aware = true "
                "in the libraries config when it says aware)")
    else:
        what = "library is not CUDA-aware"
    return what if short else what + "; device pointers are not handed to it (staged-pinned instead)"


def nccl_refusal(bench: str, block: Block, memory: str, strategy: str) -> tuple[str, str] | None:
    """(what, reason) when a point of a block cannot run with --transport nccl, else None."""
    if bench not in NCCL_BENCHMARKS:
        return bench, f"runs under MPI only (NCCL transport: {', '.join(NCCL_BENCHMARKS)})"
    if bench == "coll":
        kinds = {block.options.get(k) for k in ("mem", "mem-root", "mem-others", "mem_root", "mem_others")} - {None}
        if kinds != {"device"}:
            return bench, "NCCL moves device memory only (the block needs options mem = \"device\")"
        return None
    if memory != "device:device":
        return f"{bench} {memory or 'host:host'}", "NCCL moves device memory only (device:device)"
    if strategy not in ("", "direct"):
        return f"{bench} {memory} {strategy}", "NCCL is handed device buffers directly (no staging strategy)"
    if block.gpus is not None and len(set(block.gpus)) < len(block.gpus):
        return f"{bench} {memory} gpus {block.gpus}", "NCCL needs one GPU per rank"
    return None


def _operations(bench: str, block: Block, lib: MpiLibrary, name: str, skipped: list) -> list[str | None]:
    """The operation argument of each launch of ``bench``: one per operation, or one joined list."""
    if bench not in DEFAULT_OPERATIONS:
        return [None]
    ops = list(block.operations or DEFAULT_OPERATIONS[bench])
    if lib.transport == "nccl":
        for op in [o for o in ops if o not in NCCL_OPERATIONS]:
            skipped.append((name, f"{bench} {op}", NCCL_NO_OPERATION.get(op, "no NCCL counterpart")))
        ops = [o for o in ops if o in NCCL_OPERATIONS]
    if block.join_operations and ops:
        return [",".join(ops)]
    return ops


def _hands_device_pointers(bench: str, memory: str, strategy: str) -> bool:
    """A point-to-point point whose device buffers go to MPI as they are (the direct strategy, the engine's default
    when none is given)."""
    if strategy == "direct":
        return "device" in memory
    return strategy == "" and bench in PT2PT and bool(memory) and "device" in parse_memory(memory)


def plan(c: Campaign, libs: list[MpiLibrary], caps_by_lib: dict[str, dict] | None = None, hosts: int | None = None
         ) -> tuple[list[Launch], list[tuple[str, str, str]]]:
    """Expand the matrix. Returns (launches in run order, skipped (library, what, reason)). ``hosts``: how many
    hosts the launches may use (--nodes, a hostfile's hosts); 1 skips blocks of path "inter-node", None: unknown."""
    caps_by_lib = caps_by_lib or {}
    by_name = {lib.name: lib for lib in libs}
    skipped = list(c.skipped)
    launches: list[Launch] = []
    for bi, block in enumerate(c.blocks):
        if hosts == 1 and block.path == "inter-node":
            skipped.append(("all", f"block {bi + 1} (inter-node)", "one host: give --nodes 2 or more (srun), or a "
                                                                   "--hostfile with 2 hosts or more"))
            continue
        wanted = block.libraries or c.libraries
        names = list(by_name) if "*" in wanted else wanted
        for name in names:
            if name not in by_name:
                skipped.append((name, f"block {bi + 1}", "library not found or not selected, or it has no engine "
                                                          "(see `gmb libs`, --library)"))
                continue
            lib = by_name[name]
            caps = caps_by_lib.get(name)
            if lib.transport == "nccl" and caps is not None and not caps.get("features", {}).get("nccl"):
                skipped.append((name, f"block {bi + 1}", "the engine was built without NCCL (features.nccl false)"))
                continue
            for bench in block.benchmarks:
                if caps is not None:
                    info = bench_names(caps).get(bench)
                    if info is None:
                        skipped.append((name, bench, "engine does not list this benchmark"))
                        continue
                if lib.transport == "nccl" and bench not in NCCL_BENCHMARKS:
                    skipped.append((name, *nccl_refusal(bench, block, "", "")))
                    continue
                ops = _operations(bench, block, lib, name, skipped)
                for mem in block.memory:
                    if caps is not None and mem:
                        bad = [k for k in dict.fromkeys(parse_memory(mem)) if not kind_ok(caps, k)[0]]
                        if bad:
                            skipped.append((name, f"{bench} {mem}", f"memory kind {bad[0]} unavailable: "
                                                                    f"{kind_ok(caps, bad[0])[1]}"))
                            continue
                    for strat in block.strategies:
                        if lib.transport == "nccl":
                            refused = nccl_refusal(bench, block, mem, strat)
                            if refused:
                                skipped.append((name, *refused))
                                continue
                        elif lib.cuda_aware is not True and _hands_device_pointers(bench, mem, strat):
                            skipped.append((name, f"{bench} {mem} {strat or 'direct'}",
                                            not_aware_reason(lib, short=True)))
                            continue
                        for ranks in block.ranks:
                            min_ranks = (bench_names(caps).get(bench, {}).get("min_ranks") if caps else None) or 1
                            if ranks < min_ranks:
                                skipped.append((name, f"{bench} n={ranks}", f"needs at least {min_ranks} ranks"))
                                continue
                            env = dict(block.env)
                            if block.gpus is not None:
                                env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in dict.fromkeys(block.gpus))
                            for op, rep in ((o, r) for o in ops for r in range(1, c.repetitions + 1)):
                                b = f"{bench}-{op.replace(',', '+')}" if op else bench
                                lid = _safe(f"b{bi + 1}.{name}.{b}.{mem or 'na'}.{strat or 'na'}.n{ranks}.r{rep}")
                                launches.append(Launch(lid, name, bench, mem, strat, ranks, rep,
                                                       engine_args(bench, block, mem, strat, op, lib.transport), env,
                                                       block.path, block.bind, c.timeout_s))
    peaks = [x for x in launches if x.benchmark == "peaks"]
    rest = [x for x in launches if x.benchmark != "peaks"]
    if c.order == "random":
        rng = random.Random(c.seed)
        rng.shuffle(rest)
    return peaks + rest, skipped


def new_results_dir(base: str | Path, name: str) -> Path:
    """results/<campaign>-<UTC time>/, never reusing an existing directory."""
    base = Path(base)
    base.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    d = base / f"{_safe(name)}-{stamp}"
    n = 2
    while True:
        try:
            d.mkdir()
            return d
        except FileExistsError:
            d = base / f"{_safe(name)}-{stamp}-{n}"
            n += 1


def write_plan(outdir: Path, c: Campaign, launches: list[Launch], skipped, libs: list[MpiLibrary],
               engines: dict[str, str]):
    data = {"campaign": c.name, "created_utc": datetime.now(timezone.utc).isoformat(), "seed": c.seed,
            "stop_library_after": c.stop_library_after,
            "launches": [asdict(x) for x in launches], "skipped": skipped,
            "libraries": [lib.describe() for lib in libs], "engines": engines}
    write_new(outdir / "plan.json", json.dumps(data, indent=1))
    write_new(outdir / "campaign.toml", c.to_toml())


def read_plan(outdir: Path) -> dict:
    """plan.json of a results directory, checked: a damaged one is a CampaignError naming what is wrong, and
    ``launches`` holds Launch objects."""
    p = Path(outdir) / "plan.json"
    if not p.is_file():
        raise CampaignError(f"{outdir}: not a campaign results directory (no plan.json)")
    try:
        data = json.loads(p.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise CampaignError(f"{p}: damaged, not valid JSON ({exc}); cannot resume") from None
    if not isinstance(data, dict):
        raise CampaignError(f"{p}: damaged, expected a JSON object; cannot resume")
    problems = []
    if not isinstance(data.get("campaign"), str):
        problems.append("'campaign' must be a string")
    if not isinstance(data.get("engines"), dict):
        problems.append("'engines' must be an object")
    if not isinstance(data.get("libraries"), list) or not all(isinstance(d, dict) and isinstance(d.get("name"), str)
                                                              for d in data["libraries"]):
        problems.append("'libraries' must be a list of objects with a name")
    stop = data.get("stop_library_after", 3)
    if not isinstance(stop, int) or isinstance(stop, bool) or stop < 0:
        problems.append("'stop_library_after' must be an integer >= 0")
    launches = data.get("launches")
    fields = set(Launch.__dataclass_fields__)
    if not isinstance(launches, list):
        problems.append("'launches' must be a list")
    else:
        for i, d in enumerate(launches):
            if not isinstance(d, dict) or set(d) != fields:
                problems.append(f"launch #{i + 1} must be an object with the keys {', '.join(sorted(fields))}")
                break
            if not (isinstance(d["launch_id"], str) and isinstance(d["library"], str) and
                    isinstance(d["engine_args"], list) and isinstance(d["env"], dict) and
                    isinstance(d["ranks"], int) and isinstance(d["timeout_s"], (int, float))):
                problems.append(f"launch #{i + 1} ({d.get('launch_id')!r}) has values of the wrong type")
                break
    if problems:
        raise CampaignError(f"{p}: damaged ({'; '.join(problems)}); cannot resume")
    data["launches"] = [Launch(**d) for d in launches]
    return data


def copy_campaign_file(src: Path, outdir: Path):
    write_new(outdir / f"source-{src.name}", src.read_bytes())
