# SPDX-License-Identifier: BSD-3-Clause
"""The quick campaign of a GPU node with two CUDA-aware MPI families, recorded (python/tests/data/h100-quick-mpich:
1 x H100; the lab's Open MPI 5.0.7 under pml ob1 and ucx, MPICH 4.0.2 built with CUDA by contrib/cuda-mpich, the
system's Open MPI 4.1.6): what the answers say per path when the families differ, and which settings mattered."""

from gmb.report import answers
from gmb.report import tables
from gmb.results.model import Results
from gmb.report import render_text, answers_data

AWARE = {"openmpi-5.0.7-ob1", "openmpi-5.0.7-ucx", "mpich-4.0.2"}


def _path(ans: answers_data.Answers, path: str) -> answers_data.PathAnswer:
    return next(p for p in ans.paths if p.path == path)


def test_three_configurations_on_device_memory_and_the_fastest_per_path(gpu_quick_mpich_store):
    ans = answers.answers(Results.load(gpu_quick_mpich_store))
    same = _path(ans, "same GPU")
    assert {f.library for f in same.figures} == AWARE
    # Open MPI's pml ob1 (smcuda, CUDA IPC) moves device memory of one GPU at most at the d2d copy ceiling;
    # MPICH's ch4:ucx at about a third of it
    assert (same.figures[0].library, same.figures[-1].library) == ("openmpi-5.0.7-ob1", "mpich-4.0.2")  # one launch a point: ranked by figure, no claim
    assert (same.fastest, same.slowest) == (None, None)
    assert all(f.pct_of_ceiling <= 100 for f in same.figures)
    # pinned host memory into device memory: MPICH's path is an order of magnitude ahead of pml ob1's
    pinned = _path(ans, "pinned host -> device")
    assert pinned.figures[0].library == "mpich-4.0.2" and pinned.figures[0].value > 10 * pinned.figures[-1].value
    assert _path(ans, "pageable host -> device").figures[0].library == "openmpi-5.0.7-ucx"
    text = " ".join(render_text.answers_text(answers.answers(Results.load(gpu_quick_mpich_store))).split())
    assert "pinned host -> device (bw at 4M, ceiling h2d-pinned 52.0 GB/s): no configuration of 3 proven fastest" in text
    assert "best mpich-4.0.2 38.3 GB/s" in text


def test_collectives_on_device_memory_compare_the_families(gpu_quick_mpich_store):
    ans = answers.answers(Results.load(gpu_quick_mpich_store))
    device = {c.operation: c for c in ans.collectives if c.memory == "device"}
    assert set(device) == {"allreduce", "alltoall", "bcast"}
    assert all({f.library for f in c.figures} == AWARE for c in device.values())
    # MPICH reduces device buffers with yaksa on the GPU; Open MPI 5.0.7 reduces them through host memory
    assert device["allreduce"].figures[0].library == "mpich-4.0.2"  # one launch a point: ranked by figure, no claim
    assert device["bcast"].figures[0].library == "openmpi-5.0.7-ob1"
    assert all(c.fastest is None for c in device.values())


def test_settings_that_mattered_for_each_ucx_configuration(gpu_quick_mpich_store):
    found = {(s.library, s.setting) for s in answers.answers(Results.load(gpu_quick_mpich_store)).settings}
    # both families over UCX crash on device memory with UCX's memory-type cache on
    assert {("openmpi-5.0.7-ucx", "UCX_MEMTYPE_CACHE=n"), ("mpich-4.0.2", "UCX_MEMTYPE_CACHE=n")} <= found
    # MPICH's GPU support is on by default: switching it on explicitly is not a setting that matters
    assert ("mpich-4.0.2", "MPIR_CVAR_ENABLE_GPU=1") not in found


def test_every_launch_ran_and_the_tables_name_each_configuration(gpu_quick_mpich_store):
    statuses = {r["status"] for r in gpu_quick_mpich_store.rows("SELECT status FROM launches")}
    assert statuses == {"ok", "unsupported"}  # the unsupported ones: Open MPI 5.0.7's osc/ucx under pml ob1
    rows = [dict(zip(t.columns, r)) for t in [tables.fraction_of_peak(Results.load(gpu_quick_mpich_store))] for r in t.rows]
    assert AWARE <= {r["library"] for r in rows if r["memory"] == "device:device"}
