# SPDX-License-Identifier: BSD-3-Clause
"""The quick campaign of a GPU node with its one-sided and partitioned blocks, recorded (python/tests/data/
h100-quick-mpi4: 1 x H100, the lab's CUDA-aware Open MPI 5.0.7 under pml ob1 and ucx): what its tables and answers
say of one-sided and partitioned communication, and of the one-sided launches the library refused."""

from gmb.report import answers
from gmb.report.answers_words import missing_sentence
from gmb.report import tables
from gmb.results.model import Results
from gmb.report import cells


def _rows(t: cells.Table) -> list[dict]:
    return [dict(zip(t.columns, row)) for row in t.rows]


def test_one_sided_rows_have_their_ceiling_and_stay_under_it(gpu_quick_mpi4_store):
    rows = _rows(tables.one_sided_table(Results.load(gpu_quick_mpi4_store)))
    by_path = {r["path"]: r for r in rows}
    assert set(by_path) == {"same-gpu", "host-device"}
    assert {r["library"] for r in rows} == {"openmpi-5.0.7-ucx"}  # ob1's were refused (below)
    same = by_path["same-gpu"]
    # put between buffers of one GPU: a copy on the device, at most its d2d ceiling (physics: nothing beats it)
    assert same["ceiling"] == "d2d" and 90 < same["% of ceiling"] <= 100
    assert isinstance(same["latency at 8 B (us)"], float)
    assert by_path["host-device"]["ceiling"] == "h2d-pinned" and by_path["host-device"]["% of ceiling"] < 5


def test_ob1_one_sided_launches_are_refused_with_the_library_defect(gpu_quick_mpi4_store):
    refused = gpu_quick_mpi4_store.rows("SELECT DISTINCT benchmark, status, reason FROM results WHERE library = ? AND "
                                        "benchmark LIKE 'rma%'", ("openmpi-5.0.7-ob1",))
    assert refused and all(r["status"] == "unsupported" for r in refused)
    assert all("osc/ucx fails outside pml ucx" in r["reason"] for r in refused)
    missing = " ".join(missing_sentence(m) for m in answers.answers(Results.load(gpu_quick_mpi4_store)).missing)
    assert "osc/ucx fails outside pml ucx" in missing


def test_partitioned_overlap_of_both_ready_modes(gpu_quick_mpi4_store):
    rows = _rows(tables.partitioned_overlap_table(Results.load(gpu_quick_mpi4_store)))
    assert {(r["library"], r["ready"]) for r in rows} == {(lib, ready) for lib in ("openmpi-5.0.7-ob1", "openmpi-5.0.7-ucx")
                                                        for ready in ("after-kernel", "per-block")}
    ucx = {r["ready"]: r for r in rows if r["library"] == "openmpi-5.0.7-ucx"}
    # readying each partition as its blocks finish overlaps more of the transfer than readying them after the kernel
    assert ucx["per-block"]["overlap (%)"] > ucx["after-kernel"]["overlap (%)"] + 10
    assert all(0 <= r["overlap (%)"] <= 100 for r in rows)
    features = {f.topic for f in answers.answers(Results.load(gpu_quick_mpi4_store)).features}
    assert {"one-sided", "partitioned"} <= features
