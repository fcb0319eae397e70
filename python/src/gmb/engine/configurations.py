# SPDX-License-Identifier: BSD-3-Clause
"""The library configurations a session runs: each library with its engine, that engine's description and its
launcher, made once (``configurations``) and shared by run, plan, resume and doctor; `gmb build` and `gmb slurm` stop
at the engine each library uses (``engine_choices``). A generated campaign on a GPU machine adds an NCCL library
(``with_nccl``): a new list, nothing changed in place."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

from . import build
from . import engines as engines_mod
from ..machine import identity
from ..machine import launchers
from ..machine import mpilibs
from ..machine.topology import Topology
from .description import DescriptionError, EngineDescription


@dataclass(frozen=True)
class Configuration:
    """A library as a session runs it. ``engine`` (resolved path) and ``description`` are None when it has no engine
    (``no_engine`` says why): it is planned as skipped. ``chosen`` is how its engine was found or built (the path
    and why, or the error; None when the engine comes from a plan: a resume)."""
    library: mpilibs.MpiLibrary
    engine: str | None = None
    description: EngineDescription | None = None
    no_engine: str | None = None
    chosen: engines_mod.EngineChoice | None = None

    @property
    def name(self) -> str:
        return self.library.name

    @property
    def launcher(self) -> launchers.Launcher:
        return launchers.get(self.library.launcher)


def engine_choices(libs: list[mpilibs.MpiLibrary], do_build: bool, build_options: dict | None = None,
                   force: bool = False, log=engines_mod.say) -> dict[str, engines_mod.EngineChoice]:
    """Library name -> the engine it uses, found or built (engines.choose; ``log`` gets the builds' progress), not
    yet asked for its description: where `gmb build` and `gmb slurm` stop, and where ``configurations`` starts."""
    return engines_mod.choose(libs, do_build, build_options, force=force, log=log)


def configurations(libs: list[mpilibs.MpiLibrary], do_build: bool, build_options: dict | None = None,
                   diagnosis: bool = False) -> list[Configuration]:
    """Each library with its engine (built when ``do_build``) and its description. A library whose engine cannot be
    had, or loads another MPI library than the planned one in the library's environment, has none (and the
    reason); an engine built before it described itself is an error (DescriptionError: rebuild it). A library whose
    CUDA awareness is not declared gets ompi_info's static answer. For a ``diagnosis`` (`gmb doctor`) nothing is
    said, and an engine that cannot describe itself is one more reason for a library to have none."""
    libs = [replace(lib, cuda_aware=mpilibs.cuda_aware_static(lib))
            if lib.cuda_aware is None and lib.transport == "mpi" else lib for lib in libs]
    chosen = engine_choices(libs, do_build, build_options)
    out = []
    for lib in libs:
        choice = chosen[lib.name]
        for line in choice.lines(lib.name) if choice.how != "declared" and not diagnosis else ():
            print(f"gmb: {line}", file=sys.stderr)  # a declared one goes without saying
        try:
            if choice.error is not None:
                raise choice.error
            path = choice.path
            if not Path(path).exists() and choice.how == "declared":  # gmb build builds undeclared engines only
                raise build.BuildError(f"its declared engine {path} does not exist (engine = ... in its libraries "
                                       f"file): correct that path, or remove the engine line for gmb to build one "
                                       f"(gmb build --library {lib.name})")
            if not Path(path).exists():
                raise build.BuildError(f"engine {path} does not exist (run `gmb build`)")
            description = choice.description or build.describe_engine(path, env=lib.process_env())
            wrong = identity.check_engine(lib, description.mpi)
            if wrong:
                raise build.BuildError(f"its engine {path} does not run this library: {wrong}")
            out.append(Configuration(lib, str(Path(path).resolve()), description, chosen=choice))
        except (build.BuildError, DescriptionError) as exc:
            if isinstance(exc, DescriptionError) and not diagnosis:
                raise  # run and plan refuse an engine built before it described itself: rebuild it
            out.append(Configuration(lib, no_engine=str(exc), chosen=choice))
    return out


def resumed(libs: dict[str, mpilibs.MpiLibrary], engines: dict[str, str]) -> list[Configuration]:
    """The configurations of a resume: each planned library with the engine its plan ran (engines: library name ->
    path, checked by engines.resume_engines), not described again (the plan's launch lines are already made)."""
    return [Configuration(lib, engines.get(name)) for name, lib in libs.items()]


def runnable(confs: list[Configuration]) -> list[Configuration]:
    return [c for c in confs if c.engine is not None]


def libraries(confs: list[Configuration]) -> list[mpilibs.MpiLibrary]:
    return [c.library for c in confs]


def engines(confs: list[Configuration]) -> dict[str, str]:
    """Library name -> engine path, for the libraries that have one."""
    return {c.name: c.engine for c in runnable(confs)}


def descriptions(confs: list[Configuration]) -> dict[str, EngineDescription]:
    """Library name -> its engine's description, for the libraries that have one."""
    return {c.name: c.description for c in runnable(confs)}


def skipped(confs: list[Configuration]) -> list[tuple[str, str, str]]:
    """(library, "all", why) for each library without an engine, as the plan lists skipped points."""
    return [(c.name, "all", c.no_engine) for c in confs if c.engine is None]


def with_nccl(confs: list[Configuration], topo: Topology) -> list[Configuration]:
    """For a generated campaign: ``confs`` and, when GPUs are present, no NCCL library is declared and the engine of
    some MPI library was built with NCCL, one more named "nccl". Its ``via`` (launcher and engine that bootstrap
    NCCL) is the first such library that is CUDA-aware, with the ob1 profile before others (Open MPI's own
    transports: the most robust bootstrap), else the first with the ob1 profile, else the first. What was decided
    is said."""
    added, why = nccl_configuration(confs, topo)
    print(f"gmb: {why}", file=sys.stderr)
    return [*confs, added] if added else list(confs)


def nccl_configuration(confs: list[Configuration], topo: Topology) -> tuple[Configuration | None, str]:
    """The NCCL configuration ``with_nccl`` adds (None when it adds none), and what was decided."""
    if any(c.library.transport == "nccl" for c in confs):
        return None, "an NCCL library is declared"
    if not topo.gpus:
        return None, "no GPU: no NCCL library"
    with_nccl_engine = [c for c in runnable(confs) if c.library.transport == "mpi" and c.description.nccl]
    if not with_nccl_engine:
        return None, "no engine was built with NCCL (features.nccl): no NCCL library"
    # a CUDA-aware library first: NCCL needs none, but its launches then run the library a GPU node is measured with
    via = min(with_nccl_engine, key=lambda c: (c.library.cuda_aware is not True, c.library.profile != "openmpi-ob1"))
    name = "nccl" if "nccl" not in {c.name for c in confs} else f"nccl-via-{via.name}"
    added = replace(via, library=mpilibs.nccl_library(via.library, name))
    version = via.description.nccl_version
    return added, (f"NCCL library {name!r} added, via {via.name!r} (its engine was built with NCCL"
                   f"{' ' + version if version else ''}; launches use its launcher and environment)")


def with_tuned(confs: list[Configuration], tuned: list[dict], source: str) -> list[Configuration]:
    """``confs`` and, for each configuration a `gmb tune` recommended (``tuned``: its answer's entries {"name",
    "base", "settings", "paths"}), its base configuration with those settings on top under the tuned name: same
    engine, same launcher. A base this session does not have is an error (ValueError) naming what it has."""
    by_name = {c.name: c for c in confs}
    out = list(confs)
    for t in tuned:
        base = by_name.get(t["base"])
        if base is None:
            raise ValueError(f"{source}: tuned configuration {t['name']} is of {t['base']}, which this session does "
                             f"not have (it has: {', '.join(by_name) or 'none'}; --library, --config)")
        if t["name"] in by_name:
            raise ValueError(f"{source}: tuned configuration {t['name']}: a configuration of that name exists")
        lib = replace(base.library, name=t["name"], env={**base.library.env, **t["settings"]}, source="tuned")
        out.append(replace(base, library=lib))
    return out
