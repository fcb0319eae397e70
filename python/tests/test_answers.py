# SPDX-License-Identifier: BSD-3-Clause
"""The Answers section: which library and settings move GPU data fastest, over which path, how close to the peak."""

import json
import re

import pytest
from conftest import DATA, described
import synth

from gmb.report import answers
from gmb.report.answers_data import MissingSubject
from gmb.report.answers_words import no_ceiling_said, path_sentence
from gmb.results.store import Store
from gmb.results.model import Results
from gmb.report import render_html, render_text

M = 1 << 20
OB1, UCX, NCCL = "openmpi-5.0.7-ob1", "openmpi-5.0.7-ucx", "nccl"
# these records measured ob1's bw with windows of 64 (its own path) and 16 (gmb's strategies): two configurations
OB1_W64, OB1_W16 = f"{OB1} (window=64)", f"{OB1} (window=16)"
UCX_REASON = ("gmb-bench: FATAL on host vm rank 1 at /work/main/src/core/transfer.cpp:80: MPI_Waitall failed: "
              "MPI_ERR_IN_STATUS [first library error: cuda_ipc_cache.c:288 UCX ERROR cuIpcOpenMemHandle() failed: "
              "operation not permitted]")


def _h200_store() -> Store:
    """The real records of the 2 x H200 machine: pml ob1 (with the ceilings, strategies and MPI allreduce), NCCL's
    allreduce, the system Open MPI 4.1.6 (not CUDA-aware: staged-pinned), pml ucx (pinned -> device bibw that
    delivered wrong data from 64 KiB on), and the failed launches of that campaign."""
    st = Store()
    for f in sorted((DATA / "h200-x2").glob("*.jsonl")):
        st.ingest(f, library=NCCL if f.name.startswith("nccl") else OB1)
    for f in sorted((DATA / "h200-ob1").glob("*.jsonl")):
        st.ingest(f, library=None if f.name.startswith("sys") else OB1)  # 4.1.6 labelled from its context
    for f in sorted((DATA / "h200-ucx").glob("*.jsonl")):
        st.ingest(f, library=UCX)
    campaign = json.loads((DATA / "h200-x2" / "campaign-launch-times.json").read_text())
    for x in campaign["launches"]:
        if x["status"] != "ok":
            lib = {"ompi-ucx": UCX, "ompi-ob1": OB1}.get(x["library"], x["library"])
            reason = UCX_REASON if x["benchmark"] in ("bw", "bibw") else "known library crash (exit 3)"
            st.record_launch(launch_id=x["launch_id"], campaign="default", library=lib, benchmark=x["benchmark"],
                             repetition=x["repetition"], memory=x["memory"], strategy=x["strategy"],
                             ranks=x["ranks"], planned_path=x["planned_path"], status=x["status"], reason=reason)
    return described(st)


@pytest.fixture(scope="module")
def h200():
    st = _h200_store()
    return st, answers.answers(Results.load(st)), render_text.answers_text(answers.answers(Results.load(st))), render_html.answers_html(answers.answers(Results.load(st)))


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_nvlink_pair_best_configuration_and_share_of_ceiling_at_64M(h200):
    _st, a, text, _html = h200
    (nv,) = [p for p in a.paths if p.path == "NVLink pair"]
    assert (nv.benchmark, nv.bytes, nv.ceiling) == ("bw", 64 * M, "p2p-ipc")
    best = nv.figures[0]
    assert best.library == OB1_W64 and best.unit == "GB/s" and best.strategy == ""
    assert best.value == pytest.approx(377, abs=1.5)
    # two launches: the interval is their t-interval (wider than either launch's own CI)
    assert 90 < best.pct_of_ceiling <= 100 and 0.01 < best.precision < 0.03
    assert best.latency_bytes == 1 and best.latency_us == pytest.approx(20.3, abs=0.1)  # no 8 B: the nearest, said
    line = _flat(text)
    assert re.search(r"NVLink pair \(bw at 64M, ceiling p2p-ipc \d+ GB/s\): only openmpi-5\.0\.7-ob1 \(window=64\) "
                     r"377 GB/s \(\+-[\d.]+ %, 9\d\.\d % of ceiling\), latency 20\.3 us \(\+-[\d.]+ %\) at 1 B \(8 B not "
                     r"measured\)", line)


def test_staged_library_is_answered_through_its_strategy_and_named(h200):
    """The system Open MPI is not CUDA-aware: its device figure on one GPU comes from staged-pinned, said so; one
    launch each: the 322x is shown as figures, not claimed (launches, not samples, are the replicates)."""
    _st, a, text, _html = h200
    (same,) = [p for p in a.paths if p.path == "same GPU"]
    assert same.bytes == 64 * M and same.ceiling == "d2d"
    assert [(f.library, f.strategy) for f in same.figures] == [(OB1_W64, ""), ("openmpi-4.1.6", "staged-pinned")]
    assert (same.fastest, same.slowest, same.ratio) == (None, None, None)
    assert same.figures[0].value / same.figures[1].value == pytest.approx(322, rel=0.01)
    assert "openmpi-4.1.6 (not CUDA-aware: staged-pinned) 5.64 GB/s" in _flat(text)
    assert "one launch: no claim across launches" in _flat(text).split("same GPU")[1].split("pinned host")[0]


def test_a_strategy_is_never_compared_with_its_library_at_another_window(h200):
    """These records measured gmb's strategies with a window of 16 messages and the library's own path with 64: two
    configurations, so no strategy is said to beat (or lose to) the library; each strategy figure stands alone, under
    the configuration that measured it."""
    _st, a, text, _html = h200
    assert a.strategies and not [s for s in a.strategies if s.beats or s.ratio is not None]
    (pinned,) = [s for s in a.strategies if s.path == "pinned host -> device"]
    assert (pinned.library, pinned.strategy, pinned.bytes) == (OB1_W16, "pipelined-gpu C=4", 64 * M)
    assert pinned.strategy_GBps == pytest.approx(53.73, abs=0.01) and pinned.direct_GBps is None
    assert ("pinned host -> device, openmpi-5.0.7-ob1 (window=16): pipelined-gpu C=4 moves 53.7 GB/s (+-5.3 %) at 64M "
            "(its own path not measured)") in _flat(text)
    # the library's own path at 64 messages per window is answer 1's, beside no strategy figure
    (own,) = [p for p in a.paths if p.path == "pinned host -> device" and p.benchmark == "bw"]
    assert [f.library for f in own.figures] == [OB1_W64] and own.figures[0].value == pytest.approx(2.614, abs=0.01)


def test_collectives_put_nccl_next_to_mpi(h200):
    _st, a, text, html = h200
    (ar,) = [c for c in a.collectives if c.operation == "allreduce" and c.ranks == 2]
    assert ar.bytes == 64 * M and ar.memory == "device"
    assert [f.library for f in ar.figures] == [NCCL, OB1]
    # one launch each (and NCCL of 1 sample, ob1 of 5: no interval): no claim, and the answer says why instead of
    # calling a 771x difference "within precision"
    assert (ar.fastest, ar.slowest, ar.ratio) == (None, None, None)
    assert ("allreduce, 2 ranks, device memory, at 64M: nccl 270 GB/s (no interval), openmpi-5.0.7-ob1 0.350 GB/s "
            "(no interval); one launch: no claim across launches") in _flat(text)
    # the 4-rank operations only ob1 measured share one line, which says there is no NCCL figure
    alone = [ln for ln in _flat(text).split("openmpi-5.0.7-ob1, 4 ranks")[1:]]
    assert len(alone) == 1 and "allgather" in alone[0] and "bcast" in alone[0] and "no NCCL figure" in alone[0]
    assert ("<td>allreduce, 2 ranks, device memory: bus bandwidth at 64M</td><td>one launch: no claim across launches "
            "(gmb run --repetitions 3 or more measures the launch-to-launch spread)</td><td>270 GB/s (no interval)</td>") in html


def test_missing_points_are_grouped_by_cause(h200):
    """Twelve failed ucx launches on device:device (bw and bibw, two paths, two repetitions) share one cause: one
    line; data that arrived wrong is said with its sizes."""
    _st, a, text, _html = h200
    (ucx,) = [m for m in a.missing if UCX_REASON in m.cause]
    assert ucx.launches == 12 and len(ucx.subjects) == 4
    assert {("openmpi-5.0.7-ucx", "bw", "NVLink pair"), ("openmpi-5.0.7-ucx", "bibw", "same GPU")} <= \
        {(s.library, s.benchmark, s.where) for s in ucx.subjects}
    # said once; shortened in the terminal, the library's own first error kept
    assert text.count("cuIpcOpenMemHandle") == 1
    assert "12 launches: launch failed: gmb-bench: FATAL" in _flat(text)
    assert "openmpi-5.0.7-ucx bibw pinned host -> device at 5 sizes (64K to 1M): wrong data received" in _flat(text)
    (nbc,) = [m for m in a.missing if m.subjects == [MissingSubject("openmpi-5.0.7-ob1", "nbc", "")]]
    assert nbc.launches == 3 and nbc.cause.startswith("not supported")


def test_text_is_for_a_person(h200):
    _st, _a, text, html = h200
    lines = text.splitlines()
    assert lines[0].startswith("== Answers (geometric means over launches; +-x %: 95 % interval") \
        and 10 <= len(lines) <= 45
    assert all(len(ln) <= 100 for ln in lines)
    for raw in ("True", "False", "None", "nan", "e+0", "e-0"):
        assert raw not in text and raw not in html.replace("None found", "")
    assert "Settings that mattered: not checked" in text


def test_html_fragment(h200):
    _st, _a, _text, html = h200
    assert html.startswith('<section id="answers"><h2>Answers</h2>') and html.rstrip().endswith("</section>")
    assert "geometric mean of the launch medians" in html and "no figure of one launch is said faster" in html
    assert 'id="answers-table" class="answers" data-paths="5"' in html and "pipelined-gpu C=4" in html
    # the first thing is the figure of paths by configuration: each cell the figure, its % of ceiling, the
    # fastest marked where the answers call it so
    assert html.index("<figure id='overview'>") < html.index('id="answers-table"')
    # these records are one launch each: the figure is shown, no configuration is marked fastest
    assert re.search(r"<th class='path'><b>same GPU</b><br>bw at 64M, ceiling d2d 1950 GB/s</th>.*?"
                     r"<span class='v'>1820 GB/s</span><br>93\.6 % of ceiling", html)
    assert "\u2605 fastest</b>" not in html
    # one row per question: a path's bandwidth and its latency apart, each with its size
    assert ("<td>NVLink pair: bandwidth (bw) at 64M</td><td>only openmpi-5.0.7-ob1 (window=64)</td>"
            "<td>377 GB/s (+-2.6 %)</td><td>97.3 %</td>") in html
    assert "<td>NVLink pair: latency at 1 B</td><td>only openmpi-5.0.7-ob1 (window=64)</td><td>20.3 us" in html
    assert "sizes measured on this path: 1 B to 64M" in html


def _bw(run_id, gbps, low, high, nbytes, send="device", recv="device", path="nvlink", bench="bw",
        strategy="direct", **extra):
    return {"schema": "gmb.record/1", "type": "result", "run_id": run_id, "benchmark": bench, "status": "ok",
            "bytes": nbytes, "memory": {"send": send, "recv": recv}, "strategy": strategy, "window": 64,
            "bandwidth_GBps": {**synth.stats(gbps), "median": gbps, "ci95_low": low, "ci95_high": high},
            "time_us": synth.stats(nbytes / gbps / 1e3 * 64), "validation": "passed",
            "buffer_allocation": "once-per-launch", "path": {"class": path, "link": path, "nominal_GBps": None},
            **extra}


def _lat(run_id, us, nbytes, path="nvlink"):
    return {"schema": "gmb.record/1", "type": "result", "run_id": run_id, "benchmark": "latency", "status": "ok",
            "bytes": nbytes, "memory": {"send": "device", "recv": "device"}, "strategy": "direct",
            "time_us": {**synth.stats(us), "median": us}, "path": {"class": path, "link": path, "nominal_GBps": None}}


# launch-to-launch factors: each launch of a synthetic store moves every figure by these (2 % noise, geometric mean 1);
# claims need
# launches, one launch makes none
LAUNCH_FACTORS = (1.0, 0.98, 1 / 0.98)


def _relaunched(record: dict, factor: float) -> dict:
    """The record as another launch measured it: bandwidths times ``factor``, times divided by it."""
    out = dict(record)
    for key, scale in (("bandwidth_GBps", factor), ("busbw_GBps", factor), ("time_us", 1 / factor)):
        if isinstance(record.get(key), dict):
            out[key] = {k: (v * scale if k in ("median", "ci95_low", "ci95_high", "p5", "p95", "min", "max", "mean")
                            and isinstance(v, (int, float)) else v) for k, v in record[key].items()}
    return out


def _store(tmp_path, per_lib: dict, launches: int = 1) -> Store:
    st = Store()
    for i, (lib, recs) in enumerate(per_lib.items()):
        for n, factor in enumerate(LAUNCH_FACTORS[:launches]):
            rid = f"r{i}-{n}"
            f = synth.write_jsonl(tmp_path / f"{i}-{n}.jsonl",
                                  [synth.context(rid, "bw", "Open MPI v5.0.7", cuda=True),
                                   *[{**_relaunched(r, factor), "run_id": rid} for r in recs]])
            st.ingest(f, library=lib, repetition=n + 1, launch_id=f"{lib}-{n}")
    return described(st)


def test_overlapping_configurations_are_not_called_fastest(tmp_path):
    st = _store(tmp_path, {"lib-a": [_bw("", 300.0, 290.0, 310.0, 64 * M), _lat("", 2.0, 8)],
                           "lib-b": [_bw("", 296.0, 280.0, 305.0, 64 * M), _lat("", 2.5, 8)]}, launches=3)
    (p,) = answers.answers(Results.load(st)).paths
    assert p.fastest is None and p.slowest is None and p.ratio is None
    assert no_ceiling_said(p) == "no ceiling measured at 64M" and p.figures[0].pct_of_ceiling is None
    assert "fastest" not in path_sentence(p)
    text = _flat(render_text.answers_text(answers.answers(Results.load(st))))
    # 3 launches 2 % apart: 1.35 % is not proven, and the answer gives the ratio's interval
    assert "not proven different: ratio 1.01x [0.968, 1.06] (95 %) includes 1" in text and "x the bandwidth" not in text
    assert "8 B latency 2.00 us" in text and "no ceiling measured at 64M" in text
    # a third configuration clearly below both: the slowest is named, the best is still not called fastest
    (tmp_path / "b").mkdir()
    st = _store(tmp_path / "b", {"lib-a": [_bw("", 300.0, 290.0, 310.0, 64 * M)],
                                 "lib-b": [_bw("", 296.0, 280.0, 305.0, 64 * M)],
                                 "lib-c": [_bw("", 100.0, 95.0, 105.0, 64 * M)]}, launches=3)
    (p,) = answers.answers(Results.load(st)).paths
    assert p.fastest is None and p.slowest == "lib-c" and p.ratio.value == pytest.approx(3.0) and p.ratio.low > 1
    text = _flat(render_text.answers_text(answers.answers(Results.load(st))))
    assert "best lib-a 300 GB/s" in text and "not proven apart from lib-b" in text and "slowest lib-c" in text
    assert "lib-a moves 3.00x [2.87, 3.14] the bandwidth of lib-c" in text


def test_size_is_the_largest_every_configuration_measured_preferring_a_ceiling(tmp_path):
    """lib-a measured 1M, 16M, 64M; lib-b 1M and 16M; a ceiling at 1M only: the answer is at 1M (both measured
    it, a ceiling was measured there), with % of that ceiling, and clearly apart: fastest."""
    peak = {"schema": "gmb.record/1", "type": "result", "benchmark": "peaks", "status": "ok", "bytes": M,
            "operation": "p2p-ipc", "bandwidth_GBps": {**synth.stats(160.0), "median": 160.0},
            "path": {"class": "nvlink", "link": "nvlink", "nominal_GBps": None}, "metrics": {"pair": "0-1"}}
    st = _store(tmp_path, {"lib-a": [_bw("", 150.0, 149.0, 151.0, M), _bw("", 300.0, 299.0, 301.0, 16 * M),
                                     _bw("", 380.0, 379.0, 381.0, 64 * M), peak],
                           "lib-b": [_bw("", 100.0, 99.0, 101.0, M), _bw("", 200.0, 199.0, 201.0, 16 * M)]},
                launches=3)
    (p,) = answers.answers(Results.load(st)).paths
    assert p.bytes == M and p.ceiling == "p2p-ipc" and p.fastest == "lib-a" and p.slowest == "lib-b"
    assert p.figures[0].pct_of_ceiling == pytest.approx(93.75) and p.ratio.value == pytest.approx(1.5)
    # three launches 2 % apart: +-5.1 % (t(0.975, 2) 4.30 x 2 % / sqrt 3)
    assert "fastest lib-a 150 GB/s (+-5.1 %, 93.7 % of ceiling)" in _flat(render_text.answers_text(answers.answers(Results.load(st))))


def test_managed_placements_are_answered_by_time(tmp_path):
    def um(placement, us, nbytes):
        return {"schema": "gmb.record/1", "type": "result", "benchmark": "um", "status": "ok", "bytes": nbytes,
                "memory": {"send": f"managed:{placement}", "recv": f"managed:{placement}"}, "strategy": "direct",
                "placement": {"send": placement, "recv": placement},
                "time_us": {**synth.stats(us, spread=0.01), "median": us},
                "path": {"class": "nvlink", "link": "nvlink", "nominal_GBps": None}}
    st = _store(tmp_path, {"lib-a": [um("device", 30.0, 8), um("device", 400.0, M), um("host", 900.0, M)],
                           "lib-b": [um("device", 31.0, 8), um("device", 800.0, M)]}, launches=3)
    a = answers.answers(Results.load(st))
    (dev,) = [p for p in a.paths if p.memory == "managed:device:managed:device"]
    assert dev.path == "managed device -> device (NVLink pair)" and dev.bytes == M and dev.benchmark == "um"
    assert [f.library for f in dev.figures] == ["lib-a", "lib-b"] and dev.figures[0].unit == "us"
    assert dev.fastest == "lib-a" and dev.ratio.value == pytest.approx(2.0) and dev.ceiling is None
    assert dev.figures[0].latency_bytes == 8 and dev.figures[0].latency_us == pytest.approx(30.0)
    text = _flat(render_text.answers_text(answers.answers(Results.load(st))))
    assert "lib-b takes 2.00x [1.91, 2.09] the time of lib-a" in text and "a time figure: no ceiling applies" in text
    assert any(p.path == "managed host -> host (NVLink pair)" for p in a.paths)


def test_settings_that_mattered(tmp_path):
    st = _store(tmp_path, {"lib-a": [_bw("", 300.0, 290.0, 310.0, 64 * M)]})
    st.set_meta("settings_that_matter", json.dumps([
        {"library": "ompi-ucx", "as_configured": "aware", "tried": ["without UCX_MEMTYPE_CACHE=n"],
         "findings": [{"setting": "UCX_MEMTYPE_CACHE=n", "as_configured": "aware", "changed": "aware",
                       "kind": "reallocation",
                       "effect": "decides whether device buffers freed and allocated again move correctly: without "
                                 "it the check failed, with it passed"}]},
        {"library": "ompi-ob1", "as_configured": "aware", "tried": ["without --mca pml ob1"], "findings": []}]))
    a = answers.answers(Results.load(st))
    assert [(s.library, s.setting) for s in a.settings] == [("ompi-ucx", "UCX_MEMTYPE_CACHE=n")]
    assert a.settings_note == "no setting changed the doctor's answer for ompi-ob1"
    text = render_text.answers_text(answers.answers(Results.load(st)))
    assert "ompi-ucx: UCX_MEMTYPE_CACHE=n: decides whether device buffers" in _flat(text)
    st.set_meta("settings_that_matter", json.dumps([{"library": "ompi-ob1", "as_configured": "aware",
                                                     "tried": [], "findings": []}]))
    assert "Settings that mattered: none found: no setting changed the doctor's answer (ompi-ob1)" in \
        render_text.answers_text(answers.answers(Results.load(st)))


def test_empty_store_says_why_in_one_line():
    text = render_text.answers_text(answers.answers(Results.load(Store())))
    assert text == "No answers: this store holds no results (nothing was launched or ingested)."
    html = render_html.answers_html(answers.answers(Results.load(Store())))
    assert html.startswith('<section id="answers"><h2>Answers</h2>') and "holds no results" in html
    assert "<table" not in html


def test_only_failed_launches_say_why(tmp_path):
    st = Store()
    st.record_launch(launch_id="b1.x.bw.r1", library="x", benchmark="bw", repetition=1, memory="host:device",
                     strategy="direct", ranks=2, planned_path="host-device", status="timeout", reason="no progress")
    lines = render_text.answers_text(answers.answers(Results.load(st))).splitlines()
    assert lines[0].startswith("No answers: none of the 1 launches")
    assert lines[1:] == ["  x bw pageable host -> device, 1 launch: timed out: no progress"]


def test_html_escapes_every_value(tmp_path):
    evil = "ompi<b>&"
    st = _store(tmp_path, {evil: [_bw("", 300.0, 290.0, 310.0, 64 * M)]})
    html = render_html.answers_html(answers.answers(Results.load(st)))
    assert "ompi&lt;b&gt;&amp;" in html and "ompi<b>" not in html
