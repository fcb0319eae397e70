# SPDX-License-Identifier: BSD-3-Clause
"""The `gmb` command line's arguments (``parser``), and the typed options each command gets from them: the one place
that knows argparse."""

from __future__ import annotations

import argparse
from dataclasses import fields

from . import __version__
from .campaign.spec import CampaignError, nic_request
from .errors import did_you_mean
from .machine.knobs import ENV_NAME
from .options import BuildOptions, LibraryOptions, SessionOptions, SlurmOptions, TuneOptions

_NESTED = {"libraries": LibraryOptions, "build": BuildOptions}


def options(cls, namespace: argparse.Namespace):
    """``cls`` (a dataclass of options.py) from the parsed arguments of the same names; lists become tuples, and
    arguments a command does not have keep their defaults."""
    values = {}
    for f in fields(cls):
        if f.name in _NESTED:
            values[f.name] = options(_NESTED[f.name], namespace)
        elif getattr(namespace, f.name, None) is not None:
            value = getattr(namespace, f.name)
            values[f.name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)


def library_options(namespace) -> LibraryOptions:
    return options(LibraryOptions, namespace)


def build_options(namespace) -> BuildOptions:
    return options(BuildOptions, namespace)


def session_options(namespace) -> SessionOptions:
    return options(SessionOptions, namespace)


def slurm_options(namespace) -> SlurmOptions:
    return options(SlurmOptions, namespace)


def tune_options(namespace) -> TuneOptions:
    return options(TuneOptions, namespace)


def _checked(convert, ok, what: str):
    """An argparse type: the text converted (int, float) and kept where ``ok``; else "must be WHAT (got TEXT)"."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"must be {what} (got {text!r})")
        return value
    return parse


_positive_int = _checked(int, lambda v: v >= 1, "an integer >= 1")


def _node_counts(text: str) -> tuple[int, ...]:
    """--nodes 1,2,4: node counts, each an integer >= 1, ascending and each once."""
    counts = [n.strip() for n in text.split(",")]
    if not all(n.isdigit() and int(n) >= 1 for n in counts):
        raise argparse.ArgumentTypeError(f"must be node counts, integers >= 1, comma-separated (e.g. 1,2,4); got "
                                         f"{text!r}")
    return tuple(sorted({int(n) for n in counts}))


def _nic(text: str) -> str:
    """--nic nearest|none|NAME[,NAME...]: what the engine's --nic takes."""
    try:
        return nic_request(text.split(",") if "," in text else text, "--nic")
    except CampaignError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--nic: ")) from None


_nonnegative_int = _checked(int, lambda v: v >= 0, "an integer >= 0")
_positive_seconds = _checked(float, lambda v: 0 < v < float("inf"), "a number of seconds > 0")  # NaN is not


def _knob(text: str) -> tuple[str, str]:
    """--knob NAME=VALUE: a setting to search and one value of it (the value may hold commas: UCX_TLS=sm,self)."""
    name, _, value = text.partition("=")
    if not ENV_NAME.fullmatch(name) or not value:
        raise argparse.ArgumentTypeError(f"must be NAME=VALUE, NAME an environment variable (e.g. "
                                         f"UCX_RNDV_THRESH=8192); got {text!r}")
    return name, value


class _SetupItem(argparse.Action):
    """`gmb slurm --setup LINE` / `--setup-file FILE`: one list, in the order given."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, self.dest, None) or [])
        items.append(("file" if option_string == "--setup-file" else "line", values))
        setattr(namespace, self.dest, items)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose refusal of an unknown option names the closest one it has ("--quik": "--quick")."""

    def parse_known_args(self, args=None, namespace=None):
        parsed, extras = super().parse_known_args(args, namespace)
        offered = [name for action in self._actions for name in action.option_strings]
        for extra in extras:
            if extra.startswith("-") and (hint := did_you_mean(extra.split("=", 1)[0], offered)):
                self.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed, extras


def parser() -> argparse.ArgumentParser:
    """The `gmb` parser: one subcommand per builder below, in the order `gmb --help` lists them."""
    p = _Parser(prog="gmb", description="GPU-aware MPI benchmark harness (drives gmb-bench)")
    p.add_argument("--version", action="version", version=f"gmb {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True)
    for add in (_libs, _doctor, _build, _run, _plan, _tune, _profile, _predict, _app, _report, _tables, _compare,
                _slurm, _ingest):
        add(sub)
    return p


def _library_arguments(sp):
    """Which MPI libraries a command takes: the same for every command that finds them."""
    sp.add_argument("--config", help="libraries TOML (default: $GMB_CONFIG, ~/.config/gmb/libraries.toml, "
                                     "./gmb.toml)")
    sp.add_argument("--library", action="append", help="restrict to this library (repeatable)")
    sp.add_argument("--no-detect", action="store_true", help="only declared libraries")
    sp.add_argument("--no-isolation", action="store_true",
                    help="keep other MPI installations' directories in PATH and LD_LIBRARY_PATH (diagnosis: "
                         "every launch is still checked for the library it ran)")


def _build_arguments(sp, cuda_default="$GMB_ENABLE_CUDA, else AUTO: when nvcc is found, OFF where no NVIDIA driver "
                                      "works"):
    """The engine build options, the same for every command that builds (``cuda_default``: what --cuda is when not
    given)."""
    sp.add_argument("--cuda", choices=["AUTO", "ON", "OFF"],
                    help=f"engine builds: the CUDA module (default: {cuda_default})")
    sp.add_argument("--cuda-arch", help="engine builds: CMAKE_CUDA_ARCHITECTURES, e.g. 90")
    sp.add_argument("--cmake-arg", action="append", metavar="ARG",
                    help="one more CMake argument for the engine builds, e.g. -DGMB_ENABLE_NCCL=ON (repeatable; "
                         "after the library's cmake_args)")
    sp.add_argument("--jobs", "-j", type=_positive_int,
                    help="parallel compile jobs per engine build (default: all CPUs)")


def _libs(sub):
    sp = sub.add_parser("libs", help="list MPI libraries found and declared")
    _library_arguments(sp)
    sp.add_argument("--json", action="store_true")


def _doctor(sub):
    sp = sub.add_parser("doctor", help="GPUs, links, NUMA, MPI libraries, CUDA awareness, what is missing")
    _library_arguments(sp)
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--no-engine", action="store_true", help="do not run the engine's doctor")
    sp.add_argument("--settings", action="store_true",
                    help="find the settings each library's GPU support depends on (the engine's doctor without each "
                         "of them; default: when GPUs are present)")


def _build(sub):
    sp = sub.add_parser("build", help="build one engine per MPI library (cached), or say which installed one it "
                                      "uses ($GMB_ENGINE, PATH)")
    _library_arguments(sp)
    sp.add_argument("--force", action="store_true")
    _build_arguments(sp)


def _campaign_arguments(sp):
    """What `gmb run` and `gmb plan` share: the libraries, the campaign and where and how its launches run."""
    _library_arguments(sp)
    sp.add_argument("campaign", nargs="?", help="campaign TOML (omit for the generated default)")
    sp.add_argument("--quick", action="store_true",
                    help="the quick campaign, generated from the machine (docs/campaigns.md, 'The quick campaign')")
    sp.add_argument("--for-profile", metavar="PROFILE",
                    help="the campaign that measures every figure `gmb predict` needs for this application "
                         "profile (gmb profile's directory or profile.json; docs/application.md)")
    sp.add_argument("--repetitions", type=_positive_int)
    sp.add_argument("--timeout", type=_positive_seconds, help="seconds per launch")
    sp.add_argument("--seed", type=int)
    sp.add_argument("--bundle", action=argparse.BooleanOptionalAction, default=None,
                    help="run launches that can share one engine launch as its blocks (gmb-bench plan), as a "
                         "campaign's bundle = true does, or each in a launch of its own (--no-bundle); default: "
                         "the campaign's bundle, true for a generated campaign (docs/campaigns.md, 'Bundles')")
    sp.add_argument("--name")
    sp.add_argument("--launcher", help="override the launcher of every library (mpirun, mpiexec, srun)")
    sp.add_argument("--nodes", type=_node_counts, help="node counts: the hosts the launches may use (srun's "
                                                       "allocation, a hostfile's first hosts); several (1,2,4): "
                                                       "the collectives on each, in one results directory")
    sp.add_argument("--ranks-per-node", type=_positive_int)
    sp.add_argument("--nic", type=_nic, metavar="nearest|NAME[,NAME...]|none",
                    help="the network card each local rank's MPI library and NCCL use, in every block (overrides "
                         "the campaign's nic): the one nearest its GPU, or the names by local rank; none: the "
                         "library's own choice (docs/multinode.md)")
    sp.add_argument("--tuned", metavar="TUNE_DIR", help="measure the configurations a `gmb tune` recommended "
                                                        "(its results directory) beside the others")
    sp.add_argument("--topology", metavar="JSON", help="plan for this topology instead of the machine's "
                                                       "(a file like `gmb doctor --json`'s topology)")
    sp.add_argument("--hostfile", help="the hosts the launches may use, in either launcher's form (Open MPI's "
                                       "'host slots=N', Hydra's 'host:N'): docs/multinode.md")


def _run(sub):
    sp = sub.add_parser("run", help="run a campaign (default: generated from the machine)")
    _campaign_arguments(sp)
    sp.add_argument("--results", default="results", help="parent directory of results (default results/)")
    sp.add_argument("--resume", metavar="RESULTS_DIR", help="continue an interrupted campaign")
    sp.add_argument("--no-build", action="store_true", help="use existing engines only (declared, "
                                                            "$GMB_ENGINE, on PATH, or built before)")
    sp.add_argument("--no-progress", action="store_true")
    sp.add_argument("--no-report", action="store_true")
    sp.add_argument("--dry-run", action="store_true", help="only show the plan (as `gmb plan`)")
    sp.add_argument("--refresh", action="store_true",
                    help="ask the engines' doctors again (GPU awareness, the settings that matter) instead of "
                         "reusing what an earlier run found for the same configuration, engine and GPUs")
    _build_arguments(sp)


def _plan(sub):
    _campaign_arguments(sub.add_parser("plan", help="show the launches a campaign would make (dry run)"))


def _tune(sub):
    sp = sub.add_parser("tune", help="search each library's settings per path within a time budget and recommend "
                                     "only those fresh launches confirm, with their gain (docs/tune.md)")
    _library_arguments(sp)
    sp.add_argument("campaign", nargs="?", help="search the blocks of this campaign file (each one launch per set of "
                                                "settings; its [knobs] tried too) instead of the machine's paths")
    sp.add_argument("--budget", type=_positive_seconds, default=600.0,
                    help="seconds for the search (default 600; building engines comes before it)")
    sp.add_argument("--paths", type=lambda t: tuple(w for w in t.split(",") if w), default=(),
                    help="paths to search, by name or kind, comma-separated: nvlink, pcie, same-gpu, device, "
                         "host-device, host, inter-node, collective (default: every path here)")
    sp.add_argument("--knob", action="append", type=_knob, metavar="NAME=VALUE",
                    help="a value of one more setting to search (repeatable: the same NAME again adds a value)")
    sp.add_argument("--knobs", type=lambda t: tuple(w for w in t.split(",") if w), default=(),
                    metavar="PATTERN[,PATTERN...]",
                    help="search only the knobs with these names (shell patterns, e.g. 'UCX_RNDV_*,NCCL_PROTO'): "
                         "fewer values, more launches each within the budget (default: every knob offered)")
    sp.add_argument("--list", dest="list_knobs", action="store_true",
                    help="say which knobs each configuration is offered (default, values tried) and which not, why")
    sp.add_argument("--verify", nargs=2, metavar=("TUNE_DIR", "RUN_DIR"),
                    help="set a search's recommendations beside a `gmb run` of its tune.toml (with its "
                         "tune-libraries.toml): do they agree, does the gain hold; exit 1 where not")
    sp.add_argument("--seed", type=int)
    sp.add_argument("--topology", metavar="JSON", help="with --list: the knobs of another machine's paths, its topology from "
                                                       "this file (like `gmb doctor --json`'s topology)")
    sp.add_argument("--nodes", type=_node_counts, help="the hosts the launches may use (srun's allocation)")
    sp.add_argument("--hostfile")
    sp.add_argument("--results", default="results", help="parent directory of results (default results/)")
    sp.add_argument("--no-build", action="store_true", help="use existing engines only")
    sp.add_argument("--no-report", action="store_true")
    _build_arguments(sp)


def _profile(sub):
    sp = sub.add_parser("profile", help="run an MPI application with gmb's profiler: its calls by kind, size, memory "
                                        "and path (docs/application.md)")
    _library_arguments(sp)
    sp.add_argument("--out", help="the profile directory to make (default: RESULTS/profile-APP-TIME)")
    sp.add_argument("--results", default="results", help="parent directory of profiles (default results/)")
    sp.add_argument("--no-build", action="store_true", help="use existing engines (and their profilers) only")
    _build_arguments(sp)
    sp.add_argument("command", nargs=argparse.REMAINDER, help="-- the application's launch command, e.g. -- mpirun "
                                                              "-np 4 ./app input")


def _predict(sub):
    sp = sub.add_parser("predict", help="an application profile's communication time under each configuration a "
                                        "store measured, ranked, with the calls that dominate")
    sp.add_argument("profile", help="gmb profile's directory or its profile.json")
    sp.add_argument("results", help="a results directory (or store.sqlite) of gmb run")
    sp.add_argument("--other-machine", action="store_true",
                    help="price a profile taken on other hosts than the store measured")
    sp.add_argument("--json", action="store_true")


def _app(sub):
    sp = sub.add_parser("app", help="run an application under each configuration, launches interleaved, and set its "
                                    "measured time beside the prediction")
    _library_arguments(sp)
    sp.add_argument("--np", type=_positive_int, required=True, help="ranks of each run")
    sp.add_argument("--hostfile", help="the hosts the runs may use, in the launcher's form (docs/multinode.md)")
    sp.add_argument("--ranks-per-node", type=_positive_int,
                    help="ranks on each host (default: the launcher's placement, which fills the first host first)")
    sp.add_argument("--launches", type=_positive_int, default=5, help="runs per configuration (default 5)")
    sp.add_argument("--figure", metavar="REGEX", help="the figure to compare, a number the application prints "
                                                      "(a regular expression with one group; its last match): e.g. "
                                                      "'Loop time of ([0-9.]+)'; default: the run's wall time")
    sp.add_argument("--higher-is-better", action="store_true", help="the figure is a rate (default: a time)")
    sp.add_argument("--predict", nargs=2, metavar=("PROFILE", "RESULTS"),
                    help="set the prediction from this profile and store beside what is measured")
    sp.add_argument("--no-profile", action="store_true",
                    help="run without the profiler (no MPI time measured; for the profiler's overhead)")
    sp.add_argument("--timeout", type=_positive_seconds, help="seconds per run (default: none)")
    sp.add_argument("--seed", type=int, default=1, help="the order of configurations in each round")
    sp.add_argument("--results", default="results", help="parent directory of results (default results/)")
    sp.add_argument("--no-build", action="store_true", help="use existing engines only")
    sp.add_argument("--no-report", action="store_true", help="no report.html")
    _build_arguments(sp)
    sp.add_argument("command", nargs=argparse.REMAINDER, help="-- the program and its arguments")


def _report(sub):
    sp = sub.add_parser("report", help="one self-contained HTML report from a results directory")
    sp.add_argument("results", help="results directory, store.sqlite, or JSONL file/directory")
    sp.add_argument("-o", "--output", help="HTML file (default RESULTS/report.html, or report-2.html, ... where that "
                                           "exists); an existing one is kept unless --force")
    sp.add_argument("--force", action="store_true", help="replace the report file (records are never touched)")
    sp.add_argument("--csv", metavar="DIR", help="also write every table as CSV into DIR")
    sp.add_argument("--title")


def _tables(sub):
    sp = sub.add_parser("tables", help="print the tables (and optionally export CSV)")
    sp.add_argument("results")
    sp.add_argument("--csv", metavar="DIR")
    sp.add_argument("--json", action="store_true",
                    help="print the answers and the tables as one JSON document (format gmb.answers/3) instead of text")


def _compare(sub):
    sp = sub.add_parser("compare", help="ratio B/A per point with its 95 %% interval and a verdict (5 %% false "
                                          "discovery rate), every point not matched said why; regression check")
    sp.add_argument("a")
    sp.add_argument("b")
    sp.add_argument("--a-library")
    sp.add_argument("--b-library")
    sp.add_argument("--reference", help="tolerances TOML; exit 1 when violated")
    sp.add_argument("--csv", metavar="DIR")


def _slurm(sub):
    sp = sub.add_parser("slurm", help="write a Slurm batch script for a campaign (node-count sweep); builds its "
                                      "engines here first")
    _library_arguments(sp)
    sp.add_argument("campaign", help="campaign TOML the job runs (gmb run CAMPAIGN on the allocated nodes)")
    sp.add_argument("-o", "--output", default="gmb.sbatch", help="the script file (default gmb.sbatch; never "
                                                                   "overwritten)")
    sp.add_argument("--nodes", type=_node_counts, default=(1,), help="comma-separated node counts, e.g. 1,2,4,8 "
                                                                      "(one gmb run over all of them)")
    sp.add_argument("--ranks-per-node", type=_positive_int, default=1)
    sp.add_argument("--gpus-per-node", type=_nonnegative_int, default=0)
    sp.add_argument("--nic", type=_nic, metavar="nearest|NAME[,NAME...]|none",
                    help="the job's gmb run --nic: the network card of each local rank (docs/multinode.md)")
    sp.add_argument("--time", default="01:00:00", help="#SBATCH --time (default 01:00:00)")
    for opt in ("partition", "account", "qos", "reservation"):
        sp.add_argument(f"--{opt}", help=f"#SBATCH --{opt}")
    sp.add_argument("--constraint", help="#SBATCH --constraint (node features: a100&ib, [r1|r2], ...)")
    sp.add_argument("--exclusive", nargs="?", const="", metavar="user|mcs|topo", help="#SBATCH --exclusive")
    sp.add_argument("--setup", action=_SetupItem, metavar="LINE",
                    help="a shell line the job runs first, e.g. 'module load cuda openmpi' (repeatable, in order)")
    sp.add_argument("--setup-file", action=_SetupItem, dest="setup", metavar="FILE",
                    help="its lines, as --setup (repeatable; in order with --setup)")
    sp.add_argument("--no-build", action="store_true",
                    help="build no engine here (the job never builds): every engine of the campaign must exist")
    sp.add_argument("--no-engine-check", action="store_true",
                    help="write the script without building or looking for engines (implies --no-build)")
    _build_arguments(sp, cuda_default="$GMB_ENABLE_CUDA, else AUTO with --gpus-per-node, else as gmb build")


def _ingest(sub):
    sp = sub.add_parser("ingest", help="add JSONL record files (and their engines' descriptions) to a store")
    sp.add_argument("store", help="store.sqlite (created if absent)")
    sp.add_argument("files", nargs="+", help="record files (.jsonl) and engine files (RESULTS/engines/*.json: the "
                                             "description of each library's engine, which the tables and answers "
                                             "read)")
    sp.add_argument("--library", help="library label (default: from the context's version string); when gmb knows "
                                      "the library (gmb libs), records that ran another one are refused")
    sp.add_argument("--config", help="libraries TOML, as for gmb libs")
    sp.add_argument("--no-detect", action="store_true", help="only declared libraries")
    sp.add_argument("--no-check", action="store_true", help="store under --library without checking the records")
    sp.add_argument("--validate", action="store_true", help="check every line against the record schema (shipped "
                                                            "with gmb: gmb/schema/record.v1.json; $GMB_SCHEMA: another)")
