# SPDX-License-Identifier: BSD-3-Clause
"""`gmb slurm CAMPAIGN`: a batch script that runs a campaign inside a Slurm allocation, optionally sweeping
node counts (strong scaling: same sizes at every count; weak scaling: sizes given per node count).

The engines are built before the job, here (the login node), as `gmb build` builds them: a compute node never
compiles (the job runs `gmb run ... --no-build`). The script, in order: the ``#SBATCH`` header (every value checked:
nothing given can end the line or add one), comments recording what wrote it and the engines, the exports that let
the job find those engines ($GMB_CACHE, $GMB_SOURCE when set), the setup block (``--setup`` / ``--setup-file``
lines in the order given: modules, a venv, exports; a failing line stops the job), then one `gmb run` over every
node count, its command line printed before it runs; its exit status is the job's.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from .. import __version__
from ..campaign import checks, plan, spec
from ..campaign.spec import Campaign
from ..engine import build, build_cache
from ..engine import configurations
from ..engine import engines
from ..engine.description import DescriptionError
from ..errors import UsageError
from ..machine.knobs import ENV_NAME
from ..options import SlurmOptions
from ..outputs import write_new
from .setup import found_libraries

# What an #SBATCH value may hold. sbatch reads these lines itself (the shell sees comments), splitting at
# whitespace and taking quotes and '#' as its own: a value with whitespace, a quote, '#', a backslash or a control
# character (a newline would start a line of its own: a command) is refused, not quoted.
_NAME = re.compile(r"[A-Za-z0-9_.,:+@%=/-]+")  # partition, account, QOS, reservation (lists: commas)
_CONSTRAINT = re.compile(r"[A-Za-z0-9_.,:+@%=/&|*()\[\]-]+")  # features and Slurm's & | * [ ] ( )
_TIME = re.compile(r"(\d+-)?\d+(:\d+){0,2}|unlimited|infinite", re.I)  # min, min:s, h:min:s, d-h[:min[:s]]
EXCLUSIVE = ("", "user", "mcs", "topo")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # tab is allowed in setup lines


def sbatch_value(option: str, value: str, pattern: re.Pattern = _NAME, what: str = "") -> str:
    """``value`` when it may stand in ``#SBATCH --option=value``; else UsageError naming what is wrong."""
    if not value or not pattern.fullmatch(value):
        bad = sorted({ch for ch in value if not pattern.fullmatch(ch)}) if value else []
        why = "is empty" if not value else f"holds {', '.join(repr(ch) for ch in bad)}" if bad else "is malformed"
        raise UsageError(f"--{option} {value!r} {why}: refused, it would not reach sbatch as given "
                         f"({what or 'letters, digits and _ . , : + @ % = / -'})")
    return value


def _one_line(text: str) -> str:
    """Text for a comment line: control characters shown escaped (a newline would end the comment)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text.replace("\t", " "))


def check_setup(lines: list[str]) -> None:
    """UsageError when a setup line holds a control character (one line each), or when the setup block alone is not
    complete shell (an unclosed quote or `if` would swallow the rest of the script): `bash -n` on it."""
    for line in lines:
        if _CONTROL.search(line):
            raise UsageError(f"--setup {line!r}: holds a control character (a newline?): give one line per --setup")
    problem = bash_syntax("\n".join(lines) + "\n")
    if problem:
        raise UsageError(f"the setup lines are not complete shell on their own (bash -n: {problem}); every quote, "
                         f"if/fi, do/done must close within them")


def bash_syntax(text: str) -> str | None:
    """What `bash -n` says is wrong with ``text``, or None (also when bash is missing: nothing to check with)."""
    bash = shutil.which("bash")
    if not bash:
        return None
    p = subprocess.run([bash, "-n"], input=text, capture_output=True, text=True, timeout=30)
    return None if p.returncode == 0 else (p.stderr.strip().replace("bash: ", "") or f"exit {p.returncode}")


def batch_script(campaign_file: str, c: Campaign, nodes: list[int], ranks_per_node: int, gpus_per_node: int,
                 time_limit: str = "01:00:00", partition: str | None = None, account: str | None = None,
                 results: str = "results", gmb: str = "gmb", *, qos: str | None = None,
                 reservation: str | None = None, constraint: str | None = None, exclusive: str | None = None,
                 setup: list[str] = (), run_args: list[str] = (), exports: dict[str, str] | None = None,
                 notes: list[str] = (), gmb_hint: str = "") -> str:
    """The script's text. ``exclusive``: None (not asked), "" (``--exclusive``) or its value (user, mcs, topo);
    ``setup``: shell lines run before anything else; ``run_args``: more `gmb run` arguments (--config, --library
    ...); ``exports``: environment the job gets before the setup; ``notes``: comment lines."""
    if not nodes or any(not isinstance(n, int) or n < 1 for n in nodes):
        raise ValueError(f"node counts must be integers >= 1 (got {nodes})")
    if ranks_per_node < 1 or gpus_per_node < 0:
        raise ValueError("ranks per node must be >= 1 and GPUs per node >= 0")
    sbatch_value("time", time_limit, _TIME, "minutes, min:s, h:min:s, d-h, d-h:min, d-h:min:s or UNLIMITED")
    if exclusive is not None and exclusive not in EXCLUSIVE:
        raise UsageError(f"--exclusive={exclusive!r}: Slurm takes --exclusive alone or =user, =mcs, =topo")
    check_setup(list(setup))
    job = re.sub(r"[^A-Za-z0-9_.+-]", "_", c.name)  # a label only
    max_nodes = max(nodes)
    lines = ["#!/bin/bash", f"#SBATCH --job-name=gmb-{job}", f"#SBATCH --nodes={max_nodes}",
             f"#SBATCH --ntasks-per-node={ranks_per_node}", f"#SBATCH --time={time_limit}",
             "#SBATCH --output=gmb-%j.out"]
    if gpus_per_node:
        # GPUs per node, not per task: per-task isolation breaks CUDA IPC between ranks of a node
        lines.append(f"#SBATCH --gpus-per-node={gpus_per_node}")
    for option, value, pattern, what in (
            ("partition", partition, _NAME, ""), ("account", account, _NAME, ""), ("qos", qos, _NAME, ""),
            ("reservation", reservation, _NAME, ""),
            ("constraint", constraint, _CONSTRAINT, "feature names joined by & | * [ ] ( )")):
        if value is not None:
            lines.append(f"#SBATCH --{option}={sbatch_value(option, value, pattern, what)}")
    if exclusive is not None:
        lines.append("#SBATCH --exclusive" + (f"={exclusive}" if exclusive else ""))
    lines += [f"# {_one_line(n)}" for n in notes]
    lines.append(f"# campaign: {_one_line(campaign_file)}; node-count sweep: {' '.join(map(str, nodes))}")
    lines.append(f"# results: {_one_line(results)}/ and gmb-JOBID.out in the directory sbatch runs in (Slurm's "
                 "working directory; sbatch --chdir DIR for another)")
    # -u after the setup: module and conda scripts read variables that may be unset
    lines.append("set -eo pipefail")
    for name, value in (exports or {}).items():
        if not ENV_NAME.fullmatch(name):
            raise ValueError(f"not an environment variable name: {name!r}")
        lines.append(f"export {name}={shlex.quote(value)}")
    if setup:
        lines += ["# setup (--setup, --setup-file), before anything runs: a failing line stops the job",
                  "trap 'echo \"gmb: setup line failed (exit $?): $BASH_COMMAND\" >&2' ERR",
                  *setup, "trap - ERR"]
    lines.append("set -u")
    hint = f" ({_one_line(gmb_hint)})" if gmb_hint else ""
    lines.append(f"command -v {shlex.quote(gmb)} >/dev/null || {{ echo {shlex.quote(f'gmb: {gmb} not found in the job{hint}')}"
                 f" >&2; exit 2; }}")
    # One `gmb run` over every node count (the campaign's collectives on each, into one results directory and one
    # report); its exit status is the job's (1 when a launch failed, 2 on bad input). The command line is printed
    # before it runs (%q: as it can be run again).
    more = "".join(f" {shlex.quote(a)}" for a in run_args)
    counts = ",".join(str(n) for n in sorted(set(nodes)))
    lines += [f"cmd=({shlex.quote(gmb)} run {shlex.quote(campaign_file)} --launcher srun --nodes {counts} "
              f"--ranks-per-node {ranks_per_node} --results {shlex.quote(results)} "
              f"--name {shlex.quote(c.name)} --no-build{more})",
              f"echo \"gmb: job ${{SLURM_JOB_ID:-?}}, $(date -u +%Y-%m-%dT%H:%M:%SZ), node counts {counts}: "
              "$(printf '%q ' \"${cmd[@]}\")\"",
              "exec \"${cmd[@]}\"", ""]
    text = "\n".join(lines)
    problem = bash_syntax(text)
    if problem:  # not expected: every value above is checked or quoted
        raise UsageError(f"the script written would not parse (bash -n: {problem}); nothing written")
    return text


def campaign_libraries(c: Campaign, libs) -> list:
    """The libraries the campaign runs (its blocks' `libraries`, else the campaign's; "*": all)."""
    names = {n for b in c.blocks for n in (b.libraries or c.libraries)}
    return list(libs) if "*" in names else [lib for lib in libs if lib.name in names]


def setup_lines(items) -> list[str]:
    """The setup block: ``items`` as the command line gave them, ("line", text) or ("file", path)."""
    out: list[str] = []
    for kind, value in items or ():
        if kind == "line":
            out.append(value)
            continue
        try:
            text = Path(value).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--setup-file {value}: {getattr(exc, 'strerror', None) or exc}") from None
        for i, line in enumerate(text.splitlines(), 1):
            if _CONTROL.search(line.rstrip("\r")):
                raise UsageError(f"--setup-file {value}: line {i} holds a control character")
            out.append(line.rstrip("\r"))
    return out


def _engines(opts: SlurmOptions, c) -> tuple[list[str], int]:
    """The campaign's engines, built here unless --no-build (then looked for: missing ones refused unless
    --no-engine-check): (comment lines naming them, exit status: 1 when a build failed)."""
    if opts.no_engine_check:
        return ["engines: not looked for (--no-engine-check); the job skips a library without one"], 0
    libs, all_names = found_libraries(opts.libraries)
    checks.check_library_names(c, all_names)
    libs = campaign_libraries(c, libs)
    if not libs:
        raise UsageError(f"{opts.campaign}: names no library found or declared here (--library leaves them out?)")
    host = socket.gethostname()
    built = opts.build
    if built.cuda is None and opts.gpus_per_node and "GMB_ENABLE_CUDA" not in os.environ and not built.no_build:
        built = replace(built, cuda="AUTO")  # the compute nodes' GPUs decide, not this node's driver: CUDA with nvcc
    # as gmb build (and, with --no-build, as the job's gmb run --no-build) takes them
    chosen = configurations.engine_choices(libs, do_build=not built.no_build,
                                           build_options=engines.build_options(built),
                                           log=lambda m: print(f"gmb slurm: {m}", file=sys.stderr))
    failed = {name: ch.error or f"engine {ch.path} does not exist" for name, ch in chosen.items()
              if ch.error is not None or ch.path is None or not Path(ch.path).exists()}
    if failed and built.no_build:
        raise UsageError(f"--no-build: no engine for {', '.join(failed)} ({'; '.join(map(str, failed.values()))}): "
                         f"the job would skip it. Build it first (gmb build --library NAME), leave out --no-build, "
                         f"or --no-engine-check to write the script anyway")
    for err in dict.fromkeys(map(str, failed.values())):
        print(f"gmb slurm: {err}", file=sys.stderr)
    if failed:
        print("gmb slurm: no script written: an engine failed to build (--library to leave its library out)",
              file=sys.stderr)
        return [], 1
    _say_memory_skips(c, libs, chosen, opts)
    return [f"engines ({'found' if built.no_build else 'built or found'} on {host} before the job; it runs them "
            f"with --no-build):", *(f"  {name}: {ch.path} ({ch.why})" for name, ch in chosen.items())], 0


def _say_memory_skips(c: Campaign, libs, chosen: dict, opts: SlurmOptions) -> None:
    """Says which points of the campaign the job will skip for want of a memory kind its engines lack (device memory
    of an engine built without CUDA; of one built with CUDA, unless --gpus-per-node says the nodes have GPUs), as the
    job's own plan will (plan.unavailable_memory)."""
    descriptions = {}
    for lib in libs:
        choice = chosen[lib.name]
        try:
            descriptions[lib.name] = choice.description or build.describe_engine(choice.path, env=lib.process_env())
        except (build.BuildError, DescriptionError):
            continue  # the job says it, as it says any engine it cannot use
    _, skipped = plan.plan(c, libs, descriptions, hosts=max(opts.nodes), gpus_elsewhere=bool(opts.gpus_per_node))
    for name, what, why in skipped:
        if why.startswith("memory kind "):
            hint = "" if opts.gpus_per_node else " (if the compute nodes have GPUs: --gpus-per-node G)"
            print(f"gmb slurm: the job will skip {name}: {what}: {why}{hint}", file=sys.stderr)


def command(opts: SlurmOptions) -> int:
    """`gmb slurm`: checks, engines, script."""
    c = spec.load_campaign(opts.campaign)
    out = Path(opts.output)
    if out.exists():
        raise UsageError(f"{out} exists; not overwriting")
    nodes = list(opts.nodes)
    setup = setup_lines(opts.setup)
    # the files the job reads, as absolute paths: sbatch runs the script in the directory it is submitted from,
    # which need not be this one
    campaign = os.path.abspath(opts.campaign)
    options = dict(qos=opts.qos, reservation=opts.reservation, constraint=opts.constraint, exclusive=opts.exclusive,
                   setup=setup)
    libs = opts.libraries
    run_args = [*(["--config", os.path.abspath(libs.config)] if libs.config else []),
                *(a for name in libs.library for a in ("--library", name)),
                *(["--no-detect"] if libs.no_detect else []), *(["--no-isolation"] if libs.no_isolation else []),
                *(["--nic", opts.nic] if opts.nic else [])]
    exports = {"GMB_CACHE": str(build_cache.cache_dir().expanduser().resolve())}
    if os.environ.get("GMB_SOURCE"):
        exports["GMB_SOURCE"] = str(Path(os.environ["GMB_SOURCE"]).resolve())
    venv = os.environ.get("VIRTUAL_ENV") or (sys.prefix if sys.prefix != sys.base_prefix else "")
    activate = Path(venv, "bin", "activate") if venv else None
    if activate and activate.is_file() and not any("bin/activate" in line for line in setup):
        options["setup"] = [*setup, f"source {shlex.quote(str(activate))}"]  # the job runs this gmb, after the modules
    hint = "--setup to put it on PATH"
    # every value checked before anything is built
    batch_script(campaign, c, nodes, opts.ranks_per_node, opts.gpus_per_node, opts.time, opts.partition,
                 opts.account, run_args=run_args, exports=exports, **options)
    engine_notes, rc = _engines(opts, c)
    if rc:
        return rc
    notes = [f"written by gmb slurm (gmb {__version__}) on {socket.gethostname()} in {Path.cwd()}", *engine_notes]
    text = batch_script(campaign, c, nodes, opts.ranks_per_node, opts.gpus_per_node, opts.time, opts.partition,
                        opts.account, run_args=run_args, exports=exports, notes=notes, gmb_hint=hint, **options)
    write_new(out, text)
    print(out)
    return 0
