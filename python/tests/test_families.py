# SPDX-License-Identifier: BSD-3-Clause
"""The MPI family table (machine/families.py) is what every place that knows a family reads: the version text's
family and a record's label, the launcher and srun's PMI plugin, the GPU profiles, the settings of a record and the
report's behaviour variables; its known defects are the engine's (src/core/known_issues.cpp)."""

import re
from pathlib import Path

import pytest

from gmb.machine import families, identity, launchers, mpilibs
from gmb.machine.families import FAMILIES
from gmb.report import html
from gmb.results import records

KNOWN_ISSUES = Path(__file__).parents[2] / "src" / "core" / "known_issues.cpp"


@pytest.mark.parametrize("text, family", [
    ("Open MPI v4.1.4, package: Debian OpenMPI", "openmpi"),
    ("MPICH Version: 4.0.2", "mpich"),
    ("MVAPICH2 Version 2.3.7 (based on MPICH 3.2.1)", "mvapich"),
    ("MPI VERSION : CRAY MPICH version 8.1.27 (ANL base 3.4a2)", "cray-mpich"),
    ("Intel(R) MPI Library 2021.10 for Linux* OS", "intelmpi"),
    ("something else", None),
])
def test_version_text_names_the_family(text, family):
    assert families.library_family(text) == family
    if family:
        assert identity.library_label({"mpi": {"library_version": text}}).startswith(f"{family}-")


def test_every_family_is_complete():
    assert len({f.name for f in FAMILIES}) == len(FAMILIES)
    for f in FAMILIES:
        assert f.launcher in launchers.REGISTRY
        assert f.version_patterns and f.setting_prefixes and f.behaviour_prefixes
        assert f.derived_from is None or f.derived_from in families.BY_NAME


def test_launchers_read_the_table():
    spec = launchers.LaunchSpec(ranks=2, program=["x"])
    for f in FAMILIES:
        lib = mpilibs.MpiLibrary("l", f.name, "1", "/p", "/p/bin/mpiexec")
        argv = launchers.get("srun").argv(lib, spec)
        assert [a for a in argv if a.startswith("--mpi=")] == ([f"--mpi={f.srun_mpi}"] if f.srun_mpi else [])


def test_gpu_profiles_come_from_the_table():
    assert mpilibs.PROFILES == families.gpu_profiles()
    for f in FAMILIES:
        for name in f.gpu_profiles:
            assert mpilibs.PROFILES[name]["family"] == f.name


def test_settings_and_behaviour_prefixes_come_from_the_table():
    for f in FAMILIES:
        for prefix in f.setting_prefixes:
            assert records.settings({"environment": {f"{prefix}X": "1", "HOME": "/h"}}) == {f"{prefix}X": "1"}
        assert set(f.behaviour_prefixes) <= set(html.BEHAVIOUR_PREFIXES)


def test_known_defects_are_the_engines():
    """Each family's known defects are the crashes known_issues.cpp refuses to run into, named as it names them: its
    family by the family's title, and the MPI calls."""
    text = KNOWN_ISSUES.read_text()
    in_engine = re.findall(r'library\.family == "([^"]+)"', text)
    table = [(f.title, d) for f in FAMILIES for d in f.known_defects]
    assert sorted({title for title, _ in table}) == sorted(set(in_engine))
    assert len(table) == text.count("return version +")
    for _, defect in table:
        for call in defect.calls:
            assert f'"{call}"' in text
