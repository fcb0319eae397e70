# SPDX-License-Identifier: BSD-3-Clause
"""The procedures a family's entry in the family table (families.py) names: how its own tools are asked what was
built in (Open MPI's ompi_info), and how a GPU configuration's launcher arguments are fitted to that."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path


def tool_output(argv: list[str], timeout: float = 15, env: dict[str, str] | None = None) -> str:
    """What a program says (standard output, then standard error); "" when it cannot be run."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
        return (p.stdout or "") + (p.stderr or "")
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _ompi_info(bin_dir: Path, args: list[str], env: dict[str, str]) -> str:
    info = bin_dir / "ompi_info"
    return tool_output([str(info), *args], timeout=30, env=env) if info.exists() else ""


def ompi_info_cuda_support(bin_dir: Path, env: dict[str, str]) -> bool | None:
    """Open MPI's static CUDA awareness: ompi_info's mpi_built_with_cuda_support (None when it cannot be asked)."""
    m = re.search(r"mpi_built_with_cuda_support:value:(true|false)", _ompi_info(bin_dir, ["--parsable", "--all"], env))
    return (m.group(1) == "true") if m else None


def ompi_info_components(bin_dir: Path, env: dict[str, str]) -> dict[str, set[str]]:
    """Open MPI's MCA components by framework (``{"pml": {"ob1", "ucx", ...}, "btl": {...}}``); {} when ompi_info
    cannot be asked."""
    found: dict[str, set[str]] = {}
    for m in re.finditer(r"^mca:(\w+):(\w+):", _ompi_info(bin_dir, ["--parsable"], env), re.MULTILINE):
        found.setdefault(m.group(1), set()).add(m.group(2))
    return found


def btls_present(launcher_args: list[str], components: dict[str, set[str]]) -> list[str]:
    """``--mca btl LIST`` of a pml ob1 configuration made of the BTLs this build has (Open MPI refuses to start when
    one named is missing): smcuda (device buffers between the processes of a node; CUDA builds only), else the
    shared-memory BTL (sm, called vader before Open MPI 5), then self, then tcp for other nodes."""
    btls = components.get("btl", set())
    if not btls:
        return list(launcher_args)
    local = next((b for b in ("smcuda", "sm", "vader") if b in btls), None)
    wanted = ",".join(b for b in (local, "self", "tcp" if "tcp" in btls else None) if b)
    args = list(launcher_args)
    for i in range(len(args) - 2):
        if args[i] == "--mca" and args[i + 1] == "btl":
            args[i + 2] = wanted
    return args


def openmpi_layers(settings: dict[str, str], version_text: str) -> set[str]:
    """What an Open MPI configuration runs on: its collectives, and the pmls its selection allows (OMPI_MCA_pml:
    mpirun's --mca pml, the environment, or ompi_info's value from the library's parameter files, e.g. Debian's "^ucx");
    both where nothing selects (the library picks one at start)."""
    selection = settings.get("OMPI_MCA_pml") or ""
    named = {name.strip() for name in selection.lstrip("^").split(",") if name.strip()}
    pmls = {"ob1", "ucx"}
    return {"openmpi"} | (pmls - named if selection.startswith("^") else pmls & named if named else pmls)


def mpich_layers(settings: dict[str, str], version_text: str) -> set[str]:
    """MPICH's own control variables, and UCX's where its device is ch4:ucx (its version text says the device)."""
    return {"mpich"} | ({"ucx"} if "ch4:ucx" in version_text.lower() else set())
