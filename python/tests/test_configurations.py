# SPDX-License-Identifier: BSD-3-Clause
"""One library configuration per library, made in one place and never changed: the libraries a session finds are
new objects where the command line changes them, and only engine/configurations reaches engines.choose."""

import ast

from gmb.engine import configurations
from gmb.machine import libraries
from gmb.machine.mpilibs import MpiLibrary
from gmb.options import LibraryOptions
from gmb.run import setup
from test_imports import _modules


def _found():
    return [MpiLibrary("a", "openmpi", "5.0.7", "/opt/a", "/opt/a/bin/mpirun", "mpirun", isolate_from=["/opt/b/lib"])]


def test_found_libraries_are_new_objects(monkeypatch):
    """--no-isolation and --launcher give new library objects: the ones found stay as found."""
    found = _found()
    monkeypatch.setattr(libraries, "all_libraries", lambda config, detect_libs: found)
    (lib,), names = setup.found_libraries(LibraryOptions(no_isolation=True, launcher="srun"))
    assert (lib.isolate_from, lib.launcher, names) == ([], "srun", ["a"])
    assert (found[0].isolate_from, found[0].launcher) == (["/opt/b/lib"], "mpirun")


def test_configurations_leave_their_libraries_alone(monkeypatch):
    """The static CUDA awareness a configuration gets is its own library's, not written into the one given."""
    monkeypatch.setattr(configurations.mpilibs, "cuda_aware_static", lambda lib: True)
    (lib,) = _found()
    (conf,) = configurations.configurations([lib], do_build=False, diagnosis=True)
    assert conf.library.cuda_aware is True and lib.cuda_aware is None
    assert conf.launcher.name == "mpirun" and conf.chosen is not None


def test_only_configurations_choose_engines():
    """Which engine a library uses is decided by engines.choose, reached from outside engines.py through
    engine/configurations only (run, plan, doctor, slurm and gmb build all get their engines there)."""
    def chooses(tree):
        return any(isinstance(n, ast.Attribute) and n.attr == "choose" or
                   isinstance(n, ast.ImportFrom) and any(a.name == "choose" for a in n.names) for n in ast.walk(tree))

    users = {name for name, path in _modules().items() if chooses(ast.parse(path.read_text()))}
    assert users == {"gmb.engine.configurations"}
