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

Every (block, benchmark, library, memory, strategy, ranks, repetition) is one engine launch writing its own
raw JSONL file (plan.py). Ceilings (the ``peaks`` benchmark) always run first.

A library with ``transport = "nccl"`` (mpilibs) gets only what NCCL can do: latency, bw and bibw on
device:device buffers with the direct strategy, one GPU per rank, and ``coll`` on device memory
(``options = { mem = "device" }``) for the operations NCCL has; its launches add ``--transport nccl``.
Everything else in a block is skipped for it with the reason.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..engine.description import EngineDescription, Option, known_benchmarks
from ..tomlcheck import array_of_tables, typename

class CampaignError(ValueError):
    """A campaign that cannot be run as written (the message names the block and key)."""


@dataclass
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


# operations given to the benchmarks that need one (``gmb-bench coll OP``) when a block names none
# (one launch per operation: the engine takes one); names as ``gmb-bench coll --help`` lists them
DEFAULT_OPERATIONS = {"coll": ["allreduce", "bcast", "alltoall", "allgather", "reduce_scatter", "barrier"],
                      "nbc": ["allreduce", "bcast", "alltoall"]}


@dataclass
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

    def to_toml(self) -> str:
        lines = ["[campaign]", f"name = {json.dumps(self.name)}", f"repetitions = {self.repetitions}",
                 f"order = {json.dumps(self.order)}", f"timeout_s = {self.timeout_s}",
                 f"stop_library_after = {self.stop_library_after}",
                 f"libraries = {json.dumps(self.libraries)}"]
        if self.seed is not None:
            lines.append(f"seed = {self.seed}")
        for b in self.blocks:
            lines.append("\n[[run]]")
            for k, v in asdict(b).items():
                if v in (None, {}, [""]):
                    continue
                if isinstance(v, dict):
                    lines.append(f"{k} = {{ " + ", ".join(f"{kk} = {json.dumps(vv)}" for kk, vv in v.items()) + " }")
                else:
                    lines.append(f"{k} = {json.dumps(v)}")
        return "\n".join(lines) + "\n"


def parse_memory(mem: str) -> tuple[str, str]:
    """'host:device' -> (host, device); managed kinds keep their location: 'managed:host:managed:device'."""
    tokens = mem.split(":")
    kinds, i = [], 0
    while i < len(tokens):
        # with only two tokens ('managed:device') they are send and recv, not one located kind
        if tokens[i] == "managed" and len(tokens) > 2 and i + 1 < len(tokens) and tokens[i + 1] in ("host", "device"):
            kinds.append(f"managed:{tokens[i + 1]}")
            i += 2
        else:
            kinds.append(tokens[i])
            i += 1
    if len(kinds) != 2 or not all(kinds):
        raise ValueError(f"memory {mem!r} must be 'send:recv' (e.g. host:device, managed:host:managed:device)")
    return kinds[0], kinds[1]


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


HEAD_KEYS = {"name", "repetitions", "order", "seed", "timeout_s", "stop_library_after", "libraries"}


def parse_campaign(data: dict, source: str = "campaign") -> Campaign:
    head = data.get("campaign", {})
    if not isinstance(head, dict):
        raise CampaignError(f"{source}: campaign must be a [campaign] table (got {typename(head)})")
    unknown = set(data) - {"campaign", "run"}
    if unknown:
        raise CampaignError(f"{source}: unknown top-level keys {sorted(unknown)} (accepted: [campaign], [[run]])")
    unknown = set(head) - HEAD_KEYS
    if unknown:
        raise CampaignError(f"{source}: [campaign]: unknown keys {sorted(unknown)} "
                            f"(accepted: {', '.join(sorted(HEAD_KEYS))})")
    runs = array_of_tables(data, "run", source, CampaignError, "one per block")
    if not runs:
        raise CampaignError(f"{source}: no [[run]] blocks")
    blocks = []
    known = set(Block.__dataclass_fields__)
    for i, r in enumerate(runs):
        where = f"{source}: [[run]] #{i + 1}"
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
        if not isinstance(r.get("join_operations", False), bool):
            raise CampaignError(f"{where}: join_operations must be true or false")
        b = Block(benchmarks=_str_list(r["benchmarks"], where, "benchmarks"),
                  memory=_str_list(r.get("memory"), where, "memory") or [""],
                  strategies=_str_list(r.get("strategies"), where, "strategies") or [""], sizes=sizes,
                  ranks=_int_list(r.get("ranks"), where, "ranks", 1) or [2],
                  gpus=_int_list(r.get("gpus"), where, "gpus", 0), path=r.get("path"),
                  bind=r.get("bind"), options=_table(r.get("options"), where, "options"),
                  env={k: str(v) for k, v in _table(r.get("env"), where, "env").items()},
                  libraries=_str_list(r.get("libraries"), where, "libraries"),
                  operations=_str_list(r.get("operations"), where, "operations"),
                  join_operations=r.get("join_operations", False))
        for m in b.memory:
            if m:
                try:
                    parse_memory(m)
                except ValueError as exc:
                    raise CampaignError(f"{where}: {exc}") from None
        try:
            if sizes is not None:
                parse_sizes(sizes)
            _check_counts(b.options)
        except ValueError as exc:
            raise CampaignError(f"{where}: {exc}") from None
        blocks.append(b)
    reps = head.get("repetitions", 3)
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        raise CampaignError(f"{source}: repetitions must be an integer >= 1 (got {json.dumps(reps, default=str)})")
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
    name = head.get("name", Path(source).stem)
    if not isinstance(name, str) or not name.strip():
        raise CampaignError(f"{source}: name must be a non-empty string (got {json.dumps(name, default=str)})")
    return Campaign(name=name, blocks=blocks, repetitions=reps, order=order,
                    seed=seed, timeout_s=float(timeout),
                    libraries=_str_list(head.get("libraries"), f"{source}: [campaign]", "libraries") or ["*"],
                    stop_library_after=stop)


SIZES_ACCEPTED = ("accepted: a byte count with optional K, M or G suffix (powers of 1024), e.g. 8, 4K, 1M; a range "
                  "MIN:MAX in doubling steps, e.g. 1:4M; or a list, e.g. 1,8,4K")
_SIZE = re.compile(r"\s*(\d+)\s*(|B|K|KB|KIB|M|MB|MIB|G|GB|GIB)\s*", re.IGNORECASE)
INT_MAX = 2**31 - 1
# The engine's counts every benchmark takes (gmb-bench BENCH --help), with the least each accepts.
COUNT_OPTIONS = {"iters": 1, "iters-large": 1, "batch": 1, "warmup": 0, "warmup-large": 0}


def parse_size(text: str) -> int:
    """Bytes of one size of the engine's --sizes (8, 4K, 1M, 2GiB ...), or ValueError saying what is accepted."""
    m = _SIZE.fullmatch(text)
    if not m:
        raise ValueError(f"bad size '{text}' ({SIZES_ACCEPTED})")
    return int(m.group(1)) << {"": 0, "B": 0, "K": 10, "M": 20, "G": 30}[m.group(2)[:1].upper()]


def parse_sizes(text: str) -> list[int]:
    """The sizes of a --sizes text as the engine reads them (a range MIN:MAX doubles from MIN, 0 first when MIN is
    0), or ValueError saying what is accepted."""
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 2:
            raise ValueError(f"sizes '{text}': a range is MIN:MAX, sizes doubling from MIN (a step is not "
                             f"accepted; {SIZES_ACCEPTED})")
        lo, hi = (parse_size(t) for t in parts)
        if lo > hi:
            raise ValueError(f"sizes '{text}': MIN is greater than MAX ({SIZES_ACCEPTED})")
        out, s = ([0] if lo == 0 else []), max(lo, 1)
        while s <= hi:
            out.append(s)
            s *= 2
        return out
    sizes = [parse_size(t) for t in text.split(",")]
    for i, n in enumerate(sizes):
        if n in sizes[:i]:  # measured twice, stored once: the engine refuses it too
            raise ValueError(f"sizes '{text}': {n} bytes is listed twice (each size once; {SIZES_ACCEPTED})")
    return sizes


def _check_counts(options: dict):
    """The shared counts among a block's options (iters = 0 would run, and fail, every launch)."""
    for key, value in options.items():
        least = COUNT_OPTIONS.get(key.replace("_", "-"))
        if least is None:
            continue
        n = value if isinstance(value, int) and not isinstance(value, bool) else \
            int(value) if isinstance(value, str) and value.strip().isdigit() else None
        if n is None or not least <= n <= INT_MAX:
            raise ValueError(f"options.{key} = {json.dumps(value)}: must be a whole number from {least} to {INT_MAX}")
    for key in ("large-size", "large_size"):
        if key in options:
            parse_size(str(options[key]))


def load_campaign(path: str | Path) -> Campaign:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise CampaignError(f"{path}: no such campaign file") from None
    except tomllib.TOMLDecodeError as exc:
        raise CampaignError(f"{path}: not valid TOML: {exc}") from None
    return parse_campaign(data, str(path))


def check_against_engines(c: Campaign, descriptions: dict[str, EngineDescription]) -> None:
    """What only the engines can say, checked before anything runs: every memory kind a block names is one an
    engine lists (available here or not: an unavailable one is skipped with its reason), every block's rank counts
    are within its benchmarks' rank bounds (the same in every build), every option of a block is one each of its
    benchmarks takes (with a value where it takes one, one of its values where the engine lists them), every
    operation is a collective an engine lists and some benchmark of the block takes operations, and every strategy
    is one each benchmark of the block accepts. An option, operation or strategy some engine accepts is valid."""
    if not descriptions:
        return
    kinds = {k for d in descriptions.values() for k in d.kinds}
    bounds = known_benchmarks(descriptions.values())
    for bi, block in enumerate(c.blocks):
        where = f"[[run]] #{bi + 1}"
        for mem in block.memory:
            unknown = [k for k in parse_memory(mem) if k not in kinds] if mem and kinds else []
            if unknown:
                raise CampaignError(f"{where}: memory \"{mem}\": unknown memory kind '{unknown[0]}' (accepted, as "
                                    f"SEND:RECV: {', '.join(sorted(kinds))})")
        for bench in block.benchmarks:
            b = bounds.get(bench)
            for n in block.ranks if b else ():
                refused = b.ranks_refusal(n)
                if refused:
                    raise CampaignError(f"{where}: {bench} with ranks = {n}: {bench} {refused}")
        _check_operations(block, where, descriptions)
        for bench in block.benchmarks:
            accepted = _accepted_options(bench, descriptions)
            if accepted is not None:
                _check_options(block, where, bench, accepted)
                _check_strategies(block, where, bench, accepted)


def _accepted_options(bench: str, descriptions: dict[str, EngineDescription]) -> dict[str, Option] | None:
    """The options some engine accepts for ``bench``, by name (None when no engine lists them)."""
    listed = [a for a in (d.accepted_options(bench) for d in descriptions.values()) if a is not None]
    if not listed:
        return None
    merged: dict[str, Option] = {}
    for a in listed:
        for name, option in a.items():
            merged.setdefault(name, option)
    return merged


def _check_options(block: Block, where: str, bench: str, accepted: dict[str, Option]) -> None:
    """Each of the block's options, as plan.engine_args gives it (``--key value``, a flag for true), is one
    ``bench`` takes, in the form it takes it."""
    for key, value in block.options.items():
        flag = "--" + key.replace("_", "-")
        option = accepted.get(flag)
        if option is None:
            names = sorted({n[2:] for n in accepted if n.startswith("--")} - {"help"})
            raise CampaignError(f"{where}: options.{key}: {bench} has no option {flag}"
                                f"{_did_you_mean(flag[2:], names)} (its options: {', '.join(names)})")
        shown = json.dumps(value)
        if option.value == "none" and not isinstance(value, bool):
            raise CampaignError(f"{where}: options.{key} = {shown}: {flag} takes no value (true gives it, false "
                                f"leaves it out)")
        if option.value == "required" and value is True:  # false leaves the option out
            raise CampaignError(f"{where}: options.{key} = {shown}: {flag} takes a value "
                                f"({option.metavar or 'a value'})")
        if option.choices and not isinstance(value, bool) and str(value) not in option.choices:
            raise CampaignError(f"{where}: options.{key} = {shown}: not a value {flag} accepts"
                                f"{_did_you_mean(str(value), option.choices)} (accepted: "
                                f"{', '.join(option.choices)})")


def _check_strategies(block: Block, where: str, bench: str, accepted: dict[str, Option]) -> None:
    """Each strategy of the block (given to each of its benchmarks as --strategy) is one ``bench`` accepts."""
    for strategy in filter(None, block.strategies):
        option = accepted.get("--strategy")
        if option is None:
            raise CampaignError(f"{where}: strategies: {bench} takes no --strategy (a block's strategies are given "
                                f"to each of its benchmarks: put {bench} in a block without strategies)")
        if option.choices and strategy not in option.choices:
            raise CampaignError(f"{where}: strategies: unknown strategy {strategy!r} for {bench}"
                                f"{_did_you_mean(strategy, option.choices)} (accepted: {', '.join(option.choices)})")


def _check_operations(block: Block, where: str, descriptions: dict[str, EngineDescription]) -> None:
    """The block's operations are collectives an engine lists, for a benchmark of the block that takes them."""
    if not block.operations:
        return
    collectives = list(dict.fromkeys(n for d in descriptions.values() for n in d.collectives))
    for op in block.operations:
        if op not in collectives:
            raise CampaignError(f"{where}: operations: unknown operation {op!r}{_did_you_mean(op, collectives)} "
                                f"(accepted: {', '.join(collectives)})")
    takers = {name for d in descriptions.values() for name, b in d.benchmarks.items() if b.operations}
    if takers and not takers & set(block.benchmarks):
        raise CampaignError(f"{where}: operations: none of {', '.join(block.benchmarks)} takes an operation (those "
                            f"that do: {', '.join(sorted(takers))})")


def _did_you_mean(name: str, choices) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def check_library_names(c: Campaign, library_names) -> None:
    """CampaignError when the campaign names a library that is neither found nor declared (a typo): not a skip."""
    known = list(dict.fromkeys(library_names))
    where = [("[campaign] libraries", c.libraries)] + [(f"[[run]] #{i + 1} libraries", b.libraries or [])
                                                       for i, b in enumerate(c.blocks)]
    for what, names in where:
        for n in names:
            if n != "*" and n not in known:
                raise CampaignError(f"{what}: unknown library {n!r}{_did_you_mean(n, known)} "
                                    f"(found or declared: {', '.join(known) or 'none'}; see `gmb libs`)")


def check_benchmark_names(c: Campaign, descriptions: dict[str, EngineDescription]) -> None:
    """CampaignError when a block names a benchmark that no engine lists (a typo such as 'bww'). A benchmark that
    some engine lists is planned, or skipped with the reason for an engine that does not. Without any engine
    description there is nothing to check against (nothing can be planned either)."""
    known = list(known_benchmarks(descriptions.values()))
    if not known:
        return
    for i, b in enumerate(c.blocks):
        for n in b.benchmarks:
            if n not in known:
                raise CampaignError(f"[[run]] #{i + 1}: unknown benchmark {n!r}{_did_you_mean(n, known)} "
                                    f"(known: {', '.join(known)})")
