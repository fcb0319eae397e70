"""The engine each library runs and what it says about itself: built (or found), asked for its description
(``gmb-bench list --format json``) in the library's environment, checked for the MPI library it loads, its doctor
asked for the library's CUDA awareness; on a resume, an engine that is gone built again."""

from __future__ import annotations

import sys
from pathlib import Path

from . import build, doctor, identity, mpilibs
from .defaults import add_nccl_library
from .errors import UsageError


def build_options(args) -> dict:
    """The engine build settings a command line asked for (`gmb build`, `gmb run`); CUDA: topology.engine_cuda (no
    NVIDIA driver and nothing asked: built without CUDA)."""
    from .topology import engine_cuda

    return dict(cuda=engine_cuda(getattr(args, "cuda", None), getattr(args, "cmake_arg", None),
                                 quiet=getattr(args, "no_build", False)),
                cuda_arch=getattr(args, "cuda_arch", None),
                cmake_args=getattr(args, "cmake_arg", None) or None, jobs=getattr(args, "jobs", None))


def engines_and_descriptions(libs, do_build: bool, build_options: dict | None = None):
    """Engines (built when ``do_build``) and their descriptions per library: (engines, descriptions, skipped). A
    library whose engine cannot be had, or loads another MPI library than the planned one in the library's
    environment, is skipped with the reason; an engine built before it described itself is an error
    (DescriptionError: rebuild it)."""
    engines, descriptions, skipped = {}, {}, []
    for lib in libs:
        if lib.cuda_aware is None and lib.transport == "mpi":
            lib.cuda_aware = mpilibs.cuda_aware_static(lib)
    built = build.build_all([lib for lib in libs if not lib.engine], log=lambda m: print(m, file=sys.stderr),
                            **(build_options or {})) if do_build else {}
    for lib in libs:
        try:
            path = built.get(lib.name) or build.engine_path(lib)
            if isinstance(path, build.BuildError):
                raise path
            if not Path(path).exists():
                raise build.BuildError(f"engine {path} does not exist (run `gmb build`)")
            descriptions[lib.name] = build.describe_engine(path, env=lib.process_env())
            wrong = identity.check_engine(lib, descriptions[lib.name].mpi)
            if wrong:
                raise build.BuildError(f"its engine {path} does not run this library: {wrong}")
            engines[lib.name] = str(Path(path).resolve())
        except build.BuildError as exc:
            skipped.append((lib.name, "all", str(exc)))
    return engines, descriptions, skipped


def doctor_libraries(libs, engines, descriptions, topo) -> list[dict]:
    """On a machine with GPUs, each MPI library with a CUDA engine gets its engine's doctor (a 2-rank launch that
    proves CUDA awareness and checks device buffers freed and allocated again), and the doctor again without each
    of the library's settings (or, when it is not aware, with its family's GPU settings): which settings its GPU
    support depends on (doctor.settings_that_matter), for the report. A library whose awareness is unknown (no
    declared answer, no ompi_info: e.g. MPICH) is planned as not aware unless this doctor says aware."""
    if not topo.gpus:
        return []
    found = []
    for lib in libs:
        if lib.transport != "mpi" or lib.name not in engines:
            continue
        if lib.name not in descriptions or not descriptions[lib.name].cuda:
            continue
        engine = Path(engines[lib.name])
        verdict = doctor.engine_doctor(lib, engine, timeout=60)
        settings = doctor.settings_that_matter(lib, engine, timeout=60, baseline=verdict)  # before cuda_aware is refined
        for f in settings["findings"]:
            print(f"gmb: {lib.name}: setting that matters: {f['setting']}: {f['effect']}", file=sys.stderr)
        found.append(settings)
        if lib.cuda_aware is None:
            aware = (verdict.get("gpu_awareness") or {}).get("verdict")
            if aware in ("aware", "not aware"):
                lib.cuda_aware = aware == "aware"
            summary = (verdict.get("gpu_awareness") or {}).get("summary") or verdict.get("error") or ""
            print(f"gmb: {lib.name}: CUDA awareness unknown; the engine's doctor says: {aware or 'no verdict'}"
                  + (f" ({summary})" if summary else "") + ("" if aware in ("aware", "not aware") else
                                                            " (planned as not aware)"), file=sys.stderr)
    return found


def with_nccl(libs, engines, descriptions, topo):
    """For a generated campaign: on a GPU machine, an NCCL library when an engine was built with NCCL."""
    lib, why = add_nccl_library(libs, descriptions, engines, topo)
    print(f"gmb: {why}", file=sys.stderr)
    return libs + [lib] if lib else libs


def resume_engines(planned: dict[str, str], libs: dict, used: set[str], no_build: bool, build_options: dict
                   ) -> dict[str, str]:
    """The engines a resumed campaign runs: the planned ones, and where one is gone (the campaign moved to a fresh
    node, the cache was cleared) the same library's engine built again from this source tree. Every record names
    the engine's source revision, so launches run before and after the rebuild stay told apart."""
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
        result = build.build_all([lib], log=lambda m: print(m, file=sys.stderr), **build_options)[lib.name]
        if isinstance(result, build.BuildError):
            raise UsageError(f"cannot resume: the engine of {', '.join(names)} ({path}) is gone and building it "
                             f"again failed: {result}")
        if not Path(result).exists():  # a declared engine (`engine = ...` in the config) is not built by gmb
            raise UsageError(f"cannot resume: the engine of {', '.join(names)} ({path}) is gone and gmb does not "
                             f"build it (declared in the library's config); restore it or fix `engine`")
        print(f"gmb: engine {path} of {', '.join(names)} was gone: built again at {result}", file=sys.stderr)
        for name in names:
            engines[name] = str(Path(result).resolve())
    return engines
