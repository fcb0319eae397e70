# SPDX-License-Identifier: BSD-3-Clause
"""The files `gmb tune` writes in the libraries' own form, loaded into the real libraries through their own loading
mechanism, and shown to take effect by what the library itself does (release builds say nothing of the algorithm
they run):

- Open MPI's coll/tuned rules file: its pml monitoring counts each rank's collective-internal messages per peer; on
  4 ranks a ring allreduce sends rank 0's to rank 1 alone, Open MPI's own choice sends to two peers.
- Open MPI's mca-params.conf: ompi_info, the library's own reading of its parameters, names the file as the source.
- MPICH's selection JSON: MPICH's error stack names the algorithm a call ran; a deliberately erroneous call (rank 0
  gives half the count) makes it say which one.
- UCX's ucx.conf: ucx_info, UCX's own reading of its configuration, shows the value.
- NCCL's configuration file is not loaded here: NCCL needs a GPU.

Each runs tiny programs on 4 ranks for a second or two, and is skipped, with the reason, where its tool is missing."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from gmb.campaign.spec import Block
from gmb.tune import native
from gmb.tune.native.confirmed import name_value_text
from gmb.tune.native.manifest import MANIFEST

K = 1024
OMPI = ("/usr/bin/mpicc.openmpi", "/usr/bin/mpirun.openmpi", "/usr/bin/ompi_info")
MPICH = ("/usr/bin/mpicc.mpich", "/usr/bin/mpiexec.mpich")

ALLREDUCE = r"""
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = atoi(argv[1]);
    int *a = calloc(n, sizeof(int)), *b = calloc(n, sizeof(int));
    MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"""

# an erroneous collective on purpose: rank 0 passes half the count, so an algorithm that meets the truncated message
# returns the error, and MPICH's error string (its error stack) names that algorithm's function
TRUNCATED = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = atoi(argv[2]), rank, size, err, len;
    char said[MPI_MAX_ERROR_STRING];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int count = rank == 0 ? n / 2 : n;
    char *a = calloc(2 * n, 1), *b = calloc(2 * n, 1);
    if (!strcmp(argv[1], "allreduce")) err = MPI_Allreduce(a, b, count, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
    else err = MPI_Alltoall(a, count / size, MPI_BYTE, b, count / size, MPI_BYTE, MPI_COMM_WORLD);
    if (err != MPI_SUCCESS) {
        MPI_Error_string(err, said, &len);
        printf("rank %d: %s\n", rank, said);
    }
    MPI_Finalize();
    return 0;
}
"""


def _needs(*tools):
    missing = [t for t in tools if not Path(t).exists() and shutil.which(t) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


def _program(tmp_path: Path, cc: str, source: str, name: str) -> Path:
    (tmp_path / f"{name}.c").write_text(source)
    subprocess.run([cc, "-o", str(tmp_path / name), str(tmp_path / f"{name}.c")], check=True, timeout=60)
    return tmp_path / name


def _race(configuration, operation, ranks, arm, low, high) -> dict:
    settings = dict(part.split("=", 1) for part in arm.split(","))
    return {"configuration": configuration, "path": f"collective {operation}" if operation else "host",
            "operation": operation, "sizes": [8, K, 64 * K, 1 << 20], "higher_is_better": True,
            "identity": {"point": {"ranks": ranks, "memory": json.dumps({"root": "host", "others": "host"})}},
            "recommendation": [{"low": low, "high": high, "arm": arm, "settings": settings, "gain": 1.25,
                                "gain_low": 1.1, "gain_high": 1.4, "worse_sizes": [], "sizes": []}]}


def _written(tmp_path: Path, family: str, launcher: str, races: list[dict], library_file=None) -> dict:
    """write_native for a configuration of the real library (its tools beside ``launcher``); the loading settings of
    native.json."""
    lib = SimpleNamespace(family=family, version=_version(family), transport="mpi", launcher_path=launcher,
                          process_env=lambda: dict(os.environ))
    conf = SimpleNamespace(name="lib", library=lib)
    store = SimpleNamespace(contexts=lambda: [{"library": "lib", "json": json.dumps(
        {"ranks": [{"host": "this-machine", "mpi_library": library_file}]})}])
    out = tmp_path / "tune"
    out.mkdir()
    blocks = [SimpleNamespace(block=Block(["coll"]))] * len(races)
    lines, errors = native.write_native(out, {"races": races}, blocks, {"lib": conf}, store)
    assert errors == [] and not any("not written" in line for line in lines), lines
    (entry,) = json.loads((out / MANIFEST).read_text())["configurations"]
    return entry["load"]


def _version(family: str) -> str:
    if family == "openmpi":
        text = subprocess.run([OMPI[2], "--version"], capture_output=True, text=True).stdout
        return re.search(r"v(\d+\.\d+\.\d+)", text).group(1)
    text = subprocess.run(["mpichversion"], capture_output=True, text=True).stdout
    return re.search(r"MPICH Version:\s*(\S+)", text).group(1)


def _ompi_env(extra: dict) -> dict:
    return {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_rmaps_base_oversubscribe": "1", **extra}


def _peers_of_rank0(tmp_path: Path, program: Path, ints: int, load: dict, name: str) -> dict[int, int]:
    """Rank 0's collective-internal messages per peer, as Open MPI's pml monitoring counts them."""
    prefix = tmp_path / name
    subprocess.run([OMPI[1], "-np", "4", str(program), str(ints)], check=True, timeout=120, capture_output=True,
                   env=_ompi_env({**load, "OMPI_MCA_pml_monitoring_enable": "2",
                                  "OMPI_MCA_pml_monitoring_enable_output": "3",
                                  "OMPI_MCA_pml_monitoring_filename": str(prefix)}))
    text = Path(f"{prefix}.0.prof").read_text()
    return {int(peer): int(n) for peer, n in re.findall(r"^I\t0\t(\d+)\t\d+ bytes\t(\d+) msgs sent", text, re.M)}


@_needs(*OMPI)
def test_open_mpis_rules_file_and_parameter_file_take_effect(tmp_path):
    info = subprocess.run([OMPI[2]], capture_output=True, text=True).stdout
    if "pml: monitoring" not in info.replace("MCA ", ""):
        pytest.skip("this Open MPI has no pml monitoring component")
    dyn = "OMPI_MCA_coll_tuned_use_dynamic_rules=1,"
    load = _written(tmp_path, "openmpi", OMPI[1], [
        _race("lib", "allreduce", 4, dyn + "OMPI_MCA_coll_tuned_allreduce_algorithm=ring", K, 64 * K),
        _race("lib", None, 2, "OMPI_MCA_btl_vader_eager_limit=65536", K, 64 * K)])
    program = _program(tmp_path, OMPI[0], ALLREDUCE, "allreduce")
    # 16 KiB, in the rule's range: a ring, rank 0 sending to its right neighbour only (2 x 3 steps)
    assert _peers_of_rank0(tmp_path, program, 4 * K, load, "ring") == {1: 6}
    assert len(_peers_of_rank0(tmp_path, program, 4 * K, {}, "own")) > 1
    # 64 B, below the range: the rules leave Open MPI its own choice
    assert _peers_of_rank0(tmp_path, program, 16, load, "small") == _peers_of_rank0(tmp_path, program, 16, {}, "s")
    # the parameter file: read by the library (its source), the library's own files still read after it
    listed = subprocess.run([OMPI[2], "--param", "btl", "vader", "--level", "9", "--parsable"], capture_output=True,
                            text=True, env=_ompi_env(load)).stdout
    assert "btl_vader_eager_limit:value:65536" in listed
    assert re.search(r"btl_vader_eager_limit:source:file \(\S*lib-mca-params\.conf:\d+\)", listed)
    own = subprocess.run([OMPI[2], "--param", "pml", "all", "--level", "9", "--parsable"], capture_output=True,
                         text=True, env=_ompi_env({})).stdout
    loaded = subprocess.run([OMPI[2], "--param", "pml", "all", "--level", "9", "--parsable"], capture_output=True,
                            text=True, env=_ompi_env(load)).stdout
    assert re.findall(r"param:pml:(?:value|source):.*", loaded) == re.findall(r"param:pml:(?:value|source):.*", own)


def _aborted_in(program: Path, operation: str, load: dict, size: int = 4 * K) -> set[str]:
    """The MPIR algorithms MPICH's error stack names for the erroneous call of ``size`` bytes (none: it passed)."""
    said = subprocess.run([MPICH[1], "-n", "4", str(program), operation, str(size)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **load})
    return set(re.findall(r"MPIR_\w+?_intra_\w+", said.stdout + said.stderr))


@_needs(*MPICH, "mpichversion")
def test_mpichs_selection_file_takes_effect(tmp_path):
    program = _program(tmp_path, MPICH[0], TRUNCATED, "truncated")
    linked = subprocess.run(["ldd", str(program)], capture_output=True, text=True).stdout
    library = re.search(r"(/\S*libmpich\.so\S*)", linked)
    if library is None:
        pytest.skip("the probe is not linked with a libmpich")
    load = _written(tmp_path, "mpich", MPICH[1], [
        _race("lib", "alltoall", 4, "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=pairwise", K, 64 * K),
        _race("lib", "allreduce", 4, "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling,"
                                     "MPIR_CVAR_ALLREDUCE_POSIX_INTRA_ALGORITHM=mpir", K, 64 * K)],
        library_file=library.group(1))
    assert load["MPIR_CVAR_ALLREDUCE_POSIX_INTRA_ALGORITHM"] == "mpir"  # loaded with the hand-over it was measured with
    own = _aborted_in(program, "alltoall", {})
    assert own and "MPIR_Alltoall_intra_pairwise" not in own
    assert _aborted_in(program, "alltoall", load) == {"MPIR_Alltoall_intra_pairwise"}
    # 4 KiB of allreduce: MPICH's own choice, reduce_scatter_allgather, says so; recursive doubling lets the short
    # message pass unsaid
    assert _aborted_in(program, "allreduce", {}) == {"MPIR_Allreduce_intra_reduce_scatter_allgather"}
    assert _aborted_in(program, "allreduce", load) == set()


@_needs("ucx_info")
def test_ucxs_configuration_file_takes_effect(tmp_path):
    conf_dir = tmp_path / "lib-ucx"
    conf_dir.mkdir()
    from gmb.tune.native import ucx
    (conf_dir / ucx.FILE_NAME).write_text(name_value_text({"UCX_RNDV_THRESH": ("12345", [])}, ["# a test"]))
    shown = subprocess.run(["ucx_info", "-c"], capture_output=True, text=True, env={**os.environ, ucx.CONFIG_DIR:
                                                                                    str(conf_dir)}, cwd=tmp_path)
    assert "UCX_RNDV_THRESH=12345" in shown.stdout.splitlines()
    assert "UCX_RNDV_THRESH=12345" not in subprocess.run(["ucx_info", "-c"], capture_output=True, text=True,
                                                         cwd=tmp_path).stdout.splitlines()
