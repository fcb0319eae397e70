# SPDX-License-Identifier: BSD-3-Clause
"""What only the engines and the libraries found can say about a campaign, checked before anything runs: the
libraries, benchmarks, memory kinds, rank counts, options, operations and strategies it names."""

from __future__ import annotations

import json

from ..engine.description import EngineDescription, Option, known_benchmarks
from ..errors import did_you_mean
from .sizes import parse_sizes
from .spec import Block, Campaign, CampaignError, parse_memory


def check_against_engines(c: Campaign, descriptions: dict[str, EngineDescription]) -> None:
    """What only the engines can say, checked before anything runs: every memory kind a block names is one an
    engine lists (available here or not: an unavailable one is skipped with its reason), every block's rank counts
    are within its benchmarks' rank bounds (the same in every build), no bandwidth benchmark is given 0 B, every option of a block is one each of its
    benchmarks takes (with a value where it takes one, one of its values where the engine lists them), a block's nic is
    an option the engines take, every operation is a collective an engine lists and some benchmark of the block takes operations, and every strategy
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
        _check_zero_byte_bandwidth(block, where, bounds)
        for bench in block.benchmarks:
            accepted = _accepted_options(bench, descriptions)
            if accepted is not None:
                if block.nic and "--nic" not in accepted:
                    raise CampaignError(f"{where}: nic = {json.dumps(block.nic)}: the engine has no --nic (built "
                                        f"before NIC pinning: `gmb build --force` rebuilds it)")
                _check_options(block, where, bench, accepted)
                _check_strategies(block, where, bench, accepted)


def _check_zero_byte_bandwidth(block: Block, where: str, benchmarks) -> None:
    """A block's sizes hold no 0 B for a bandwidth benchmark (the description's: a transfer between two sides ranked
    by its bandwidth): a bandwidth of 0-byte messages is not defined, and the engine would record it unsupported."""
    if not block.sizes or 0 not in parse_sizes(block.sizes):
        return
    for bench in block.benchmarks:
        b = benchmarks.get(bench)
        if b is not None and b.bandwidth:
            raise CampaignError(f"{where}: sizes = {json.dumps(block.sizes)}: {bench} measures a bandwidth, and a "
                                f"bandwidth of 0-byte messages is not defined; latency measures 0 B (give {bench} "
                                f"sizes from 1 B, in a block of its own where latency keeps 0 B)")


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
                                f"{did_you_mean(flag[2:], names)} (its options: {', '.join(names)})")
        shown = json.dumps(value)
        if option.value == "none" and not isinstance(value, bool):
            raise CampaignError(f"{where}: options.{key} = {shown}: {flag} takes no value (true gives it, false "
                                f"leaves it out)")
        if option.value == "required" and value is True:  # false leaves the option out
            raise CampaignError(f"{where}: options.{key} = {shown}: {flag} takes a value "
                                f"({option.metavar or 'a value'})")
        if option.choices and not isinstance(value, bool):
            # a list option ("gmb-tcp,iperf3") takes each of its comma-separated items from the choices
            for item in str(value).split(",") if option.list else [str(value)]:
                if item not in option.choices:
                    what = f"{item!r} is not a value" if option.list else "not a value"
                    raise CampaignError(f"{where}: options.{key} = {shown}: {what} {flag} accepts"
                                        f"{did_you_mean(item, option.choices)} (accepted: {', '.join(option.choices)}"
                                        f"{', or a comma-separated list of them' if option.list else ''})")


def _check_strategies(block: Block, where: str, bench: str, accepted: dict[str, Option]) -> None:
    """Each strategy of the block (given to each of its benchmarks as --strategy) is one ``bench`` accepts."""
    for strategy in filter(None, block.strategies):
        option = accepted.get("--strategy")
        if option is None:
            raise CampaignError(f"{where}: strategies: {bench} takes no --strategy (a block's strategies are given "
                                f"to each of its benchmarks: put {bench} in a block without strategies)")
        if option.choices and strategy not in option.choices:
            raise CampaignError(f"{where}: strategies: unknown strategy {strategy!r} for {bench}"
                                f"{did_you_mean(strategy, option.choices)} (accepted: {', '.join(option.choices)})")


def _check_operations(block: Block, where: str, descriptions: dict[str, EngineDescription]) -> None:
    """The block's operations are collectives an engine lists, for a benchmark of the block that takes them."""
    if not block.operations:
        return
    collectives = list(dict.fromkeys(n for d in descriptions.values() for n in d.collectives))
    for op in block.operations:
        if op not in collectives:
            raise CampaignError(f"{where}: operations: unknown operation {op!r}{did_you_mean(op, collectives)} "
                                f"(accepted: {', '.join(collectives)})")
    takers = {name for d in descriptions.values() for name, b in d.benchmarks.items() if b.operations}
    if takers and not takers & set(block.benchmarks):
        raise CampaignError(f"{where}: operations: none of {', '.join(block.benchmarks)} takes an operation (those "
                            f"that do: {', '.join(sorted(takers))})")


def check_library_names(c: Campaign, library_names) -> None:
    """CampaignError when the campaign names a library that is neither found nor declared (a typo): not a skip."""
    known = list(dict.fromkeys(library_names))
    where = [("[campaign] libraries", c.libraries)] + [(f"[[run]] #{i + 1} libraries", b.libraries or [])
                                                       for i, b in enumerate(c.blocks)]
    for what, names in where:
        for n in names:
            if n != "*" and n not in known:
                raise CampaignError(f"{what}: unknown library {n!r}{did_you_mean(n, known)} "
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
                raise CampaignError(f"[[run]] #{i + 1}: unknown benchmark {n!r}{did_you_mean(n, known)} "
                                    f"(known: {', '.join(known)})")
