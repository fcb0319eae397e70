# SPDX-License-Identifier: BSD-3-Clause
"""What the native files need to know of a configuration's library, each asked of the library itself: its family and
version, the machine its records ran on and the library file they loaded (the store's contexts), Open MPI's
algorithm numbers and parameter files (ompi_info), MPICH's own selection tree (its library file), UCX's version
(ucx_info)."""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path

from ...machine.family_tools import tool_output
from ...results.store import StoreError
from . import mpich, openmpi, ucx
from .confirmed import Confirmed


class Library:
    """One configuration's library, as its native files name and read it."""

    def __init__(self, conf, contexts: list[dict]):
        lib = conf.library
        self.configuration = conf.name
        self.family = lib.family
        self.version = str(lib.version or "")
        self.nccl = lib.transport == "nccl"
        self.bin_dir = Path(lib.launcher_path).parent
        self.env = lib.process_env()
        ranks = next((c.get("ranks") or [] for c in contexts if c.get("ranks")), [])
        self.machine = next((r["host"] for r in ranks if r.get("host")), "unknown machine")
        self.library_file = next((r["mpi_library"] for r in ranks if r.get("mpi_library")), None)

    @property
    def label(self) -> str:
        return f"{self.family} {self.version} ({self.configuration})"

    def algorithm_of(self, c: Confirmed) -> tuple[str, str] | None:
        """The collective and algorithm a confirmed value chooses in this library's selection (None: none)."""
        if self.nccl:
            return None
        chooser = {"openmpi": openmpi.algorithm_of, "mpich": mpich.algorithm_of}.get(self.family)
        return chooser(c) if chooser else None

    def is_selection_setting(self, c: Confirmed, name: str) -> bool:
        """Whether ``name`` of ``c``'s settings is its algorithm choice or the switch that choice runs with (Open MPI's
        dynamic rules, MPICH's hand-over to MPIR): the selection file and its loading carry those."""
        if not self.algorithm_of(c):
            return False
        if self.family == "openmpi":
            return name == openmpi.DYNAMIC_RULES or bool(openmpi.ALGORITHM.fullmatch(name))
        return bool(mpich.ALGORITHM.fullmatch(name)) or name.endswith("_POSIX_INTRA_ALGORITHM")

    def selection_refused(self) -> str | None:
        """Why this library gets no selection file (None: it does)."""
        if self.family == "openmpi":
            return openmpi.unsupported(self.version)
        if self.family == "mpich":
            return mpich.unsupported(self.version)
        return f"gmb writes no selection file for {self.family}"

    @cached_property
    def _ompi_info(self) -> str:
        info = self.bin_dir / "ompi_info"
        return tool_output([str(info), "--param", "all", "all", "--level", "9", "--parsable"], timeout=60,
                           env=self.env) if info.exists() else ""

    def algorithm_numbers(self) -> dict[str, dict[str, int]]:
        return openmpi.parse_numbers(self._ompi_info)

    def param_files_default(self) -> str | None:
        """mca_base_param_files as ompi_info lists its default (None: not listed)."""
        prefix = "mca:mca:base:param:mca_base_param_files:value:"
        return next((line[len(prefix):] for line in self._ompi_info.splitlines() if line.startswith(prefix)), None)

    def generic_selection(self) -> dict | None:
        return mpich.generic_selection(Path(self.library_file)) if self.library_file else None

    def known_leaves(self) -> set[str]:
        return mpich.known_leaves(Path(self.library_file)) if self.library_file else set()

    def ucx_version(self) -> str:
        return ucx.version(self.bin_dir, self.env)


def library_of(conf, st) -> Library:
    """The configuration's library, with the contexts its records ran in (the store ``st``)."""
    contexts = []
    try:
        rows = st.contexts()
    except (StoreError, OSError):  # a store that cannot be read names no machine: "unknown machine"
        rows = []
    for row in rows:
        if row.get("library") == conf.name:
            try:
                contexts.append(json.loads(row["json"]))
            except (TypeError, ValueError):
                continue
    return Library(conf, contexts)
