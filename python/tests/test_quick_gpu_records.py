# SPDX-License-Identifier: BSD-3-Clause
"""The quick campaign of a GPU node, recorded (python/tests/data/h100-quick: 1 x H100, the lab's CUDA-aware Open
MPI 5.0.7 under pml ob1 and pml ucx, the system's Open MPI 4.1.6 that is not CUDA-aware under both pmls): what its
answers and its tables say."""

import re

from gmb.report import answers
from gmb.report.answers_words import setting_sentence, strategy_sentence
from gmb.report import tables
from gmb.results.model import Results
from gmb.report import render_text


def test_answers_of_the_recorded_quick_campaign(gpu_quick_store):
    a = answers.answers(Results.load(gpu_quick_store))
    paths = {p.path: p for p in a.paths}
    assert {"same GPU", "pinned host -> device", "pageable host -> device", "host"} <= set(paths)
    managed = next(p for p in a.paths if p.path.startswith("managed"))
    assert managed.benchmark == "um"
    for label in ("same GPU", "pinned host -> device", "pageable host -> device", "host"):
        p = paths[label]
        assert p.ceiling and all(f.pct_of_ceiling is not None for f in p.figures), label  # a ceiling at its size
        assert all(f.latency_bytes == 8 and f.precision is not None for f in p.figures), label
    # every pml of the CUDA-aware Open MPI is a configuration of its own, and on one GPU ob1 is the faster one
    same = paths["same GPU"]
    assert {f.library for f in same.figures} == {"openmpi-5.0.7-ob1", "openmpi-5.0.7-ucx"}
    assert same.figures[0].library == "openmpi-5.0.7-ob1" and same.figures[0].value > 2 * same.figures[1].value
    assert same.fastest is None  # one launch a point: ranked by figure, no claim
    # gmb's pipelined-gpu strategy beside the library's own pinned host -> device path under ob1: one launch a
    # point, so shown without a claim that it beats it
    beat = next(s for s in a.strategies if "pipelined-gpu" in strategy_sentence(s))
    assert "openmpi-5.0.7-ob1" in strategy_sentence(beat) and not beat.beats
    assert "one launch: no claim across launches" in strategy_sentence(beat)
    # the doctor's findings: pml ucx needs UCX_MEMTYPE_CACHE=n
    assert any(s.library == "openmpi-5.0.7-ucx" and "UCX_MEMTYPE_CACHE=n" in setting_sentence(s) for s in a.settings)
    # device collectives of both pmls next to each other
    ops = {(c.operation, c.memory) for c in a.collectives}
    assert {("allreduce", "device"), ("bcast", "device"), ("alltoall", "device")} <= ops
    text = render_text.answers_text(answers.answers(Results.load(gpu_quick_store)))
    assert not re.search(r"\b(True|False|None)\b", text)


def test_fraction_of_peak_is_filled_in_every_row_of_the_quick_campaign(gpu_quick_store):
    """The quick campaign measures its ceilings at the sizes it measures: every bandwidth row has one."""
    t = tables.fraction_of_peak(Results.load(gpu_quick_store))
    col = {c: i for i, c in enumerate(t.columns)}
    assert t.rows
    for row in t.rows:
        assert isinstance(row[col["% of ceiling"]], float), row
