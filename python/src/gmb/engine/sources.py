# SPDX-License-Identifier: BSD-3-Clause
"""The engine sources: where they are (``$GMB_SOURCE``, else the checkout this harness runs from), what to say where
there are none, and the hash that tells a build made from them apart."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..machine.mpilibs import MpiLibrary

SOURCE_GLOBS = ("CMakeLists.txt", "cmake/**/*", "src/**/*", "include/**/*", "apps/**/*", "reference/**/*")


def _is_source_tree(path: Path) -> bool:
    return (path / "CMakeLists.txt").is_file() and (path / "include" / "gmb").is_dir() and (path / "src").is_dir()


def repo_root() -> Path | None:
    """Where the engine sources are meant to be: ``$GMB_SOURCE``, else the checkout this harness runs from (none for
    a harness installed with pip). ``source_root`` says whether sources are really there."""
    env = os.environ.get("GMB_SOURCE")
    if env:
        return Path(env)
    for parent in Path(__file__).resolve().parents:
        if _is_source_tree(parent):
            return parent
    return None


def source_root() -> Path | None:
    """The engine source tree engines are built from: ``$GMB_SOURCE`` or this harness's checkout, when it holds
    the sources (a CMakeLists.txt); None otherwise."""
    root = repo_root()
    return root if root is not None and (root / "CMakeLists.txt").is_file() else None


def no_sources() -> str:
    """Why there are no engine sources, in words."""
    env = os.environ.get("GMB_SOURCE")
    if env:
        return f"GMB_SOURCE={env} holds no engine sources (no CMakeLists.txt there)"
    return "no engine sources: this gmb does not run from a checkout and GMB_SOURCE is not set"


def no_engine_advice(lib: MpiLibrary | None = None) -> str:
    """The three ways to give a library an engine when it declares none (gmb build, gmb run)."""
    built_for = f" built against {lib.family} {lib.version} from {lib.prefix}" if lib is not None else ""
    return (f"give it an engine: set GMB_ENGINE to a gmb-bench{built_for}; or put such a gmb-bench on PATH "
            f"(cmake --install, a module or Spack load); or set GMB_SOURCE to the engine sources (a gmb checkout) "
            f"so that gmb builds one")


def source_hash(root: Path) -> str:
    """A hash of the engine sources under ``root`` (SOURCE_GLOBS: names and contents), kept in a build's stamp."""
    h = hashlib.sha256()
    files = sorted({p for g in SOURCE_GLOBS for p in root.glob(g)
                    if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"})
    for p in files:
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]
