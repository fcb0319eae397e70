# SPDX-License-Identifier: BSD-3-Clause
"""The MPI family table (machine/families.py) is what every place that knows a family reads: the version text's
family and a record's label, the launcher and srun's PMI plugin, the GPU profiles, the settings of a record and the
report's behaviour variables; its known defects are the engine's (src/portable/known_issues.cpp)."""

import re
from dataclasses import replace
from pathlib import Path

import pytest

from gmb.engine import configurations, doctor
from gmb.errors import UsageError
from gmb.machine import families, identity, launchers, mpilibs
from gmb.machine.families import FAMILIES
from gmb.machine.topology import Gpu, Topology
from gmb.options import LibraryOptions, SessionOptions
from gmb.run import setup
from gmb.report import html
from gmb.results import run_conditions

KNOWN_ISSUES = Path(__file__).parents[2] / "src" / "portable" / "known_issues.cpp"


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
        # its GPU profile and configurations are its own profiles; each version pattern captures the version
        assert {f.gpu_profile, *(c.profile for c in f.gpu_configurations)} - {None} <= set(f.gpu_profiles)
        assert bool(f.gpu_configurations_need) <= bool(f.gpu_configurations and f.components)
        assert bool(f.built_without_cuda) == bool(f.built_with_cuda)  # the doctor can say its query's "no"
        for pattern in (*f.launcher_version, *([f.version_tool.pattern] if f.version_tool else [])):
            assert re.compile(pattern).groups == 1


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
            assert run_conditions.settings({"environment": {f"{prefix}X": "1", "HOME": "/h"}}) == {f"{prefix}X": "1"}
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


def _program(path: Path, says: str, when: str = "") -> str:
    """A program at ``path`` that prints ``says`` (only for the argument ``when``, when given)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = f"cat <<'E'\n{says}\nE\n"
    path.write_text("#!/bin/sh\n" + (f'[ "$1" = "{when}" ] && {{ {body}}}\n' if when else body))
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("launcher, says, tool, family_version", [
    ("mpirun", "mpirun (Open MPI) 4.1.6\n\nReport bugs to http://www.open-mpi.org/community/help/", None,
     ("openmpi", "4.1.6")),
    ("mpirun.openmpi", "mpirun (OpenRTE) 4.1.4", None, ("openmpi", "4.1.4")),
    ("mpiexec", "HYDRA build details:\n    Version:                                 4.0", "MPICH Version:      4.0.2",
     ("mpich", "4.0.2")),
    ("mpiexec.mpich", "HYDRA build details:\n    Version:                                 4.1.2", None,
     ("mpich", "4.1.2")),
    ("mpiexec", "HYDRA build details:\n    Version: 2.3.7\n    Configure options: '--prefix=/opt/mvapich2'", None,
     ("mvapich", "2.3.7")),
    ("mpiexec.hydra", "Intel(R) MPI Library for Linux* OS, Version 2021.10 Build 20230619 (id: c2e19c2f3e)", None,
     ("intelmpi", "2021.10")),
    ("srun", "slurm 22.05.8", None, None),
])
def test_a_launcher_is_identified_by_its_familys_words_and_version_tool(tmp_path, launcher, says, tool,
                                                                        family_version):
    from gmb.machine import detect

    path = _program(tmp_path / "bin" / launcher, says, when="--version")
    if tool:
        _program(tmp_path / "bin" / "mpichversion", tool)
    assert detect.identify(path, env={"PATH": "/usr/bin:/bin"}) == family_version


def test_a_library_may_name_itself_as_the_family_it_is_derived_from():
    mpich = mpilibs.MpiLibrary("m", "mpich", "8.1.27", "", "/p/bin/mpiexec")
    for text in ("MPI VERSION : CRAY MPICH version 8.1.27 (ANL base 3.4a2)", "MVAPICH2 Version 8.1.27"):
        assert identity.mismatch(mpich, {"mpi": {"library_version": text}}) is None
    assert "another library" in identity.mismatch(mpich, {"mpi": {"library_version": "Open MPI v8.1.27"}})
    assert families.one_library("cray-mpich", "mpich") and not families.one_library("cray-mpich", "mvapich")


# An example family: a new entry is all gmb needs to find, label, check, launch and configure libraries of it.
EXAMPI = families.Family(
    "exampi", "ExaMPI", ("exampi",), launcher="mpiexec", srun_mpi="pmix",
    setting_prefixes=("EXAMPI_",), behaviour_prefixes=("EXAMPI_",),
    gpu_profiles={"exampi-gpu": {"launcher_args": ["--gpu"], "env": {"EXAMPI_GPU": "1"}}},
    launcher_words=("exampi",), launcher_version=(r"ExaMPI (\d+\.\d+\.\d+)",),
    version_tool=families.VersionTool("exampiversion", r"Version:\s*(\S+)"),
    launcher_names=("mpiexec.exampi",), alternatives_suffix=".exampi",
    gpu_profile="exampi-gpu")


def _with_family(monkeypatch, entry: families.Family) -> None:
    """The table with ``entry`` added, and what modules derive from the table when imported (the GPU profiles, the
    settings' and the behaviour prefixes) derived again: what importing gmb with the entry in families.py gives."""
    monkeypatch.setattr(families, "FAMILIES", (*FAMILIES, entry))
    monkeypatch.setattr(families, "BY_NAME", {**families.BY_NAME, entry.name: entry})
    for name, profile in families.gpu_profiles().items():
        monkeypatch.setitem(mpilibs.PROFILES, name, profile)
    monkeypatch.setattr(run_conditions, "SETTING_PREFIXES", families.setting_prefixes())
    monkeypatch.setattr(html, "BEHAVIOUR_PREFIXES", families.behaviour_prefixes())


def test_the_table_is_derived_at_import_only_where_with_family_derives_it_again():
    derived = set()
    for src in (Path(mpilibs.__file__).parents[1]).rglob("*.py"):
        derived |= {f"{src.stem}.{name}" for name in
                    re.findall(r"^(\w+)[^=\n]*= families\.\w+\(", src.read_text(), re.MULTILINE)}
    assert derived == {"mpilibs.PROFILES", "run_conditions.SETTING_PREFIXES", "html.BEHAVIOUR_PREFIXES"}


def test_adding_a_family_is_one_table_entry(tmp_path, monkeypatch):
    from gmb.machine import detect

    _with_family(monkeypatch, EXAMPI)
    bindir = tmp_path / "exampi" / "bin"
    _program(bindir / "mpiexec.exampi", "ExaMPI 1.2 launcher", when="--version")
    _program(bindir / "exampiversion", "ExaMPI Version: 1.2.3")
    _program(bindir / "mpicc.exampi", "mpicc for ExaMPI 1.2.3", when="-v")
    _program(bindir / "mpicxx.exampi", "")
    # detection: its launcher name on PATH, its words, its version tool, its compiler wrappers, its launcher
    (lib,) = [lib for lib in detect.detect(path_env=str(bindir)) if lib.family == "exampi"]
    assert (lib.name, lib.version, lib.launcher, lib.cc) == ("exampi-1.2.3", "1.2.3", "mpiexec",
                                                             str(bindir / "mpicc.exampi"))
    # labelling and the launch check: its records are labelled by it, and another family's are not its
    said = {"mpi": {"library_version": "ExaMPI 1.2.3 (built 2026)"}}
    assert identity.library_label(said) == "exampi-1.2.3"
    assert identity.mismatch(lib, said) is None and identity.launcher_and_wrapper(lib, {}) is None
    assert "another library" in identity.mismatch(lib, {"mpi": {"library_version": "Open MPI v1.2.3"}})
    assert identity.expected(lib) == f"ExaMPI 1.2.3 from {tmp_path / 'exampi'}"
    # launching: its launcher, srun's PMI plugin; on a GPU node its GPU profile
    spec = launchers.LaunchSpec(ranks=2, program=["x"])
    assert launchers.get(lib.launcher).argv(lib, spec)[:3] == [str(bindir / "mpiexec.exampi"), "-n", "2"]
    assert "--mpi=pmix" in launchers.get("srun").argv(lib, spec)
    (gpu,) = mpilibs.gpu_configurations([lib])
    assert (gpu.name, gpu.profile, gpu.env, gpu.launcher_args) == ("exampi-1.2.3", "exampi-gpu", {"EXAMPI_GPU": "1"},
                                                                   ["--gpu"])
    # its settings are a record's settings, and the report shows them as changing how it behaves
    assert run_conditions.settings({"environment": {"EXAMPI_EAGER": "4096", "HOME": "/h"}}) == {"EXAMPI_EAGER": "4096"}
    assert "EXAMPI_EAGER" in html.environment_cell({"EXAMPI_EAGER": "4096", "HOME": "/h"}).split("<details")[0]


GPU_NODE = Topology(gpus=[Gpu(0, "NVIDIA H100")], links={}, numa_nodes={0: "0-1"})


def _not_cuda_aware_said(lib: mpilibs.MpiLibrary) -> str:
    """What `gmb doctor` on a GPU node says of ``lib``, known not to be CUDA-aware."""
    confs = configurations.configurations([lib], do_build=False, diagnosis=True)
    (said,) = [m for m in doctor.diagnose(confs, GPU_NODE, run_engine_doctor=False)["missing"] if "CUDA-aware" in m]
    return said


def _configuration_refused(lib: mpilibs.MpiLibrary, configuration: str) -> str:
    """Why `gmb plan --library <configuration>` of a campaign file refuses a configuration of ``lib``."""
    opts = SessionOptions(libraries=LibraryOptions(library=(configuration,)), campaign="c.toml")
    with pytest.raises(UsageError) as refused:
        setup.machine_configurations(opts, [lib], GPU_NODE)
    return str(refused.value)


def test_the_messages_that_name_a_family_say_its_own_tool_and_configurations(monkeypatch):
    ompi = mpilibs.MpiLibrary("ompi", "openmpi", "5.0.7", "/opt/ompi", "/opt/ompi/bin/mpirun", "mpirun",
                              cuda_aware=False)
    assert _not_cuda_aware_said(ompi) == ("ompi: not CUDA-aware (ompi_info says mpi_built_with_cuda_support=false); "
                                          "device buffers will only be measured with staged strategies.")
    assert _configuration_refused(ompi, "ompi-ucx") == (
        "--library ompi-ucx: a pml configuration of a found Open MPI exists in a campaign generated on a GPU node "
        "only; name the installation (ompi), or declare the configuration in a libraries file (profile openmpi-ob1 "
        "or openmpi-ucx)")
    # a family without a tool to ask: only a declaration says so
    assert "not CUDA-aware (declared cuda_aware = false);" in _not_cuda_aware_said(replace(ompi, family="mpich"))
    _with_family(monkeypatch, replace(EXAMPI, built_with_cuda=lambda bin_dir, env: False,
                                      built_without_cuda="exampi_info says gpu=no", gpu_configuration_kind="transport",
                                      gpu_configurations=(families.GpuConfiguration("fast", "exampi-gpu"),)))
    exampi = replace(ompi, name="exa", family="exampi", launcher="mpiexec")
    assert "exa: not CUDA-aware (exampi_info says gpu=no); device" in _not_cuda_aware_said(exampi)
    assert _configuration_refused(exampi, "exa-fast") == (
        "--library exa-fast: a transport configuration of a found ExaMPI exists in a campaign generated on a GPU "
        "node only; name the installation (exa), or declare the configuration in a libraries file (profile "
        "exampi-gpu)")
