# SPDX-License-Identifier: BSD-3-Clause
"""The MPI libraries a command works with: those declared in libraries files (``load_config``) and those found on
this machine (detect.py) whose installation was not declared (``all_libraries``)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import replace
from pathlib import Path

from . import families, identity
from .knobs import check_declared
from .detect import compilers, detect, identify
from .launchers import REGISTRY
from .mpilibs import PROFILES, TRANSPORTS, ConfigError, MpiLibrary, apply_profile, nccl_library
from ..tomlcheck import array_of_tables, toml_value

LIBRARY_KEYS = {"name", "prefix", "profile", "family", "version", "launcher", "launcher_path", "launcher_args", "env",
                "cxx", "cc", "engine", "cuda_aware", "transport", "via", "env_unset", "path_remove", "cmake_args", "knobs"}
# keys an NCCL transport entry may set itself; everything else comes from its ``via`` library
NCCL_KEYS = {"name", "transport", "via", "env", "launcher_args", "knobs"}


def _str_list(entry: dict, key: str, where: str) -> list[str]:
    v = entry.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{where}: {key} must be a list of strings (got {v!r})")
    return list(v)


def _str_table(entry: dict, key: str, where: str) -> dict[str, str]:
    """env = { NAME = "value" }: a table of strings (numbers and booleans are taken as their text)."""
    v = entry.get(key, {})
    if not isinstance(v, dict):
        raise ConfigError(f"{where}: {key} must be a table, e.g. {key} = {{ UCX_TLS = \"sm,self\" }} (got {v!r})")
    bad = [k for k, x in v.items() if not isinstance(x, (str, int, float)) or isinstance(x, bool)]
    if bad:
        raise ConfigError(f"{where}: {key}.{bad[0]} must be a string (got {v[bad[0]]!r})")
    return {k: str(x) for k, x in v.items()}


STRING_KEYS = ("name", "prefix", "profile", "family", "version", "launcher", "launcher_path", "cxx", "cc", "engine",
               "transport", "via")


def _check_entry_types(entry: dict, where: str) -> None:
    for key in STRING_KEYS:
        if key in entry and (not isinstance(entry[key], str) or not entry[key]):
            raise ConfigError(f"{where}: {key} must be a non-empty string (got {entry[key]!r})")
    if "launcher" in entry:
        if entry["launcher"] not in REGISTRY:
            raise ConfigError(f"{where}: unknown launcher {entry['launcher']!r} "
                              f"(accepted: {', '.join(sorted(REGISTRY))})")
    if "profile" in entry and entry["profile"] not in PROFILES:
        raise ConfigError(f"{where}: unknown profile {entry['profile']!r} (known: {', '.join(PROFILES)})")


def load_config(path: str | Path, known: list[MpiLibrary] = ()) -> list[MpiLibrary]:
    """Declared libraries:

        [[library]]
        name = "ompi-ucx"
        prefix = "/opt/cuda-mpi"        # bin/mpirun, bin/mpicxx below it
        profile = "openmpi-ucx"         # optional built-in profile, fields below override/extend it
        launcher = "mpirun"             # registered launcher name
        launcher_path = "/opt/cuda-mpi/bin/mpirun"   # optional
        launcher_args = ["--bind-to", "none"]
        env = { UCX_TLS = "cuda_ipc,cuda_copy,sm,self" }
        env_unset = ["UCX_TLS"]         # variables removed from this library's processes
        path_remove = ["/opt/cuda-mpi"] # PATH / LD_LIBRARY_PATH entries under these prefixes removed
        cuda_aware = false              # overrides ompi_info's static answer
        cmake_args = ["-DCMAKE_CUDA_ARCHITECTURES=90"]   # extra CMake arguments for its engine
        engine = "/path/to/gmb-bench"   # optional: use this engine instead of building one
        knobs = { UCX_IB_SL = ["1", "2"] }  # settings `gmb tune` tries beside its catalogue: NAME -> values

        [[library]]                     # NCCL as one more library: launched, built and bootstrapped
        name = "nccl"                   # through the MPI library named by `via` (declared earlier in
        transport = "nccl"              # this file, or detected: see `gmb libs`)
        via = "ompi-ob1"

    ``known``: libraries (e.g. detected ones) an NCCL entry's ``via`` may also name.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    out: list[MpiLibrary] = []
    unknown = set(data) - {"library"}
    if unknown:
        raise ConfigError(f"{path}: unknown top-level keys {sorted(unknown)} (accepted: [[library]] entries)")
    entries = array_of_tables(data, "library", path, ConfigError, "one per library")
    for i, entry in enumerate(entries):
        if "name" not in entry:
            raise ConfigError(f"{path}: library #{i + 1} has no name")
        where = f"{path}: library {entry['name']!r}"
        _check_entry_types(entry, where)
        unknown = set(entry) - LIBRARY_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown keys {sorted(unknown)} (known: {', '.join(sorted(LIBRARY_KEYS))})")
        if entry["name"] in {lib.name for lib in out}:
            raise ConfigError(f"{where}: declared twice")
        transport = entry.get("transport", "mpi")
        if transport not in TRANSPORTS:
            raise ConfigError(f"{where}: transport must be one of {', '.join(TRANSPORTS)} (got {transport!r})")
        if transport == "nccl":
            out.append(_nccl_library(entry, where, [*out, *known]))
        else:
            out.append(_mpi_library(entry, where))
    return out


def _mpi_library(entry: dict, where: str) -> MpiLibrary:
    """An MPI library's entry (its types and keys checked) made the library: its family and version as declared,
    else as its launcher says; its compiler wrappers found next to the launcher unless declared; its profile
    applied."""
    if "via" in entry:
        raise ConfigError(f"{where}: via applies to transport = \"nccl\" only")
    prefix = entry.get("prefix", "")
    profile = entry.get("profile")
    family = entry.get("family") or (PROFILES[profile]["family"] if profile in PROFILES else None)
    launcher_path = _launcher_path(entry, prefix, where)
    cuda_aware = entry.get("cuda_aware")
    if cuda_aware is not None and not isinstance(cuda_aware, bool):
        raise ConfigError(f"{where}: cuda_aware must be true or false")
    lib = MpiLibrary(name=entry["name"], family=family or "unknown", version=entry.get("version") or "unknown",
                     prefix=prefix or str(Path(launcher_path).parent.parent), launcher_path=launcher_path,
                     launcher_args=_str_list(entry, "launcher_args", where),
                     env=_str_table(entry, "env", where), source="declared",
                     engine=entry.get("engine"), cuda_aware=cuda_aware,
                     env_unset=_str_list(entry, "env_unset", where),
                     path_remove=_str_list(entry, "path_remove", where),
                     cmake_args=_str_list(entry, "cmake_args", where), knobs=_knobs(entry, where))
    if family is None or entry.get("version") is None:
        ident = identify(launcher_path, env=lib.process_env())  # with the library's own environment
        if ident:
            lib = replace(lib, family=family or ident[0], version=entry.get("version") or ident[1])
    cxx, cc = compilers(launcher_path)
    lib = replace(lib, cxx=entry.get("cxx", cxx), cc=entry.get("cc", cc),
                  launcher=entry.get("launcher") or families.launcher(lib.family))
    if profile:
        lib = apply_profile(lib, profile)
    return lib.with_library_dirs()


def _launcher_path(entry: dict, prefix: str, where: str) -> str:
    """An entry's launcher: its launcher_path, else its prefix's bin/mpirun or bin/mpiexec; ConfigError where there
    is neither."""
    launcher_path = entry.get("launcher_path")
    if not launcher_path and prefix:
        for n in ("mpirun", "mpiexec"):
            if Path(prefix, "bin", n).exists():
                launcher_path = str(Path(prefix, "bin", n))
                break
    if not launcher_path and prefix and not Path(prefix).is_dir():
        raise ConfigError(f"{where}: prefix {prefix} does not exist (a prefix is the directory an MPI library is "
                          f"installed in, holding bin/mpirun or bin/mpiexec; or give launcher_path)")
    if not launcher_path and prefix:
        raise ConfigError(f"{where}: prefix {prefix} holds no bin/mpirun or bin/mpiexec (a prefix is the "
                          f"directory an MPI library is installed in; or give launcher_path, the launcher's path)")
    if not launcher_path:
        raise ConfigError(f"{where}: give prefix (with bin/mpirun) or launcher_path")
    return launcher_path


def _nccl_library(entry: dict, where: str, candidates: list[MpiLibrary]) -> MpiLibrary:
    extra = set(entry) - NCCL_KEYS
    if extra:
        raise ConfigError(f"{where}: an NCCL library takes launcher, engine and build settings from its via "
                          f"library; not allowed here: {sorted(extra)}")
    if not entry.get("via"):
        raise ConfigError(f"{where}: transport = \"nccl\" needs via = \"<MPI library name>\" (its launcher and "
                          "engine bootstrap NCCL)")
    via = next((lib for lib in candidates if lib.name == entry["via"]), None)
    if via is None:
        raise ConfigError(f"{where}: via library {entry['via']!r} not found (declare it before this entry; "
                          f"known: {', '.join(lib.name for lib in candidates) or 'none'})")
    if via.transport != "mpi":
        raise ConfigError(f"{where}: via library {via.name!r} is itself an NCCL library")
    return replace(nccl_library(via, entry["name"], env=_str_table(entry, "env", where),
                                launcher_args=_str_list(entry, "launcher_args", where), source="declared"),
                   knobs=_knobs(entry, where))


def to_toml(libs: list[MpiLibrary]) -> str:
    """A libraries file declaring ``libs`` as they are (load_config reads it back to the same launches): each with
    its launcher, arguments and environment spelled out (no profile), an NCCL library by its ``via``."""
    out = []
    by_name = {lib.name: lib for lib in libs}
    for lib in libs:
        fields = {"name": lib.name}
        if lib.transport == "nccl":  # what it adds to its via library's (load_config puts them together again)
            via = by_name.get(lib.via) or replace(lib, env={}, launcher_args=[])
            fields |= {"transport": "nccl", "via": lib.via,
                       "env": {k: v for k, v in lib.env.items() if via.env.get(k) != v},
                       "launcher_args": lib.launcher_args[len(via.launcher_args):]}
        else:
            fields |= {"family": lib.family, "version": lib.version, "prefix": lib.prefix, "launcher": lib.launcher,
                       "launcher_path": lib.launcher_path, "launcher_args": lib.launcher_args, "env": lib.env,
                       "env_unset": lib.env_unset, "path_remove": lib.path_remove, "cmake_args": lib.cmake_args,
                       "engine": lib.engine}
            if lib.cuda_aware is not None:
                fields["cuda_aware"] = lib.cuda_aware
        fields["knobs"] = lib.knobs
        out.append("[[library]]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in fields.items()
                                             if v not in ([], {}, None)))
    return "\n".join(out)


def _knobs(entry: dict, where: str) -> dict[str, list[str]]:
    try:
        return check_declared(entry.get("knobs", {}), where, families.setting_prefixes())
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def config_paths(explicit: str | None = None) -> list[Path]:
    if explicit:
        return [Path(explicit)]
    out = []
    if os.environ.get("GMB_CONFIG"):
        out.append(Path(os.environ["GMB_CONFIG"]))
    out += [Path.home() / ".config" / "gmb" / "libraries.toml", Path("gmb.toml")]
    return out


def all_libraries(config: str | None = None, detect_libs: bool = True) -> list[MpiLibrary]:
    """Declared libraries (config file) plus detected ones whose installation was not declared."""
    detected = detect() if detect_libs else []
    declared = []
    for p in config_paths(config):
        if p.is_file():
            declared += load_config(p, known=detected)
        elif config:
            raise ConfigError(f"{p}: no such config file")
    out = list(declared)
    declared_ids = {(lib.family, lib.version, lib.prefix) for lib in declared}
    names = {lib.name for lib in declared}
    for lib in detected:
        if (lib.family, lib.version, lib.prefix) not in declared_ids and lib.name not in names:
            out.append(lib)
    # every installation found, used or not, is kept out of the others' environments
    return identity.isolated([*out, *(lib for lib in detected if lib not in out)])[:len(out)]
