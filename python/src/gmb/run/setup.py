# SPDX-License-Identifier: BSD-3-Clause
"""What a session plans, one path for `gmb plan` and `gmb run`: the libraries (found, declared, restricted by
--library), their configurations on this machine with their engines, the campaign (a file, or generated), the
launches and what is skipped."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from ..campaign import checks, for_profile, spec
from ..campaign.generated import default_campaign
from ..campaign.plan import Launch, plan
from ..engine import configurations as confs_mod
from ..engine.configurations import Configuration
from ..engine.awareness import doctor_configurations
from ..engine.engines import build_options
from ..errors import UsageError, did_you_mean
from ..machine import families, launchers
from ..machine import libraries as libraries_mod
from ..machine import mpilibs
from ..machine import topology
from ..options import LibraryOptions, SessionOptions
from ..results.tune_answer import read_answer
from .execute import placement


def check_launcher(name: str | None, what: str = "--launcher"):
    """UsageError unless ``name`` is a registered launcher (None: none asked for)."""
    if name is not None and name not in launchers.REGISTRY:
        raise UsageError(f"{what}: unknown launcher {name!r}{did_you_mean(name, launchers.REGISTRY)} "
                         f"(accepted: {', '.join(sorted(launchers.REGISTRY))})")


def check_working_directory():
    """UsageError where the current directory was deleted: the launchers start every process in it (Open MPI's and
    Hydra's cannot), so no launch could run."""
    try:
        os.getcwd()
    except FileNotFoundError:
        raise UsageError("the current directory was deleted: the launchers start every process in it and cannot; "
                         "change to a directory that exists and run again") from None


def check_campaign_file(campaign: str | None) -> None:
    """UsageError when a campaign file is named that is not there (checked before anything is looked for)."""
    if campaign and not Path(campaign).is_file():
        raise UsageError(f"{campaign}: no such campaign file (a campaign TOML's path, e.g. the installed "
                         f"<prefix>/share/gmb/campaigns/*.toml; none, or --quick, for a campaign generated from the "
                         f"machine)")


def found_libraries(opts: LibraryOptions, need: bool = True) -> tuple[list[mpilibs.MpiLibrary], list[str]]:
    """Found and declared libraries, restricted by --library, and the names of all of them (a campaign may name a
    library that --library leaves out: that is a skip, not an error)."""
    check_launcher(opts.launcher)
    try:
        libs = libraries_mod.all_libraries(opts.config, detect_libs=not opts.no_detect)
    except mpilibs.ConfigError as exc:
        raise UsageError(str(exc)) from None
    all_names = [lib.name for lib in libs]
    if opts.no_isolation:
        libs = [replace(lib, isolate_from=[]) for lib in libs]
    if opts.library:
        names = {lib.name for lib in libs}
        configuration_of = mpilibs.configuration_names(libs)
        unknown = [w for w in opts.library if w not in names and w not in configuration_of]
        if unknown:
            raise UsageError(f"unknown library {', '.join(unknown)}{did_you_mean(unknown[0], names)} "
                             f"(found: {', '.join(sorted(names)) or 'none'})")
        libs = [lib for lib in libs
                if lib.name in opts.library or lib.name in {configuration_of.get(w) for w in opts.library}]
    if need and not libs:
        raise UsageError("no MPI library found or declared (see `gmb doctor`)")
    if opts.launcher:
        libs = [replace(lib, launcher=opts.launcher) for lib in libs]
    return libs, all_names


def libraries(opts: LibraryOptions, need: bool = True) -> list[mpilibs.MpiLibrary]:
    """Found and declared libraries, restricted by --library."""
    return found_libraries(opts, need)[0]


def diagnosed_configurations(opts: LibraryOptions, topo: topology.Topology) -> list[Configuration]:
    """What `gmb doctor` diagnoses: the libraries found and declared (on a GPU node with their GPU support: what a
    campaign there runs), each with the engine it would use; nothing built, nothing said."""
    libs = libraries(opts, need=False)
    if topo.gpus:
        libs = [mpilibs.with_gpu_support(lib) for lib in libs]
    return confs_mod.configurations(libs, do_build=False, diagnosis=True)


def machine_configurations(opts: SessionOptions, libs, topo) -> list[mpilibs.MpiLibrary]:
    """On a GPU node each MPICH found runs with its GPU profile, and a generated campaign measures each pml of an Open
    MPI found with UCX as a configuration of its own (mpilibs.gpu_configurations); --library may name the
    installation (both pml configurations) or one configuration."""
    installation = mpilibs.configuration_names(libs)
    wanted = set(opts.libraries.library)
    if opts.campaign or not topo.gpus:
        named = sorted(wanted & set(installation))
        if named:
            raise UsageError(_generated_configurations_only(named, installation, libs))
        return [mpilibs.with_gpu_support(lib) for lib in libs] if topo.gpus else libs
    return [c for c in mpilibs.gpu_configurations(libs)
            if not wanted or c.name in wanted or installation.get(c.name, c.name) in wanted]


def _generated_configurations_only(named: list[str], installation: dict[str, str], libs) -> str:
    """Why --library may not name a configuration of a found library (mpilibs.gpu_configurations) here, in the words
    of its family's entry: "a pml configuration of a found Open MPI ... (profile openmpi-ob1 or openmpi-ucx)"."""
    installations = sorted({installation[n] for n in named})
    fams = [families.of(f) for f in dict.fromkeys(lib.family for lib in libs if lib.name in installations)]
    what = " or ".join(f"a {f.gpu_configuration_kind} configuration of a found {f.title}" for f in fams)
    profiles = " or ".join(c.profile for f in fams for c in f.gpu_configurations)
    return (f"--library {', '.join(named)}: {what} exists in a campaign generated on a GPU node only; name the "
            f"installation ({', '.join(installations)}), or declare the configuration in a libraries file "
            f"(profile {profiles})")


def load_campaign(campaign: str | None, all_library_names: list[str]):
    """The campaign file (None: generated), checked before anything is built or run: values of the wrong type and
    libraries that are neither found nor declared are errors."""
    if not campaign:
        return None
    check_campaign_file(campaign)
    c = spec.load_campaign(campaign)
    try:
        checks.check_library_names(c, all_library_names)
    except spec.CampaignError as exc:
        raise UsageError(f"{campaign}: {exc}") from None
    return c


def hosts(opts: SessionOptions) -> int | None:
    """How many hosts the launches may use: --nodes (the largest count), else the hostfile's hosts, else None
    (unknown). The one check of run, plan and tune that they can have them: UsageError (nothing planned) for a
    hostfile that is none, --ranks-per-node beyond a host's slots, --nodes beyond the hostfile's hosts or the Slurm
    allocation's nodes, several nodes with neither (nor the srun launcher, which asks Slurm for them)."""
    slots = _hostfile_slots(opts.hostfile) if opts.hostfile else None
    rpn = opts.ranks_per_node
    short = {host: n for host, n in (slots or {}).items() if rpn and n is not None and n < rpn}
    if short:
        raise UsageError(f"--ranks-per-node {rpn}: more ranks per node than the hostfile gives "
                         + ", ".join(f"{host} (slots={n})" for host, n in short.items())
                         + f"; at most --ranks-per-node {min(short.values())}, or more slots in {opts.hostfile}")
    if not opts.nodes:
        return len(slots) if slots else None
    asked = hosts_given(opts)
    job, allocated = os.environ.get("SLURM_JOB_ID"), os.environ.get("SLURM_JOB_NUM_NODES") or \
        os.environ.get("SLURM_NNODES")
    if slots is not None:
        have, where = len(slots), f"the hostfile {opts.hostfile} names {len(slots)} host(s) ({', '.join(slots)})"
    elif job and allocated and allocated.isdigit():
        have, where = int(allocated), f"the Slurm allocation (job {job}) has {allocated} node(s)"
    elif asked > 1 and opts.libraries.launcher != "srun" and not opts.topology:  # --topology: another machine's
        raise UsageError(f"--nodes {asked}: launches on {asked} nodes need hosts to run on, and there are none but "
                         f"this one: give a hostfile (--hostfile FILE, Open MPI's 'HOST slots=N' or Hydra's 'HOST:N' "
                         f"lines), or run inside a Slurm allocation (salloc, sbatch; `gmb slurm` writes the job)")
    else:
        return asked
    if asked > have:
        raise UsageError(f"--nodes {asked}: {where}; at most --nodes {have} here")
    return asked


def _hostfile_slots(hostfile: str) -> dict[str, int | None]:
    """The hosts of a hostfile, in order, and each one's slots (None: not given; a host listed twice has the
    slots of both lines); UsageError where it is not a hostfile."""
    try:
        text = Path(hostfile).read_text(errors="replace")
    except OSError as exc:
        raise UsageError(f"--hostfile {hostfile}: {exc.strerror or exc}") from None
    problem = launchers.hostfile_problem(text)
    if problem:
        raise UsageError(f"--hostfile {hostfile}: not a hostfile: {problem}")
    slots: dict[str, int | None] = {}
    for host, n in launchers.hostfile_entries(text):
        slots[host] = None if n is None or (host in slots and slots[host] is None) else (slots.get(host) or 0) + n
    if not slots:
        raise UsageError(f"--hostfile {hostfile}: no host in it")
    return slots


def _loopback(interface: str) -> bool:
    """A loopback network interface: ``lo``, or one this host's kernel flags so (IFF_LOOPBACK)."""
    try:
        flags = int(Path(f"/sys/class/net/{interface}/flags").read_text(), 16)
    except (OSError, ValueError):
        return interface == "lo"
    return interface == "lo" or bool(flags & 0x8)


def check_nic_reaches(launches: list[Launch], nodes: int | None, ranks_per_node: int | None):
    """UsageError where a launch across hosts pins a loopback interface (a block's nic, --nic): it cannot reach
    another host, and the launch would hang until its timeout."""
    for x in launches:
        names = x.engine_args[x.engine_args.index("--nic") + 1].split(",") if "--nic" in x.engine_args else []
        loop = [n for n in names if n not in ("nearest", "none") and _loopback(n)]
        across = x.planned_path == "inter-node" or (placement(x, nodes, ranks_per_node)[0] or 1) > 1
        if loop and across:
            raise UsageError(f"nic {','.join(names)}: {loop[0]} is a loopback interface, which cannot reach another "
                             f"host, and launch {x.launch_id} runs across hosts: name the interface that joins the "
                             f"hosts (`ip -br addr` on each), or nearest")


def machine_topology(opts: SessionOptions):
    """The machine's topology, or the one of --topology (planning for another machine)."""
    if opts.topology:
        try:
            return topology.from_json(Path(opts.topology).read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"--topology {opts.topology}: {exc}") from None
    return topology.discover()


def campaign(opts: SessionOptions, libs, descriptions, topo, loaded, host_count: int | None):
    """The campaign to plan (the file's, else generated), checked against the engines: a new one with the command
    line's repetitions, timeout, seed, name, bundling, node count and NIC pinning applied (``loaded`` stays as it
    was)."""
    if opts.for_profile:
        if loaded is not None or opts.quick:
            raise UsageError("--for-profile makes the campaign: give no campaign file and no --quick with it")
        loaded = for_profile.for_profile_campaign(opts.for_profile, None)
    c = loaded if loaded is not None else default_campaign(topo, libs, descriptions, quick=opts.quick,
                                                           hosts=host_count or 1)
    try:
        checks.check_benchmark_names(c, descriptions)
        checks.check_against_engines(c, descriptions)
    except spec.CampaignError as exc:
        raise UsageError(f"{opts.campaign}: {exc}" if opts.campaign else str(exc)) from None
    seed = opts.seed if opts.seed is not None else c.seed
    c = replace(c, repetitions=c.repetitions if opts.repetitions is None else opts.repetitions,
                timeout_s=c.timeout_s if opts.timeout is None else opts.timeout,
                seed=int.from_bytes(os.urandom(4), "little") if seed is None else seed, name=opts.name or c.name,
                bundle=c.bundle if opts.bundle is None else opts.bundle)
    if opts.nodes:  # blocks placed on all nodes (not point to point) run on each node count given
        per_node = opts.ranks_per_node or 1
        c = replace(c, blocks=[b if b.nodes or any(d.point_to_point(n) for n in b.benchmarks
                                                   for d in descriptions.values())
                               else replace(b, ranks=[max(opts.nodes) * per_node]) if len(opts.nodes) == 1
                               else replace(b, nodes=list(opts.nodes), ranks_per_node=per_node)
                               for b in c.blocks])
    if opts.nic:  # the command line's --nic for every block, "none" too
        c = replace(c, blocks=[replace(b, nic=None if opts.nic == "none" else opts.nic) for b in c.blocks])
    if opts.ranks_per_node:  # a block over node counts without its own ranks per node takes the command line's
        c = replace(c, blocks=[replace(b, ranks_per_node=b.ranks_per_node or opts.ranks_per_node) if b.nodes else b
                               for b in c.blocks])
    return c


def gpus_per_node(opts: SessionOptions, topo: topology.Topology, host_count: int | None) -> int | None:
    """How many GPUs each node of the launches has, where that is known: the topology's, for launches on this
    machine (no hostfile, no --nodes) or on the machine --topology describes; None where the nodes are other
    machines, which may have other GPUs than this one, or where CUDA_VISIBLE_DEVICES already narrows what the ranks
    see (then a block's GPUs are set as listed)."""
    if not topo.gpus or "CUDA_VISIBLE_DEVICES" in os.environ or (host_count is not None and not opts.topology):
        return None
    return len(topo.gpus)


def hosts_given(opts: SessionOptions) -> int | None:
    """The hosts of --nodes (the largest count): what the launcher is told for launches on all nodes."""
    return max(opts.nodes) if opts.nodes else None


@dataclass(frozen=True)
class Planned:
    """A session's plan: the campaign, every library configuration (with or without an engine), the launches, what
    is skipped and why, the topology planned for and the settings the engines' doctors found to matter."""
    campaign: spec.Campaign
    configurations: list[Configuration]
    launches: list[Launch]
    skipped: list[tuple[str, str, str]]
    topology: topology.Topology
    settings_that_matter: list[dict]


def configured(opts: SessionOptions, libs: list[mpilibs.MpiLibrary], topo: topology.Topology, do_build: bool,
               run_doctor: bool) -> tuple[list[Configuration], list[dict]]:
    """The session's library configurations on this machine, each with its engine (built when ``do_build``), with
    the awareness the engines' doctors found (``run_doctor``) and NCCL added for a generated campaign; and the
    settings the doctors found to matter."""
    libs = machine_configurations(opts, libs, topo)
    confs = confs_mod.configurations(libs, do_build, build_options(opts.build) if do_build else None)
    settings = []
    if run_doctor:
        confs, settings = doctor_configurations(confs, topo, refresh=opts.refresh)
    if not opts.campaign:
        confs = confs_mod.with_nccl(confs, topo)
    if opts.tuned:
        try:
            confs = confs_mod.with_tuned(confs, tuned_configurations(opts.tuned), f"--tuned {opts.tuned}")
        except ValueError as exc:
            raise UsageError(f"{exc}; the libraries as the search had them: --config "
                             f"{Path(opts.tuned) / 'tune-libraries.toml'} --no-detect") from None
    return confs, settings


def tuned_configurations(tune_dir: str) -> list[dict]:
    """The configurations a `gmb tune` results directory recommends (its tune.json's "tuned", its shape checked)."""
    tuned = read_answer(Path(tune_dir), "--tuned")["tuned"]
    if not tuned:
        print(f"gmb: --tuned {tune_dir}: the search recommended no setting: nothing to add", file=sys.stderr)
    return tuned


def prepare(opts: SessionOptions, do_build: bool, run_doctor: bool) -> Planned:
    """The plan of `gmb plan` (nothing built, no doctor) and of a new `gmb run` (engines built unless --no-build,
    the engines' doctors asked on a GPU machine)."""
    check_campaign_file(opts.campaign)
    libs, all_names = found_libraries(opts.libraries)
    loaded = load_campaign(opts.campaign, all_names)
    host_count = hosts(opts)
    topo = machine_topology(opts)
    confs, settings = configured(opts, libs, topo, do_build, run_doctor)
    runnable = confs_mod.runnable(confs)
    descriptions = confs_mod.descriptions(confs)
    c = campaign(opts, confs_mod.libraries(runnable), descriptions, topo, loaded, host_count)
    launches, skipped = plan(c, confs_mod.libraries(runnable), descriptions, hosts=host_count,
                             node_gpus=gpus_per_node(opts, topo, host_count))
    check_nic_reaches(launches, hosts_given(opts), opts.ranks_per_node)
    return Planned(c, confs, launches, confs_mod.skipped(confs) + skipped, topo, settings)
