# SPDX-License-Identifier: BSD-3-Clause
"""The campaign spec: a campaign file (TOML) read and checked, before anything is built or run.

Campaign file::

    [campaign]
    name = "quick"
    repetitions = 3          # separate launches per point, run in randomised order
    order = "random"         # or "sequential"
    seed = 1                 # the shuffle is reproducible; the seed is kept in plan.json
    timeout_s = 300          # per launch; a hung launch is killed and recorded as "timeout"
    stop_library_after = 3   # after this many failed/timed-out launches in a row, a library's remaining
                             # launches are recorded as skipped (a broken library does not eat the time); 0: never
    libraries = ["*"]        # names (see `gmb libs`), "*" = all
    nic = "nearest"          # optional, every block's default: the network card each local rank uses (below)
    bundle = true            # optional: launches that can share one engine launch run in one (gmb-bench plan),
                             # one launch per repetition of each bundle (run/bundles.py); default false

    [[run]]                  # one block of the matrix; several blocks allowed
    benchmarks = ["latency", "bw", "bibw"]
    memory = ["host:host", "device:device"]   # send:recv kinds (point to point); omit for others
    strategies = ["direct"]
    sizes = "1:4M"
    ranks = [2]
    gpus = [0, 1]            # optional: CUDA_VISIBLE_DEVICES for the launch (rank i -> i-th listed GPU)
    path = "nvlink"          # optional: the path class this block is meant to exercise
    bind = "core"            # optional: launcher binding
    options = { iters = 1000, warmup = 100, validate = true }   # passed as --iters 1000 ... --validate
    operations = ["allreduce", "bcast"]   # coll / nbc: one launch per operation (gmb-bench coll OP)
    join_operations = false  # true: all operations in one launch (gmb-bench coll allreduce,bcast): less
                             # start-up time; a crash in one operation loses the rest of that launch
    env = { UCX_RNDV_THRESH = "8192" }
    isolate = true           # optional, with bundle: this block's launches never share an engine launch
    repetitions = 2          # optional: this block's launches per point, instead of the campaign's
    settings = [{}, { UCX_RNDV_SCHEME = "get_zcopy" }]   # optional: setting sets (library knobs: UCX_*, OMPI_MCA_*,
                             # MPIR_CVAR_*, NCCL_* ...), each over env (the set wins) and run as the whole block
                             # again; {}: env alone (the library's defaults). Values: strings or numbers
    nodes = [1, 2, 4]        # optional: run the block on each node count (one results directory), with
    ranks_per_node = 4       #   ranks_per_node ranks per node (default: --ranks-per-node, else 1)
    scaling = "weak"         # collectives: "strong" (S fixed, the default) or "weak" (each rank's share fixed)
    nic = ["mlx5_0", "mlx5_1"]  # optional: "nearest" (the card nearest each rank's GPU), names (by local rank
                             # modulo their number), or "none" (the library's own choice, the default): --nic

    [knobs]                  # optional: settings `gmb tune CAMPAIGN` tries beside its catalogue (docs/tune.md)
    UCX_RNDV_THRESH = ["8192", "65536"]

Every (block, benchmark, library, memory, strategy, ranks, setting set, repetition) is one engine launch writing
its own raw JSONL file (plan.py); results that differ in a setting are different points, named apart by the settings
that differ ("openmpi-5.0.7-ucx [UCX_RNDV_SCHEME=get_zcopy]"). An ``OMPI_MCA_<name>`` setting that the library's
launcher arguments give otherwise (``--mca <name> <value>``: mpirun's command line outranks the environment), or a set
whose results would be taken for another's (no setting the records keep tells them apart), is skipped with the
reason. Ceilings (the ``peaks`` benchmark) always run first. Sizes and counts are checked as the engine reads them
(sizes.py); the names a campaign gives are checked against the engines and libraries found (checks.py).

A library with ``transport = "nccl"`` (mpilibs) gets only what NCCL can do: latency, bw and bibw on
device:device buffers with the direct strategy, one GPU per rank, and ``coll`` on device memory
(``options = { mem = "device" }``) for the operations NCCL has; its launches add ``--transport nccl``.
Everything else in a block is skipped for it with the reason.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..machine import families
from ..results.result_facts import Sides
from ..machine.knobs import ENV_NAME, check_declared
from ..tomlcheck import array_of_tables, toml_value, typename
from .sizes import check_counts, parse_sizes


class CampaignError(ValueError):
    """A campaign that cannot be run as written (the message names the block and key)."""


@dataclass(frozen=True)
class Block:
    benchmarks: list[str]
    memory: list[str] = field(default_factory=lambda: [""])
    strategies: list[str] = field(default_factory=lambda: [""])
    sizes: str | None = None
    ranks: list[int] = field(default_factory=lambda: [2])
    gpus: list[int] | None = None
    path: str | None = None
    bind: str | None = None
    options: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)
    libraries: list[str] | None = None
    # coll / nbc take an operation as a positional argument (gmb-bench coll allreduce): one launch per
    # operation listed; None: DEFAULT_OPERATIONS
    operations: list[str] | None = None
    join_operations: bool = False  # all operations in one launch (gmb-bench coll allreduce,bcast,...)
    # node counts the block's launches run on, in one campaign (one results directory), ranks_per_node ranks on
    # each; None: the hosts the session has (--nodes, a hostfile)
    nodes: list[int] | None = None
    ranks_per_node: int | None = None
    # collectives over node counts: "strong" keeps the message size S, "weak" keeps each rank's share of it (S grows
    # with the ranks where the operation splits S among them: the engine's counts.split); None: strong
    scaling: str | None = None
    # the engine's --nic: "nearest" or names joined by commas (docs/multinode.md "NIC pinning"); None: not pinned
    nic: str | None = None
    # setting sets (setting_sets()), each run as the whole block again with its variables over env; None: env alone
    settings: list[dict[str, str]] | None = None
    # with the campaign's bundle: the block's launches each have an engine launch of their own, never shared
    isolate: bool = False
    # launches of each of the block's points, where not the campaign's repetitions (a reference such as the copy and
    # network ceilings needs fewer than a claim does); None: the campaign's
    repetitions: int | None = None


# operations given to the benchmarks that need one (``gmb-bench coll OP``) when a block names none
# (one launch per operation: the engine takes one); names as ``gmb-bench coll --help`` lists them
DEFAULT_OPERATIONS = {"coll": ["allreduce", "bcast", "alltoall", "allgather", "reduce_scatter", "barrier"],
                      "nbc": ["allreduce", "bcast", "alltoall"]}


@dataclass(frozen=True)
class Campaign:
    name: str
    blocks: list[Block]
    repetitions: int = 3
    order: str = "random"
    seed: int | None = None
    timeout_s: float = 600
    libraries: list[str] = field(default_factory=lambda: ["*"])
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # (library, what, reason) from generation
    stop_library_after: int = 3
    # settings `gmb tune` tries beside its catalogue when it searches this campaign's blocks: NAME -> values
    knobs: dict[str, list[str]] = field(default_factory=dict)
    # launches that can share one engine launch run in one (run/bundles.py)
    bundle: bool = False

    def to_toml(self) -> str:
        lines = ["[campaign]", f"name = {json.dumps(self.name)}", f"repetitions = {self.repetitions}",
                 f"order = {json.dumps(self.order)}", f"timeout_s = {self.timeout_s}",
                 f"stop_library_after = {self.stop_library_after}",
                 f"libraries = {json.dumps(self.libraries)}"]
        if self.seed is not None:
            lines.append(f"seed = {self.seed}")
        if self.bundle:
            lines.append("bundle = true")
        for b in self.blocks:
            lines.append("\n[[run]]")
            for k, v in asdict(b).items():
                if v in (None, {}, [""]):
                    continue
                if k == "nic" and v != "nearest":  # names as the campaign file lists them
                    v = v.split(",")
                lines.append(f"{k} = {toml_value(v)}")
        if self.knobs:
            lines += ["\n[knobs]", *(f"{k} = {toml_value(v)}" for k, v in self.knobs.items())]
        return "\n".join(lines) + "\n"


def _repetitions(r: dict, where: str) -> int | None:
    """The repetitions a table ([campaign], or a block's own) gives (None: none given); CampaignError unless an
    integer >= 1."""
    reps = r.get("repetitions")
    if reps is not None and (isinstance(reps, bool) or not isinstance(reps, int) or reps < 1):
        raise CampaignError(f"{where}: repetitions must be an integer >= 1 (got {json.dumps(reps, default=str)})")
    return reps


def setting_sets(sets, where: str, env: dict | None = None) -> list[dict[str, str]]:
    """A block's setting sets as Block.settings holds them (values as strings), checked: a non-empty list of tables
    of environment variables, strings or numbers (booleans are refused: libraries spell them differently, y/n, 1/0,
    true/false), no two alike over the block's ``env``. Raises CampaignError naming ``where`` and the set."""
    if not isinstance(sets, list) or not sets:
        raise CampaignError(f"{where}: settings must be a non-empty list of tables of environment variables, e.g. "
                            f"settings = [{{}}, {{ UCX_RNDV_SCHEME = \"get_zcopy\" }}] (got {typename(sets)}: "
                            f"{json.dumps(sets, default=str)})")
    out = []
    for i, one in enumerate(sets, 1):
        if not isinstance(one, dict):
            raise CampaignError(f"{where}: settings #{i} must be a table, e.g. {{ UCX_RNDV_SCHEME = \"get_zcopy\" }}"
                                f" ({{}}: the block's env alone) (got {typename(one)}: {json.dumps(one, default=str)})")
        for name, value in one.items():
            if not ENV_NAME.fullmatch(name):
                raise CampaignError(f"{where}: settings #{i}: {json.dumps(name)} is not an environment variable name "
                                    f"(letters, digits and _, not starting with a digit)")
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise CampaignError(f"{where}: settings #{i}: {name} must be a string or a number, as the library "
                                    f"spells it (e.g. \"y\", \"1\", \"true\") (got {typename(value)})")
        out.append({name: str(value) for name, value in one.items()})
    merged = [{**(env or {}), **one} for one in out]
    for i, one in enumerate(merged):
        if one in merged[:i]:
            raise CampaignError(f"{where}: settings #{merged.index(one) + 1} and #{i + 1} are the same set over the "
                                f"block's env ({json.dumps(one)}): list each set once")
    return out


def parse_memory(mem: str) -> tuple[str, str]:
    """'host:device' -> (host, device); managed kinds keep their location: 'managed:host:managed:device'."""
    sides = Sides.of_label(mem)
    if not sides.pair:
        raise ValueError(f"memory {mem!r} must be 'send:recv' (e.g. host:device, managed:host:managed:device)")
    return sides.send, sides.recv


def _str_list(v, where: str, key: str, allow_empty: bool = False) -> list[str] | None:
    """A string or a list of strings (None when absent)."""
    if v is None:
        return None
    items = v if isinstance(v, list) else [v]
    if not all(isinstance(x, str) and x for x in items) or (not items and not allow_empty):
        raise CampaignError(f"{where}: {key} must be a string or a list of non-empty strings "
                            f"(got {json.dumps(v, default=str)})")
    return list(items)


def _int_list(v, where: str, key: str, minimum: int) -> list[int] | None:
    if v is None:
        return None
    items = v if isinstance(v, list) else [v]
    if not items or not all(isinstance(x, int) and not isinstance(x, bool) and x >= minimum for x in items):
        raise CampaignError(f"{where}: {key} must be an integer >= {minimum} or a list of them "
                            f"(got {json.dumps(v, default=str)})")
    return list(items)


def _table(v, where: str, key: str, scalar_values: bool = True) -> dict:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise CampaignError(f"{where}: {key} must be a table, e.g. {key} = {{ name = \"value\" }} "
                            f"(got {typename(v)}: {json.dumps(v, default=str)})")
    if scalar_values:
        bad = [k for k, x in v.items() if not isinstance(x, (str, int, float, bool))]
        if bad:
            raise CampaignError(f"{where}: {key}.{bad[0]} must be a string, number or boolean "
                                f"(got {typename(v[bad[0]])})")
    return dict(v)


HEAD_KEYS = {"name", "repetitions", "order", "seed", "timeout_s", "stop_library_after", "libraries", "nic", "bundle"}
NIC_ACCEPTED = ('"nearest", "none", a network interface or RDMA device name, or a list of names (e.g. '
                '["mlx5_0", "mlx5_1"])')


def nic_request(value, where: str) -> str:
    """A campaign's or a command line's nic as the engine's --nic takes it: "nearest", "none", or names joined by
    commas (a name or a list of names, each non-empty, without commas or spaces, neither nearest nor none)."""
    names = value if isinstance(value, list) else [value]
    if value in ("nearest", "none"):
        return value
    if not names or not all(isinstance(n, str) and n and not any(c in n for c in ", \t") and n not in
                            ("nearest", "none") for n in names):
        raise CampaignError(f"{where}: nic must be {NIC_ACCEPTED} (got {json.dumps(value, default=str)})")
    return ",".join(names)


def parse_campaign(data: dict, source: str = "campaign") -> Campaign:
    """A campaign file's tables (as TOML reads them) checked and made a Campaign; CampaignError names the table
    and key that are wrong (``source``: the file, in the messages)."""
    head = data.get("campaign", {})
    if not isinstance(head, dict):
        raise CampaignError(f"{source}: campaign must be a [campaign] table (got {typename(head)})")
    unknown = set(data) - {"campaign", "run", "knobs"}
    if unknown:
        raise CampaignError(f"{source}: unknown top-level keys {sorted(unknown)} (accepted: [campaign], [[run]], "
                            f"[knobs])")
    try:
        knobs = check_declared(data.get("knobs", {}), f"{source}: [knobs]", families.setting_prefixes())
    except ValueError as exc:
        raise CampaignError(str(exc)) from None
    unknown = set(head) - HEAD_KEYS
    if unknown:
        raise CampaignError(f"{source}: [campaign]: unknown keys {sorted(unknown)} "
                            f"(accepted: {', '.join(sorted(HEAD_KEYS))})")
    runs = array_of_tables(data, "run", source, CampaignError, "one per block")
    if not runs:
        raise CampaignError(f"{source}: no [[run]] blocks")
    campaign_nic = nic_request(head["nic"], f"{source}: [campaign]") if "nic" in head else "none"
    blocks = [_parse_block(r, f"{source}: [[run]] #{i + 1}", campaign_nic) for i, r in enumerate(runs)]
    return _campaign_from_head(head, source, blocks, knobs)


def _parse_block(r: dict, where: str, campaign_nic: str) -> Block:
    """One [[run]] table checked and made a Block (``where`` names it in errors; ``campaign_nic``: the nic of a
    block that gives none)."""
    known = set(Block.__dataclass_fields__)
    unknown = set(r) - known
    if unknown:
        raise CampaignError(f"{where}: unknown keys {sorted(unknown)} (accepted: {', '.join(sorted(known))})")
    if "benchmarks" not in r:
        raise CampaignError(f"{where}: 'benchmarks' is required")
    sizes = r.get("sizes")
    if isinstance(sizes, int) and not isinstance(sizes, bool) and sizes >= 0:
        sizes = str(sizes)
    if sizes is not None and (not isinstance(sizes, str) or not sizes.strip()):
        raise CampaignError(f"{where}: sizes must be a string such as \"1:4M\" or \"1,8,4K\" "
                            f"(got {json.dumps(sizes, default=str)})")
    for key in ("path", "bind"):
        if r.get(key) is not None and not isinstance(r[key], str):
            raise CampaignError(f"{where}: {key} must be a string (got {json.dumps(r[key], default=str)})")
    for key in ("join_operations", "isolate"):
        if not isinstance(r.get(key, False), bool):
            raise CampaignError(f"{where}: {key} must be true or false (got {json.dumps(r[key], default=str)})")
    if r.get("scaling") not in (None, "strong", "weak"):
        raise CampaignError(f"{where}: scaling must be \"strong\" or \"weak\" (got "
                            f"{json.dumps(r['scaling'], default=str)})")
    nic = nic_request(r["nic"], where) if "nic" in r else campaign_nic
    per_node = _int_list(r.get("ranks_per_node"), where, "ranks_per_node", 1)
    if per_node is not None and (len(per_node) != 1 or isinstance(r["ranks_per_node"], list)):
        raise CampaignError(f"{where}: ranks_per_node must be one integer >= 1")
    b = Block(benchmarks=_str_list(r["benchmarks"], where, "benchmarks"),
              memory=_str_list(r.get("memory"), where, "memory") or [""],
              strategies=_str_list(r.get("strategies"), where, "strategies") or [""], sizes=sizes,
              ranks=_int_list(r.get("ranks"), where, "ranks", 1) or [2],
              gpus=_int_list(r.get("gpus"), where, "gpus", 0), path=r.get("path"),
              bind=r.get("bind"), options=_table(r.get("options"), where, "options"),
              env={k: str(v) for k, v in _table(r.get("env"), where, "env").items()},
              libraries=_str_list(r.get("libraries"), where, "libraries"),
              operations=_str_list(r.get("operations"), where, "operations"),
              join_operations=r.get("join_operations", False),
              nodes=sorted(set(_int_list(r.get("nodes"), where, "nodes", 1) or [])) or None,
              ranks_per_node=per_node[0] if per_node else None, scaling=r.get("scaling"),
              nic=None if nic == "none" else nic, isolate=r.get("isolate", False),
              repetitions=_repetitions(r, where))
    if "settings" in r:
        b = replace(b, settings=setting_sets(r["settings"], where, b.env))
    if "nic" in b.options:
        raise CampaignError(f"{where}: options.nic: write nic = ... in the block (or in [campaign]), not in "
                            f"options")
    for m in b.memory:
        if m:
            try:
                parse_memory(m)
            except ValueError as exc:
                raise CampaignError(f"{where}: {exc}") from None
    try:
        if sizes is not None:
            parse_sizes(sizes)
        check_counts(b.options)
    except ValueError as exc:
        raise CampaignError(f"{where}: {exc}") from None
    return b


def _campaign_from_head(head: dict, source: str, blocks: list[Block], knobs: dict[str, list[str]]) -> Campaign:
    """The [campaign] table's values checked, and the campaign made of them with its blocks and knobs."""
    reps = _repetitions(head, source) or 3
    order = head.get("order", "random")
    if order not in ("random", "sequential"):
        raise CampaignError(f"{source}: order must be 'random' or 'sequential' (got {json.dumps(order, default=str)})")
    stop = head.get("stop_library_after", 3)
    if not isinstance(stop, int) or isinstance(stop, bool) or stop < 0:
        raise CampaignError(f"{source}: stop_library_after must be an integer >= 0 "
                            f"(got {json.dumps(stop, default=str)})")
    seed = head.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise CampaignError(f"{source}: seed must be an integer (got {json.dumps(seed, default=str)})")
    timeout = head.get("timeout_s", 600)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout < math.inf:  # NaN too
        raise CampaignError(f"{source}: timeout_s must be a number of seconds > 0 and finite "
                            f"(got {timeout!r})")
    bundle = head.get("bundle", False)
    if not isinstance(bundle, bool):
        raise CampaignError(f"{source}: bundle must be true or false (got {json.dumps(bundle, default=str)})")
    name = head.get("name", Path(source).stem)
    if not isinstance(name, str) or not name.strip():
        raise CampaignError(f"{source}: name must be a non-empty string (got {json.dumps(name, default=str)})")
    return Campaign(name=name, blocks=blocks, repetitions=reps, order=order,
                    seed=seed, timeout_s=float(timeout),
                    libraries=_str_list(head.get("libraries"), f"{source}: [campaign]", "libraries") or ["*"],
                    stop_library_after=stop, knobs=knobs, bundle=bundle)


def load_campaign(path: str | Path) -> Campaign:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise CampaignError(f"{path}: no such campaign file") from None
    except tomllib.TOMLDecodeError as exc:
        raise CampaignError(f"{path}: not valid TOML: {exc}") from None
    return parse_campaign(data, str(path))
