# SPDX-License-Identifier: BSD-3-Clause
"""`gmb libs`, `gmb doctor` and `gmb build`: the MPI libraries found and declared, their diagnosis, and the engine
each one runs, all as `gmb run` would take them (run/setup.py finds them)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

from ..engine import configurations, doctor as doctor_mod, engines
from ..machine import mpilibs, topology
from ..options import BuildOptions, LibraryOptions
from . import setup


def libs_command(libraries: LibraryOptions, as_json: bool) -> int:
    """The libraries found and declared, one line each (``as_json``: their descriptions as JSON)."""
    libs = [replace(lib, cuda_aware=mpilibs.cuda_aware_static(lib))
            if lib.cuda_aware is None and lib.transport == "mpi" else lib
            for lib in setup.libraries(libraries, need=False)]
    if as_json:
        print(json.dumps([lib.describe() for lib in libs], indent=1))
        return 0
    aware = {True: "yes", False: "no", None: "unknown"}  # unknown: not declared; `gmb doctor` proves it
    print(f"{'library':<24} {'family':<10} {'version':<10} {'prefix':<20} {'CUDA-aware':<11} launcher, compiler, "
          "profile, found by")
    for lib in libs:
        print(f"{lib.name:<24} {lib.family:<10} {lib.version:<10} {lib.prefix:<20} "
              f"{aware[lib.cuda_aware] if lib.transport == 'mpi' else '-':<11} {lib.launcher} "
              f"({lib.launcher_path}), {lib.cxx}, {lib.profile or '-'}, {lib.source}"
              + (f"; transport {lib.transport} via {lib.via}" if lib.transport != "mpi" else ""))
    return 0


def doctor_command(libraries: LibraryOptions, as_json: bool, run_engine_doctor: bool, settings: bool) -> int:
    """GPUs, links, NUMA and each library configuration diagnosed, nothing built (``settings``: find the settings
    each library's GPU support depends on; otherwise the doctor decides, by whether GPUs are present)."""
    topo = topology.discover()
    rep = doctor_mod.diagnose(setup.diagnosed_configurations(libraries, topo), topo,
                              run_engine_doctor=run_engine_doctor, check_settings=True if settings else None)
    print(json.dumps(rep, indent=1, default=str) if as_json else doctor_mod.format_text(rep))
    return 0


def build_command(libraries: LibraryOptions, options: BuildOptions, force: bool) -> int:
    """Each library's engine as `gmb run` would take it (configurations.engine_choices): declared, installed
    (GMB_ENGINE, PATH) or built from the sources; which one and why is said for every library. 1 where one has
    none."""
    rc = 0
    chosen = configurations.engine_choices(setup.libraries(libraries), do_build=True,
                                           build_options=engines.build_options(options),
                                           force=force, log=print)
    for name, choice in chosen.items():
        for line in choice.lines(name):
            print(f"gmb build: {line}", file=sys.stderr)
        if choice.error is not None:
            print(f"gmb build: {choice.error}", file=sys.stderr)
            rc = 1
    return rc
