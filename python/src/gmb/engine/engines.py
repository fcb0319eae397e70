# SPDX-License-Identifier: BSD-3-Clause
"""The engine each library runs and what it says about itself: found or built (``choose``, the one place that
decides which engine a library uses), asked for its description (``gmb-bench list --format json``) in the
library's environment, checked for the MPI library it loads, its doctor asked for the library's CUDA awareness; on
a resume, an engine that is gone found or built again.

Which engine a library uses, first that applies:

1. the library's declared ``engine = "/path/to/gmb-bench"`` (its configuration);
2. ``$GMB_ENGINE``, a path to a gmb-bench;
3. a ``gmb-bench`` on PATH (``cmake --install``, a module, a Spack load), every one in PATH's order;
4. the engine built from the sources (``$GMB_SOURCE``, else the checkout this harness runs from): the build cache,
   built or rebuilt when needed (not with ``--no-build``).

An installed engine (2, 3) is taken for a library only when it was built for it: its description, run in the
library's environment, names the MPI library it was linked against (from its build info), which must lie in the
library's directories, and what it loads there must be the library's (``identity.installed_engine_mismatch``).
One built for another library is passed over, with the reason. Without sources and without an installed engine
for a library, the library has no engine: the error names the three ways to give it one.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import build, build_cache, sources
from ..machine import identity
from .description import DescriptionError, EngineDescription
from ..errors import UsageError
from ..machine.topology import engine_cuda
from ..options import BuildOptions

ENGINE_NAME = "gmb-bench"


def say(message: str) -> None:
    print(message, file=sys.stderr)


@dataclass
class EngineChoice:
    """The engine a library uses (``path``; None with ``error`` when it has none), how it was found (``how``:
    "declared", "GMB_ENGINE", "PATH", "built" from the sources, "cache": built before, with --no-build) and why,
    the installed engines passed over with the reason (``refused``) and, for an installed one, its description."""
    path: Path | None
    how: str
    why: str
    error: build.BuildError | None = None
    description: EngineDescription | None = None
    refused: list[str] = field(default_factory=list)

    def lines(self, name: str) -> list[str]:
        """What gmb build / gmb run say about it: the engine and why, after the installed engines passed over (none
        when it has no engine: its error names those)."""
        if self.error is not None or self.path is None:
            return []
        return [f"{name}: not using {r}" for r in self.refused] + [f"{name}: engine {self.path} ({self.why})"]


def installed_engines() -> list[tuple[str, Path]]:
    """The installed engines to consider, in order: ``$GMB_ENGINE``, then every ``gmb-bench`` on PATH (each file
    once)."""
    out: list[tuple[str, Path]] = []
    seen: set[str] = set()
    env = os.environ.get("GMB_ENGINE")
    if env:
        out.append(("GMB_ENGINE", Path(env)))
        seen.add(os.path.realpath(env))
    for d in os.environ.get("PATH", "").split(os.pathsep):
        exe = Path(d or ".") / ENGINE_NAME
        if d and exe.is_file() and os.access(exe, os.X_OK) and os.path.realpath(exe) not in seen:
            seen.add(os.path.realpath(exe))
            out.append(("PATH", exe))
    return out


def _installed_for(lib, candidates, refused: list[str]) -> EngineChoice | None:
    """The first installed engine built for ``lib``; the others tried are added to ``refused`` with the reason."""
    for how, path in candidates:
        where = f"GMB_ENGINE={path}" if how == "GMB_ENGINE" else f"{path} (on PATH)"
        if not path.is_file() or not os.access(path, os.X_OK):
            refused.append(f"{where}: {'not an executable file' if path.exists() else 'no such file'}")
            continue
        try:
            desc = build.describe_engine(path, env=lib.process_env())
        except (build.BuildError, DescriptionError) as exc:
            refused.append(f"{where}: {exc}")
            continue
        wrong = identity.installed_engine_mismatch(lib, desc.mpi)
        if wrong:
            refused.append(f"{where}: not built for this library: {wrong}")
            continue
        linked = (desc.mpi.get("library_object") or {}).get("linked") or "its MPI library"
        return EngineChoice(path, how, f"{'GMB_ENGINE' if how == 'GMB_ENGINE' else 'found on PATH'}, installed, "
                                       f"built against {linked}: this library's", description=desc, refused=refused)
    return None


def choose(libs, do_build: bool, build_options: dict | None = None, force: bool = False, log=say
           ) -> dict[str, EngineChoice]:
    """Which engine each library uses (the order in this module's description), built from the sources when
    ``do_build`` and it comes to that; library name -> EngineChoice. Libraries that share an installation share
    one build (build.build_all)."""
    out: dict[str, EngineChoice] = {}
    candidates = installed_engines()
    root = sources.source_root()
    to_build = []
    for lib in libs:
        if lib.engine:
            out[lib.name] = EngineChoice(Path(lib.engine), "declared", "declared in its configuration: engine = ...")
            continue
        refused: list[str] = []
        found = _installed_for(lib, candidates, refused)
        if found is not None:
            out[lib.name] = found
        elif root is None:
            tried = f" (passed over: {'; '.join(refused)})" if refused else ""
            out[lib.name] = EngineChoice(None, "", "", refused=refused, error=build.BuildError(
                f"{lib.name}: no engine: none declared, no installed gmb-bench built for it{tried}, and "
                f"{sources.no_sources()}; {sources.no_engine_advice(lib)}"))
        elif do_build:
            to_build.append(lib)
            out[lib.name] = EngineChoice(None, "built", f"built from the sources in {root}", refused=refused)
        else:
            path = build_cache.engine_path(lib, root)
            out[lib.name] = EngineChoice(path, "cache", f"built from the sources in {root} before (the build cache)",
                                         refused=refused)
            if not path.exists():
                out[lib.name].error = build.BuildError(f"engine {path} does not exist (run `gmb build`)")
    if to_build:
        results = build.build_all(to_build, root=root, force=force, log=log, **(build_options or {}))
        for lib in to_build:
            result = results[lib.name]
            if isinstance(result, build.BuildError):
                out[lib.name].error = result
            else:
                out[lib.name].path = Path(result)
    return out


def build_options(opts: BuildOptions) -> dict:
    """The engine build settings a command asked for (`gmb build`, `gmb run`); CUDA: topology.engine_cuda (no NVIDIA
    driver and nothing asked: built without CUDA)."""
    return dict(cuda=engine_cuda(opts.cuda, opts.cmake_arg, quiet=opts.no_build), cuda_arch=opts.cuda_arch,
                cmake_args=list(opts.cmake_arg) or None, jobs=opts.jobs)


def resume_engines(planned: dict[str, str], libs: dict, used: set[str], no_build: bool, build_options: dict
                   ) -> dict[str, str]:
    """The engines a resumed campaign runs: the planned ones, and where one is gone (the campaign moved to a fresh
    node, the cache was cleared) the same library's engine found again as a new run finds it (``choose``: an
    installed one, else built again from the source tree). Every record names the engine's source revision, so
    launches run before and after the rebuild stay told apart."""
    engines = dict(planned)
    gone = sorted({planned[name] for name in used if name in planned and not Path(planned[name]).exists()})
    if not gone:
        return engines
    if no_build:
        raise UsageError(f"cannot resume with --no-build: engine(s) {', '.join(gone)} no longer exist; "
                         f"leave out --no-build to build them again")
    for path in gone:
        names = sorted(name for name in used if planned.get(name) == path)
        lib = libs[names[0]]
        choice = choose([lib], do_build=True, build_options=build_options)[lib.name]
        if choice.error is not None:
            raise UsageError(f"cannot resume: the engine of {', '.join(names)} ({path}) is gone and building it "
                             f"again failed: {choice.error}")
        result = choice.path
        if not Path(result).exists():  # a declared engine (`engine = ...` in the config) is not built by gmb
            raise UsageError(f"cannot resume: the engine of {', '.join(names)} ({path}) is gone and gmb does not "
                             f"build it (declared in the library's config); restore it or fix `engine`")
        print(f"gmb: engine {path} of {', '.join(names)} was gone: "
              f"{'built again at' if choice.how == 'built' else 'now'} {result} ({choice.why})", file=sys.stderr)
        for name in names:
            engines[name] = str(Path(result).resolve())
    return engines
