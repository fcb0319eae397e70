# SPDX-License-Identifier: BSD-3-Clause
"""UCX's own configuration file: ``ucx.conf``, ``UCX_NAME=VALUE`` lines, ``#`` a comment. UCX (src/ucs/config/
parser.c, 1.13 on) reads a file of that name from its sysconf directory, from beside the library (../etc), from $HOME,
from $UCX_CONFIG_DIR and from the working directory, each later one overriding; the environment overrides them all.
From 1.17 a file may have sections that apply on some machines only; the lines before any section apply everywhere,
and those are what is written. Versions before 1.13 are refused: their reading was not checked."""

from __future__ import annotations

import re
from pathlib import Path

from ...machine.family_tools import tool_output

FILE_NAME = "ucx.conf"  # the name UCX looks for in $UCX_CONFIG_DIR
CONFIG_DIR = "UCX_CONFIG_DIR"
FIRST_SUPPORTED = (1, 13)


def version(bin_dir: Path, env: dict[str, str]) -> str:
    """UCX's version as its ucx_info says it (beside the launcher, else on the library's PATH); "" when unknown."""
    dirs = [bin_dir, *(Path(p) for p in env.get("PATH", "").split(":") if p)]
    info = next((d / "ucx_info" for d in dirs if (d / "ucx_info").exists()), None)
    m = re.search(r"Version\s+(\d+\.\d+(?:\.\d+)?)", tool_output([str(info), "-v"], env=env)) if info else None
    return m.group(1) if m else ""


def unsupported(found: str) -> str | None:
    """Why gmb writes no ucx.conf for this UCX (None: it does)."""
    parts = tuple(int(x) for x in found.split(".")[:2]) if re.fullmatch(r"\d+\.\d+(\.\d+)?", found) else None
    if parts and parts >= FIRST_SUPPORTED:
        return None
    return (f"UCX {found or '(version unknown: no ucx_info)'}: gmb writes the ucx.conf of UCX "
            f"{'.'.join(map(str, FIRST_SUPPORTED))} and newer only")
