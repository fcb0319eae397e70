# SPDX-License-Identifier: BSD-3-Clause
"""Launchers registered by name. Each turns (library, ranks, hosts, binding, env, program argv) into an argv
and an environment for subprocess. Add one by subclassing Launcher and decorating it with @register."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from . import families

REGISTRY: dict[str, type["Launcher"]] = {}


def register(cls):
    REGISTRY[cls.name] = cls
    return cls


def get(name: str) -> "Launcher":
    if name not in REGISTRY:
        raise KeyError(f"unknown launcher {name!r} (known: {', '.join(sorted(REGISTRY))})")
    return REGISTRY[name]()


def hostfile_entries(text: str) -> list[tuple[str, int | None]]:
    """(host, slots) of each line of a hostfile, in order, in either launcher's form (Open MPI: "host slots=N";
    Hydra: "host:N"; # comments); slots None where the line gives none."""
    entries = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        host, _, count = words[0].partition(":")
        slots = next((w.partition("=")[2] for w in words[1:] if w.startswith(("slots=", "max_slots="))), count)
        entries.append((host, int(slots) if slots.isdigit() else None))
    return entries


_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_SLOT_WORDS = ("slots", "max_slots", "max-slots")
_COUNT = re.compile(r"[1-9][0-9]*")


def hostfile_problem(text: str) -> str | None:
    """Why a hostfile is none ("line N: what"), or None: a line is a host name (letters, digits, ``. _ -``) in Open
    MPI's form, followed by NAME=VALUE words (``slots=N``, ``max_slots=N``), or in Hydra's, ``host:N``; a slot
    count is a whole number >= 1; # starts a comment."""
    for n, line in enumerate(text.split("\n"), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        host, colon, count = words[0].partition(":")
        if not _HOST_NAME.fullmatch(host):
            return f"line {n}: {host!r} is not a host name"
        if colon and not _COUNT.fullmatch(count):
            return f"line {n}: {words[0]!r}: the slot count after ':' must be a whole number >= 1"
        for word in words[1:]:
            key, eq, value = word.partition("=")
            if not eq:
                return f"line {n}: {word!r} is no NAME=VALUE (a line is 'HOST slots=N' or 'HOST:N')"
            if key in _SLOT_WORDS and not _COUNT.fullmatch(value):
                return f"line {n}: {word!r}: {key} must be a whole number >= 1"
    return None


@dataclass
class LaunchSpec:
    ranks: int
    program: list[str]
    hostfile: str | None = None
    nodes: int | None = None
    ranks_per_node: int | None = None
    bind: str | None = None  # none | core | socket | numa
    env: dict[str, str] = field(default_factory=dict)


class Launcher:
    name = ""

    def hostfile(self, entries: list[tuple[str, int | None]]) -> str:
        """A hostfile of these (host, slots) in this launcher's form: one host per line (srun takes none)."""
        return "".join(f"{host}\n" for host, _ in entries)

    def argv(self, lib, spec: LaunchSpec) -> list[str]:
        raise NotImplementedError

    def environment(self, lib, spec: LaunchSpec, base: dict[str, str] | None = None) -> dict[str, str]:
        env = lib.process_env(base)  # env_unset / path_remove, then the library's env
        env.update(spec.env)
        return env

    def setting_arguments(self, settings: dict[str, str]) -> list[str]:
        """The launcher's own arguments that give its ranks these settings (a ready command line); none where the
        ranks take the launcher's environment as it is (srun): ``export`` them."""
        return []

    def remote_shell_arguments(self, agent: str) -> list[str]:
        """The launcher's own arguments that make it reach the other hosts through ``agent`` (an absolute path,
        called as ssh would be) instead of ssh; none where it does not start the ranks over a remote shell
        (srun)."""
        return []


@register
class OpenMpiRun(Launcher):
    """Open MPI's mpirun (ORTE in 4.x, PRRTE in 5.x)."""

    name = "mpirun"

    def hostfile(self, entries):
        return "".join(f"{host}" + (f" slots={slots}" if slots else "") + "\n" for host, slots in entries)

    def argv(self, lib, spec):
        exe = lib.launcher_path if lib.launcher_path and "srun" not in lib.launcher_path else "mpirun"
        a = [exe, "-np", str(spec.ranks)]
        if spec.hostfile:
            a += ["--hostfile", spec.hostfile]
        if spec.ranks_per_node:
            a += ["--map-by", f"ppr:{spec.ranks_per_node}:node"]
        if spec.bind and not launcher_binding(lib.launcher_args):
            a += ["--bind-to", spec.bind]
        if spec.ranks > (os.cpu_count() or 1) and not spec.hostfile:
            a.append("--oversubscribe")  # small containers: more ranks than cores is refused otherwise
        a += lib.launcher_args
        return a + spec.program

    def setting_arguments(self, settings):
        return [w for name, value in settings.items()
                for w in (["--mca", name.removeprefix("OMPI_MCA_"), value] if name.startswith("OMPI_MCA_")
                          else ["-x", f"{name}={value}"])]

    def remote_shell_arguments(self, agent):
        return ["--mca", "plm_rsh_agent", agent]  # ORTE's name (4.x); PRRTE (5.x) takes it for plm_ssh_agent

    def environment(self, lib, spec, base=None):
        env = super().environment(lib, spec, base)
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            # Open MPI refuses to run as root without both of these (works for 4.x and 5.x)
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        return env


@register
class HydraExec(Launcher):
    """MPICH / MVAPICH / Intel MPI mpiexec (Hydra)."""

    name = "mpiexec"

    def hostfile(self, entries):
        return "".join(f"{host}" + (f":{slots}" if slots else "") + "\n" for host, slots in entries)

    def argv(self, lib, spec):
        exe = lib.launcher_path or "mpiexec"
        a = [exe, "-n", str(spec.ranks)]
        if spec.hostfile:
            a += ["-f", spec.hostfile]
        if spec.ranks_per_node:
            a += ["-ppn", str(spec.ranks_per_node)]
        if spec.bind and not launcher_binding(lib.launcher_args):
            a += ["-bind-to", spec.bind]
        a += lib.launcher_args
        return a + spec.program

    def setting_arguments(self, settings):
        return [w for name, value in settings.items() for w in ("-genv", name, value)]

    def remote_shell_arguments(self, agent):
        return ["-launcher", "ssh", "-launcher-exec", agent]  # Hydra takes one executable here, no arguments


# the campaign's binding (mpirun's --bind-to words) as srun's --cpu-bind type: a NUMA domain is a "locality domain"
# (ldoms) to srun; "numas" is not a value it accepts
SRUN_CPU_BIND = {"none": "none", "core": "cores", "socket": "sockets", "numa": "ldoms", "thread": "threads",
                 "hwthread": "threads"}


@register
class SlurmRun(Launcher):
    """Slurm's srun (inside an allocation). GPUs are not isolated per task (that would break CUDA IPC):
    the engine selects its GPU from the local rank."""

    name = "srun"

    def argv(self, lib, spec):
        a = ["srun", "-n", str(spec.ranks)]
        if spec.nodes:
            a += ["-N", str(spec.nodes)]
        if spec.ranks_per_node:
            a += [f"--ntasks-per-node={spec.ranks_per_node}"]
        if spec.bind and not launcher_binding(lib.launcher_args):
            a += [f"--cpu-bind={SRUN_CPU_BIND.get(spec.bind, spec.bind)}"]
        extra = _non_mca(lib.launcher_args)
        # srun's PMI plugin of the family (families.py), unless the library's launcher_args give --mpi=... (e.g. a
        # cluster whose MPICH was built with PMIx). Tested with Debian 12's slurm-wlm 22.05: Open MPI 4.1 with pmix,
        # MPICH 4.0 with pmi2. Cray MPICH: the site's MpiDefault (cray_shasta).
        plugin = families.srun_mpi(lib.family)
        if not any(x == "--mpi" or x.startswith("--mpi=") for x in extra) and plugin:
            a.append(f"--mpi={plugin}")
        a += extra
        return a + spec.program

    def environment(self, lib, spec, base=None):
        env = super().environment(lib, spec, base)
        env.update(mca_env(lib.launcher_args))  # mpirun's --mca k v becomes OMPI_MCA_k=v under srun
        return env


# the launchers' options that bind ranks to CPUs: the binding follows (or "=binding")
BIND_FLAGS = ("--bind-to", "-bind-to", "--cpu-bind", "--cpu_bind")


def launcher_binding(args: list[str]) -> str | None:
    """The binding that a library's launcher arguments give (mpirun's and mpiexec's --bind-to X, srun's
    --cpu-bind=X), or None. A launcher given two bindings refuses to start (Open MPI: "listed more than once")."""
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if flag in BIND_FLAGS:
            return value if eq else (args[i + 1] if i + 1 < len(args) else "")
    return None


def binding_conflict(bind: str | None, lib) -> str | None:
    """Why a block's ``bind`` cannot be given to a launch of this library, or None: its launcher arguments bind
    otherwise. The same binding from both is given once."""
    given = launcher_binding(lib.launcher_args)
    if not bind or given is None or given in (bind, SRUN_CPU_BIND.get(bind)):
        return None
    return (f"the block binds ranks with bind = \"{bind}\" but {lib.name}'s launcher_args bind them otherwise "
            f"({given!r}): a launch takes one binding; drop bind from the block or --bind-to from the library, or "
            f"declare a library configuration without it")


# mpirun's options that set an MCA parameter: NAME VALUE follow
MCA_FLAGS = ("--mca", "-mca", "--gmca", "-gmca")


def mca_env(args: list[str]) -> dict[str, str]:
    """The MCA parameters that launcher arguments set (``--mca NAME VALUE``), as OMPI_MCA_NAME -> VALUE."""
    out, i = {}, 0
    while i < len(args):
        if args[i] in MCA_FLAGS and i + 2 < len(args):
            out[f"OMPI_MCA_{args[i + 1]}"] = args[i + 2]
            i += 3
        else:
            i += 1
    return out


def _non_mca(args: list[str]) -> list[str]:
    out, i = [], 0
    while i < len(args):
        if args[i] in MCA_FLAGS:
            i += 3
        else:
            out.append(args[i])
            i += 1
    return out
