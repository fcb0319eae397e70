# SPDX-License-Identifier: BSD-3-Clause
"""Library knobs: the settings `gmb tune` searches. Each is an environment variable that can change a figure (an
Open MPI MCA parameter, a UCX or NCCL variable, an MPICH control variable), with the values worth trying beside the
library's default, the paths it can affect and the layer of the library it belongs to. The family table (families.py)
names each family's knobs and how its library lists its own parameters; ``offers`` keeps the knobs the installed
library has (and shows their defaults), with the values it accepts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .family_tools import tool_output

# The paths a knob can affect, as `gmb tune` measures them: device buffers handed to the library (between GPUs, on
# one GPU), host <-> device, host memory, between hosts, and collectives
PATHS = ("device", "host-device", "host", "inter-node", "collective")
POINT_TO_POINT = ("device", "host-device", "host", "inter-node")
# The layers of a library configuration a knob belongs to: Open MPI's own (its pml ob1 and BTLs, its collectives),
# MPICH's, UCX (under Open MPI's pml ucx or MPICH's ch4:ucx), NCCL, and a user's knob (every configuration)
LAYERS = ("openmpi", "ob1", "mpich", "ucx", "nccl", "user")


@dataclass(frozen=True)
class Knob:
    name: str  # the environment variable (OMPI_MCA_<parameter> for an MCA parameter)
    values: tuple[str, ...]  # the values tried beside the library's default
    paths: tuple[str, ...]  # PATHS it can affect
    layer: str  # LAYERS
    why: str  # what it changes, for a person choosing settings
    together: tuple[tuple[str, str], ...] = ()  # settings any of its values needs alongside (a selection switch)
    source: str = "catalogue"  # where it comes from: the catalogue, or where a user added it
    # the collective operations it affects (an algorithm choice: only that operation's path); empty: any
    operations: tuple[str, ...] = ()

    def setting(self, value: str) -> dict[str, str]:
        """The settings that set the knob to ``value``."""
        return {**dict(self.together), self.name: value}


# Open MPI: ob1's shared-memory BTL (vader before 5.0, sm from 5.0) and CUDA BTL (smcuda), and the tuned collectives'
# algorithm choice, which only counts with dynamic rules on
_SINGLE_COPY = "how a large host message crosses processes: one copy through the kernel (cma, xpmem) or two " \
               "through a shared-memory segment (none, emulated)"
_EAGER = "the largest message sent eagerly through shared memory (above it: rendezvous)"
# the collectives whose algorithm is searched (their own path each: tune/paths.py), and the algorithms tried, by the
# names Open MPI 4.1's ompi_info enumerates (coll_tuned_<operation>_algorithm) and MPICH 4.0's mpivars describes
# (MPIR_CVAR_<OPERATION>_INTRA_ALGORITHM); a name the installed library does not list is not tried
TUNED_ALGORITHMS = {
    "allreduce": ("recursive_doubling", "ring", "segmented_ring", "rabenseifner"),
    "bcast": ("binomial", "pipeline", "split_binary_tree", "scatter_allgather_ring"),
    "allgather": ("bruck", "recursive_doubling", "ring", "neighbor"),
    "alltoall": ("linear", "pairwise", "modified_bruck"),
    "reduce": ("binomial", "pipeline", "rabenseifner"),
}
MPIR_ALGORITHMS = {
    "allreduce": ("recursive_doubling", "reduce_scatter_allgather"),
    "bcast": ("binomial", "scatter_recursive_doubling_allgather", "scatter_ring_allgather"),
    "allgather": ("brucks", "recursive_doubling", "ring"),
    "alltoall": ("brucks", "pairwise", "scattered"),
    "reduce": ("binomial", "reduce_scatter_gather"),
}
# On one node MPICH 4.0's ch4 device runs these in its shared-memory layer (release_gather), which MPIR's algorithm
# choice does not reach: its <OPERATION>_POSIX_INTRA_ALGORITHM=mpir hands them to MPIR's algorithms
MPICH_SHARED_MEMORY_COLLECTIVES = ("allreduce", "bcast", "reduce")


def _tuned_algorithm(operation: str) -> Knob:
    return Knob(f"OMPI_MCA_coll_tuned_{operation}_algorithm", TUNED_ALGORITHMS[operation], ("collective",),
                "openmpi", f"the {operation} algorithm (tuned component, dynamic rules on)",
                together=(("OMPI_MCA_coll_tuned_use_dynamic_rules", "1"),), operations=(operation,))


def _mpir_algorithm(operation: str) -> Knob:
    companion = ((f"MPIR_CVAR_{operation.upper()}_POSIX_INTRA_ALGORITHM", "mpir"),) \
        if operation in MPICH_SHARED_MEMORY_COLLECTIVES else ()
    return Knob(f"MPIR_CVAR_{operation.upper()}_INTRA_ALGORITHM", MPIR_ALGORITHMS[operation], ("collective",),
                "mpich", f"the {operation} algorithm inside a communicator (MPIR's)", together=companion,
                operations=(operation,))


OPEN_MPI_KNOBS = (
    Knob("OMPI_MCA_btl_vader_single_copy_mechanism", ("cma", "xpmem", "none"), ("host",), "ob1", _SINGLE_COPY),
    Knob("OMPI_MCA_btl_sm_single_copy_mechanism", ("cma", "xpmem", "none"), ("host",), "ob1", _SINGLE_COPY),
    Knob("OMPI_MCA_btl_vader_eager_limit", ("16384", "65536"), ("host",), "ob1", _EAGER),
    Knob("OMPI_MCA_btl_sm_eager_limit", ("16384", "65536"), ("host",), "ob1", _EAGER),
    Knob("OMPI_MCA_btl_smcuda_max_send_size", ("131072", "1048576"), ("device", "host-device"), "ob1",
         "the fragment size smcuda pipelines a message in"),
    Knob("OMPI_MCA_btl_smcuda_use_cuda_ipc_same_gpu", ("0", "1"), ("device",), "ob1",
         "whether two processes on one GPU exchange through CUDA IPC"),
    *(_tuned_algorithm(op) for op in TUNED_ALGORITHMS),
)

# UCX, under Open MPI's pml ucx and MPICH's ch4:ucx: the rendezvous protocol moves large and device messages
UCX_KNOBS = (
    Knob("UCX_RNDV_THRESH", ("8192", "1048576"), PATHS, "ucx",
         "the size from which a message goes by rendezvous (zero-copy) instead of eagerly"),
    Knob("UCX_RNDV_SCHEME", ("get_zcopy", "put_zcopy", "get_ppln", "put_ppln"), PATHS, "ucx",
         "how the rendezvous moves the data: the receiver reads it (get) or the sender writes it (put), directly "
         "(zcopy) or pipelined through staging buffers (ppln)"),
    Knob("UCX_RNDV_FRAG_MEM_TYPE", ("host", "cuda"), ("host-device", "inter-node"), "ucx",
         "where a pipelined rendezvous stages its fragments: host or device memory"),
    Knob("UCX_RNDV_FRAG_MEM_TYPES", ("host", "cuda"), ("host-device", "inter-node"), "ucx",
         "the memory types a pipelined rendezvous may stage its fragments in"),
    Knob("UCX_RNDV_FRAG_SIZE", ("host:4m,cuda:4m",), ("host-device", "inter-node"), "ucx",
         "the fragment size of a pipelined rendezvous, per memory type"),
    Knob("UCX_RNDV_PIPELINE_SEND_THRESH", ("65536",), ("host-device",), "ucx",
         "the size from which the sender pipelines a message between memory types"),
    Knob("UCX_RNDV_PIPELINE_SHM_ENABLE", ("y", "n"), ("device", "host-device"), "ucx",
         "the two-stage pipelined rendezvous between GPUs of one node"),
    Knob("UCX_PROTO_ENABLE", ("y", "n"), PATHS, "ucx", "UCX's newer protocol selection (v2) or the older one"),
    Knob("UCX_MAX_RNDV_RAILS", ("1", "2", "4"), ("inter-node",), "ucx",
         "how many network devices one rendezvous message is split over"),
)

MPICH_KNOBS = (
    Knob("MPIR_CVAR_CH4_IPC_GPU_P2P_THRESHOLD", ("0", "1048576"), ("device",), "mpich",
         "the size from which device buffers between processes go through GPU IPC"),
    Knob("MPIR_CVAR_CH4_IPC_XPMEM_P2P_THRESHOLD", ("65536",), ("host",), "mpich",
         "the size from which host buffers go through XPMEM single copy"),
    *(_mpir_algorithm(op) for op in MPIR_ALGORITHMS),
)

NCCL_KNOBS = (
    Knob("NCCL_PROTO", ("LL", "LL128", "Simple"), ("collective", "device"), "nccl",
         "the protocol: low latency (LL, LL128) or bandwidth (Simple)"),
    Knob("NCCL_ALGO", ("Ring", "Tree"), ("collective",), "nccl", "the collective algorithm"),
    Knob("NCCL_MIN_NCHANNELS", ("16", "32"), ("collective", "device"), "nccl",
         "the fewest channels (SMs working in parallel) an operation uses"),
    Knob("NCCL_BUFFSIZE", ("1048576", "16777216"), ("collective", "device"), "nccl",
         "the buffer each channel moves data through"),
    Knob("NCCL_P2P_LEVEL", ("NVL", "SYS"), ("device", "collective"), "nccl",
         "how far apart two GPUs may be for NCCL to use peer-to-peer between them"),
)


@dataclass(frozen=True)
class Listing:
    """The parameters a library (or a runtime below it) lists itself: the command, each variable's default, the
    values an enumerated one accepts; ``error`` when the command could not be run or said nothing."""
    tool: str
    defaults: dict[str, str] = field(default_factory=dict)
    choices: dict[str, set[str]] = field(default_factory=dict)
    error: str | None = None


def _listing(tool: str, argv: list[str], env: dict[str, str], parse) -> Listing:
    if not Path(argv[0]).exists():
        return Listing(tool, error=f"{argv[0]} not found")
    defaults, choices = parse(tool_output(argv, timeout=60, env=env))
    return Listing(tool, defaults, choices) if defaults else Listing(tool, error=f"{tool} listed no parameter")


_OMPI_VALUE = re.compile(r"^mca:\w+:\w+:param:(\w+):value:(.*)$", re.MULTILINE)
_OMPI_CHOICE = re.compile(r"^mca:\w+:\w+:param:(\w+):enumerator:value:(-?\d+):(.*)$", re.MULTILINE)


def parse_ompi_info(text: str) -> tuple[dict[str, str], dict[str, set[str]]]:
    """ompi_info --parsable: OMPI_MCA_<parameter> -> default, and -> the values an enumerated one accepts (by number
    and by name)."""
    defaults = {f"OMPI_MCA_{m.group(1)}": m.group(2) for m in _OMPI_VALUE.finditer(text)}
    choices: dict[str, set[str]] = {}
    for m in _OMPI_CHOICE.finditer(text):
        choices.setdefault(f"OMPI_MCA_{m.group(1)}", set()).update((m.group(2), m.group(3)))
    return defaults, choices


def parse_ucx_info(text: str) -> tuple[dict[str, str], dict[str, set[str]]]:
    """ucx_info -c -f: UCX_<NAME> -> default, and -> the values an enumerated one accepts (its "syntax:" line, one of
    [a|b|c] or <y|n>; a list of them is no single value)."""
    defaults: dict[str, str] = {}
    choices: dict[str, set[str]] = {}
    syntax = ""
    for line in text.splitlines():
        if line.startswith("# syntax:"):
            syntax = line.removeprefix("# syntax:").strip()
            continue
        m = re.match(r"^(UCX_\w+)=(.*)$", line)
        if not m:
            continue
        defaults[m.group(1)] = m.group(2)
        listed = re.fullmatch(r"\[([\w|-]+)\]|<([\w|-]+)>", syntax)
        if listed:
            choices[m.group(1)] = set((listed.group(1) or listed.group(2)).split("|"))
        syntax = ""
    return defaults, choices


def parse_mpivars(text: str) -> tuple[dict[str, str], dict[str, set[str]]]:
    """MPICH's mpivars: MPIR_CVAR_<NAME> -> default, and -> the algorithms an ..._ALGORITHM variable names in its
    description (mpich_algorithms)."""
    defaults, choices = {}, {}
    for line in text.splitlines():
        m = re.match(r"^\s*(MPIR_CVAR_\w+)\s*=(\S*)", line)
        if m:
            defaults[m.group(1)] = m.group(2)
            names = mpich_algorithms(line) if m.group(1).endswith("_ALGORITHM") else set()
            if names:
                choices[m.group(1)] = names
    return defaults, choices


def mpich_algorithms(description: str) -> set[str]:
    """The algorithm names an MPICH ..._ALGORITHM variable's description lists ("auto - Internal algorithm selection
    (...)nb   - Force nonblocking algorithmsmp   - Force smp algorithm..."). mpivars prints the entries run together,
    each name padded to one width: the first after the ")" gives the width, and each later name is that many
    characters before its "- Force" less its padding (the previous entry's text runs into it). Empty where the text
    is not of that form."""
    entries = list(re.finditer(r"([\w-]+)( +)- (?:Force|Internal)", description))
    first = next((e for e in entries if description[e.start() - 1:e.start()] == ")"), None)
    if first is None:
        return set()
    width = len(first.group(1)) + len(first.group(2))
    names = {"auto"} if any(e.group(1).endswith("auto") for e in entries) else set()
    for e in entries[entries.index(first):]:
        length = width - len(e.group(2))
        if not 0 < length <= len(e.group(1)):
            return set()
        names.add(e.group(1)[-length:])
    return names


def ompi_listing(bin_dir: Path, env: dict[str, str]) -> Listing:
    return _listing("ompi_info --param all all --level 9", [str(bin_dir / "ompi_info"), "--param", "all", "all",
                                                           "--level", "9", "--parsable"], env, parse_ompi_info)


def mpich_listing(bin_dir: Path, env: dict[str, str]) -> Listing:
    return _listing("mpivars", [str(bin_dir / "mpivars")], env, parse_mpivars)


def ucx_listing(bin_dir: Path, env: dict[str, str]) -> Listing:
    """UCX's own listing, by the ucx_info beside the library's launcher, else the first on the library's PATH."""
    dirs = [bin_dir, *(Path(p) for p in env.get("PATH", "").split(":") if p)]
    info = next((d / "ucx_info" for d in dirs if (d / "ucx_info").exists()), bin_dir / "ucx_info")
    return _listing("ucx_info -c -f", [str(info), "-c", "-f"], env, parse_ucx_info)


def openmpi_listings(bin_dir: Path, env: dict[str, str]) -> dict[str, Listing]:
    """Open MPI's parameters (ompi_info: its own, ob1's), and UCX's (ucx_info) for its pml ucx."""
    own = ompi_listing(bin_dir, env)
    return {"openmpi": own, "ob1": own, "ucx": ucx_listing(bin_dir, env)}


def mpich_listings(bin_dir: Path, env: dict[str, str]) -> dict[str, Listing]:
    """MPICH's control variables (mpivars), and UCX's (ucx_info) for its ch4:ucx device."""
    return {"mpich": mpich_listing(bin_dir, env), "ucx": ucx_listing(bin_dir, env)}


@dataclass(frozen=True)
class Offer:
    """A knob as `gmb tune` offers it for one library configuration: its default as the library lists it (None: not
    listed), the values tried (the catalogue's that the library accepts, its default left out: the defaults are
    measured anyway), or why it is not offered."""
    knob: Knob
    default: str | None
    values: tuple[str, ...]
    refused: str | None = None
    note: str = ""  # how far the library's listing vouches for it

    @property
    def offered(self) -> bool:
        return self.refused is None and bool(self.values)


def offer(knob: Knob, listings: dict[str, Listing]) -> Offer:
    """``knob`` checked against the listing of its layer (``listings``: layer -> Listing; a user's knob: any listing
    that names it)."""
    if knob.source != "catalogue":
        listing = next((lst for lst in listings.values() if knob.name in lst.defaults), None)
        if listing is None:
            return Offer(knob, None, knob.values, note="not listed by the library: tried as given")
        return _checked(knob, listing)
    listing = listings.get(knob.layer)
    if listing is None:
        return Offer(knob, None, knob.values, note="the library lists no parameters of its own: tried as given")
    if listing.error:
        return Offer(knob, None, knob.values, note=f"unverified: {listing.error}")
    if knob.name not in listing.defaults:
        return Offer(knob, None, (), refused=f"{listing.tool} does not list it (this build has no such parameter)")
    return _checked(knob, listing)


def _checked(knob: Knob, listing: Listing) -> Offer:
    """The knob's values that ``listing`` accepts, its default left out."""
    default = listing.defaults[knob.name]
    accepted = listing.choices.get(knob.name)
    values = tuple(v for v in knob.values if (accepted is None or v in accepted) and v.lower() != default.lower())
    if values:
        return Offer(knob, default, values, note=f"listed by {listing.tool}")
    if accepted and not any(v in accepted for v in knob.values):
        why = f"none of {', '.join(knob.values)} is accepted ({listing.tool}: {', '.join(sorted(accepted))})"
    else:
        why = f"its default {default} is the only value to try"
    return Offer(knob, default, (), refused=why)


def user_knobs(declared: dict[str, list[str]], source: str) -> tuple[Knob, ...]:
    """Knobs a user added (NAME -> values, from a libraries file or the command line): every path, every
    configuration."""
    return tuple(Knob(name, tuple(values), PATHS, "user", f"added by {source}", source=source)
                 for name, values in declared.items())


# an environment variable's name, as shells and launchers take it (fullmatch)
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_declared(declared, where: str, setting_prefixes: tuple[str, ...]) -> dict[str, list[str]]:
    """A table of knobs as a user writes it (NAME = ["value", ...]) checked: ValueError names what is wrong and what
    is accepted. A knob must be a setting the records keep (``setting_prefixes``): its values would be taken for one
    another otherwise."""
    if not isinstance(declared, dict):
        raise ValueError(f"{where}: knobs must be a table, e.g. knobs = {{ UCX_RNDV_THRESH = [\"8192\", \"65536\"] }}")
    out = {}
    for name, values in declared.items():
        if not ENV_NAME.fullmatch(name):
            raise ValueError(f"{where}: knobs: {name!r} is no environment variable name (letters, digits, _)")
        if not name.startswith(setting_prefixes):
            raise ValueError(f"{where}: knobs: {name} is not a setting the records keep, so its values could not be "
                             f"told apart (accepted: names starting with {', '.join(setting_prefixes)})")
        items = values if isinstance(values, list) else [values]
        if not items or not all(isinstance(v, (str, int)) and not isinstance(v, bool) and str(v) for v in items):
            raise ValueError(f"{where}: knobs.{name} must be a value or a list of values (strings or integers; "
                             f"got {values!r})")
        out[name] = list(dict.fromkeys(str(v) for v in items))
    return out
