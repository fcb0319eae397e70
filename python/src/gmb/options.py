# SPDX-License-Identifier: BSD-3-Clause
"""What a command asked for, as typed values: the command line (cli.py) makes these from its arguments, and nothing
below it sees the command line itself."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class LibraryOptions:
    """Which MPI libraries: a libraries file, --library names, no detection, no isolation, a launcher for all."""
    config: str | None = None
    library: tuple[str, ...] = ()
    no_detect: bool = False
    no_isolation: bool = False
    launcher: str | None = None


@dataclass(frozen=True)
class BuildOptions:
    """How engines are built (or not: ``no_build``)."""
    no_build: bool = False
    cuda: str | None = None  # ON | OFF | AUTO; None: as topology.engine_cuda decides
    cuda_arch: str | None = None
    cmake_arg: tuple[str, ...] = ()
    jobs: int | None = None


@dataclass(frozen=True)
class SessionOptions:
    """`gmb run` and `gmb plan`."""
    libraries: LibraryOptions = field(default_factory=LibraryOptions)
    build: BuildOptions = field(default_factory=BuildOptions)
    campaign: str | None = None  # the campaign file (None: generated)
    quick: bool = False
    for_profile: str | None = None  # an application's profile: the campaign that measures what predicting it needs
    repetitions: int | None = None
    timeout: float | None = None
    seed: int | None = None
    name: str | None = None
    nodes: tuple[int, ...] = ()  # node counts: the largest is the hosts the session has; several: a sweep
    ranks_per_node: int | None = None
    topology: str | None = None  # plan for the topology of this JSON file
    nic: str | None = None  # every block's --nic ("nearest", "none", names joined by commas); None: the campaign's
    tuned: str | None = None  # a `gmb tune` results directory: its tuned configurations beside the others
    hostfile: str | None = None
    results: str = "results"
    resume: str | None = None
    no_progress: bool = False
    no_report: bool = False
    dry_run: bool = False
    refresh: bool = False  # ask the engines' doctors again instead of reusing their kept answers
    bundle: bool | None = None  # launches that can share one engine launch run as its blocks; None: the campaign's


@dataclass(frozen=True)
class TuneOptions:
    """`gmb tune`."""
    libraries: LibraryOptions = field(default_factory=LibraryOptions)
    build: BuildOptions = field(default_factory=BuildOptions)
    campaign: str | None = None  # a campaign file whose blocks are the paths searched (None: the machine's paths)
    budget: float = 600.0  # seconds for the search (engines built before it starts)
    paths: tuple[str, ...] = ()  # path names or kinds to search (tune/paths.py); none: every path
    knob: tuple[tuple[str, str], ...] = ()  # --knob NAME=VALUE, repeatable: more knob values to search
    knobs: tuple[str, ...] = ()  # --knobs: only the knobs whose names match these shell patterns (none: all)
    list_knobs: bool = False  # only say which knobs each configuration is offered
    verify: tuple[str, ...] = ()  # (TUNE_DIR, RUN_DIR): a search's answer against a run of its tune.toml
    topology: str | None = None  # the topology of this JSON file instead of the machine's
    seed: int | None = None
    nodes: tuple[int, ...] = ()
    hostfile: str | None = None
    results: str = "results"
    no_report: bool = False


@dataclass(frozen=True)
class SlurmOptions:
    """`gmb slurm`."""
    campaign: str
    libraries: LibraryOptions = field(default_factory=LibraryOptions)
    build: BuildOptions = field(default_factory=BuildOptions)
    output: str = "gmb.sbatch"
    nodes: tuple[int, ...] = (1,)  # node counts
    ranks_per_node: int = 1
    gpus_per_node: int = 0
    nic: str | None = None  # the job's gmb run --nic; None: the campaign's
    time: str = "01:00:00"
    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    reservation: str | None = None
    constraint: str | None = None
    exclusive: str | None = None
    setup: tuple[tuple[str, str], ...] = ()  # ("line", text) or ("file", path), in the order given
    no_engine_check: bool = False
