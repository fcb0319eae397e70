# SPDX-License-Identifier: BSD-3-Clause
import csv
import json
import re

import pytest
from conftest import DATA, described
import synth

from gmb.report import compare, compare_words, tolerances
from gmb.results import peaks
from gmb.results import records
from gmb.report import tables
from gmb.results.model import Results
from gmb.results.points import combine
from gmb.results.store import Store, open_results
from gmb.report import cells, render_csv, render_text


REAL = DATA / "h200-x2"  # records of the 2 x H200 NVLink machine (peaks at 1 MiB and 64 MiB), trimmed
M = 1 << 20


def _real(*names, library="ompi-ob1"):
    st = Store()
    for n in ("peaks", *names):
        st.ingest(REAL / f"{n}.jsonl", library=library, validate=records.validator() is not None)
    return described(st)


def _peak(run_id, op, path, nbytes, gbps, pair=0):
    return {"schema": "gmb.record/1", "type": "result", "run_id": run_id, "benchmark": "peaks", "status": "ok",
            "bytes": nbytes, "operation": op,
            "bandwidth_GBps": {**synth.stats(gbps, spread=0.01), "median": gbps},  # the median exactly
            "path": {"class": path, "link": path, "nominal_GBps": None}, "metrics": {"pair": f"pair{pair}"}}


def _synthetic(tmp_path, peaks, mpi):
    """A store from synthetic peaks records [(op, path, bytes, GB/s)] and MPI records."""
    f = synth.write_jsonl(tmp_path / "s.jsonl", [synth.context("s", "bw", "Open MPI v5.0.7", cuda=True),
                                                 *[_peak("s", *p, pair=i) for i, p in enumerate(peaks)], *mpi])
    st = Store()
    st.ingest(f, validate=records.validator() is not None)
    return described(st)


def _rows(t):
    col = {c: i for i, c in enumerate(t.columns)}
    return col, {(r[col["benchmark"]], r[col["memory"]], r[col["strategy"]], r[col["path"]]): r for r in t.rows}


def test_ceilings_keyed_by_operation_path_and_size():
    c = peaks.ceilings(Results.load(_real()))
    assert c.measured[("p2p-ipc", "nvlink", M)] == pytest.approx(162.7, abs=0.1)
    assert c.measured[("p2p-ipc", "nvlink", 64 * M)] == pytest.approx(383.76, abs=0.1)
    assert c.measured[("d2d", "same-gpu", M)] == pytest.approx(371.1, abs=0.1)  # median of the two GPUs
    assert c.measured[("d2d", "same-gpu", 64 * M)] == pytest.approx(1926.2, abs=0.1)
    assert c.measured[("host-copy", "host", 64 * M)] == pytest.approx(43.89, abs=0.01)
    assert {k[2] for k in c.measured} == {M, 64 * M}
    # the largest of the copies measured at that size bounds it: p2p-ce 383.9 GB/s against p2p-ipc's 383.8
    assert c.at("bw", "nvlink", "device", "device", 64 * M) == ("p2p-ce", c.measured[("p2p-ce", "nvlink", 64 * M)])
    # no ceiling at another size, however close: nothing is compared across sizes
    assert c.at("bw", "nvlink", "device", "device", 16 * M) == (None, None)
    assert c.at("bw", "host-device", "pinned", "device", M)[0] == "h2d-pinned"
    assert c.at("bw", "host-device", "host", "device", M)[0] == "h2d-pageable"
    assert c.at("bw", "host-device", "device", "pinned", M)[0] == "d2h-pinned"
    assert c.at("bw", "inter-node", "host", "host", M) == (None, None)
    assert c.sizes("bw", "same-gpu", "device", "device") == [M, 64 * M]


def test_ceiling_of_another_path_class_is_never_used(tmp_path):
    """Two GPU pairs, one over NVLink and one over PCIe: each MPI path gets its own pair's ceiling (not a median
    pooled over both), and a path class without a ceiling gets none (not a neighbour's)."""
    st = _synthetic(tmp_path, [("p2p-ipc", "nvlink", 64 * M, 380.0), ("p2p-ipc", "nvlink", 64 * M, 382.0),
                               ("p2p-ipc", "pcie", 64 * M, 50.0), ("host-copy", "host", 64 * M, 40.0)], [])
    c = peaks.ceilings(Results.load(st))
    assert c.at("bw", "nvlink", "device", "device", 64 * M) == ("p2p-ipc", pytest.approx(381.0))
    assert c.at("bw", "pcie", "device", "device", 64 * M) == ("p2p-ipc", pytest.approx(50.0))
    assert c.at("bw", "peer", "device", "device", 64 * M) == (None, None)
    assert c.at("bw", "cross-socket", "host", "host", 64 * M) == (None, None)


@pytest.mark.parametrize("path,mem,op,factor", [
    ("nvlink", "device:device", "p2p-ipc", 2), ("pcie", "device:device", "p2p-ipc", 2),
    ("peer", "device:device", "p2p-ipc", 2), ("same-gpu", "device:device", "d2d", 1),
    ("host", "host:host", "host-copy", 1), ("cross-socket", "host:host", "host-copy-remote", 1)])
def test_bibw_ceiling_doubles_only_on_paths_with_separate_resources_per_direction(tmp_path, path, mem, op, factor):
    st = _synthetic(tmp_path, [(op, path, M, 10.0)], [])
    c = peaks.ceilings(Results.load(st))
    send, _, recv = mem.partition(":")
    assert c.at("bibw", path, send, recv, M) == (f"{op} x{factor}", pytest.approx(10.0 * factor))
    assert c.at("bw", path, send, recv, M) == (op, pytest.approx(10.0))
    # a measured bidirectional ceiling wins over either factor
    (tmp_path / "b").mkdir()
    c = peaks.ceilings(Results.load(_synthetic(tmp_path / "b", [(op, path, M, 10.0), (op + "-bidir", path, M, 13.0)], [])))
    assert c.at("bibw", path, send, recv, M) == (f"{op}-bidir", pytest.approx(13.0))


def test_strategy_aware_ceilings_on_real_records():
    """staged-pageable, staged-pinned and pipelined device:device go through host memory: the slower of the
    d2h and h2d copies bounds them; pipelined-gpu: the host side's copy (both sides on host:host)."""
    c = peaks.ceilings(Results.load(_real()))
    big = 64 * M
    d2h_pin, h2d_pin = c.measured[("d2h-pinned", "host-device", big)], c.measured[("h2d-pinned", "host-device", big)]
    d2h_pag, h2d_pag = c.measured[("d2h-pageable", "host-device", big)], c.measured[("h2d-pageable", "host-device", big)]
    assert c.at("bw", "nvlink", "device", "device", big, "staged-pinned") == \
        ("min(d2h-pinned, h2d-pinned)", min(d2h_pin, h2d_pin))
    assert c.at("bw", "nvlink", "device", "device", big, "staged-pageable") == \
        ("min(d2h-pageable, h2d-pageable)", min(d2h_pag, h2d_pag))
    assert c.at("bw", "same-gpu", "device", "device", big, "pipelined") == \
        ("min(d2h-pinned, h2d-pinned)", min(d2h_pin, h2d_pin))
    assert c.at("bibw", "nvlink", "device", "device", big, "staged-pinned") == \
        ("min(d2h-pinned x2, h2d-pinned x2)", 2 * min(d2h_pin, h2d_pin))
    assert c.at("bw", "host-device", "host", "device", big, "pipelined-gpu") == \
        ("h2d-pageable", h2d_pag)
    assert c.at("bw", "host-device", "device", "pinned", big, "pipelined-gpu") == \
        ("d2h-pinned", d2h_pin)
    assert c.at("bw", "host", "pinned", "pinned", big, "pipelined-gpu") == \
        ("min(h2d-pinned, d2h-pinned)", min(d2h_pin, h2d_pin))
    # direct and pipelined-gpu on device:device: the MPI path's own ceiling
    assert c.at("bw", "nvlink", "device", "device", big, "pipelined-gpu")[0] == "p2p-ce"
    assert c.at("bw", "nvlink", "device", "device", big, "direct")[0] == "p2p-ce"

    st = _real("strat-bw-staged-pinned", "strat-bw-staged-pageable", "strat-bw-pipelined",
               "hd-bw-host-device-pipelined-gpu", "hh-bw-pinned-pipelined-gpu")
    col, rows = _rows(tables.fraction_of_peak(Results.load(st)))
    hh = rows[("bw", "pinned:pinned", "pipelined-gpu C=4", "host")]  # the chunk count is part of the point
    assert hh[col["ceiling"]] == "min(h2d-pinned, d2h-pinned)" and hh[col["at size"]] == "64M"
    assert 90 < hh[col["% of ceiling"]] <= 100  # 52.6 GB/s relayed through the GPUs, copies at 55.1 GB/s
    hd = rows[("bw", "host:device", "pipelined-gpu C=4", "host-device")]
    assert hd[col["ceiling"]] == "h2d-pageable" and 40 < hd[col["% of ceiling"]] < 70
    pageable = rows[("bw", "device:device", "staged-pageable", "nvlink")]
    assert pageable[col["ceiling"]] == "min(d2h-pageable, h2d-pageable)"
    for r in rows.values():
        assert r[col["% of ceiling"]] != "" and r[col["% of ceiling"]] <= 100, r


def test_chunk_counts_are_separate_points_on_real_records():
    """pipelined-gpu pinned->device run with 4 and with 16 chunks in one launch (a chunk sweep): two rows, each
    against the pinned host->device ceiling, not one point pooling both medians."""
    st = _real("hd-bw-pinned-device-pipelined-gpu")
    pts = [p for p in combine(Results.load(st).ok("bw")) if p.bytes == 64 * M]
    assert sorted((p.chunks, p.strategy_label) for p in pts) == [(4, "pipelined-gpu C=4"), (16, "pipelined-gpu C=16")]
    assert {p.chunks: round(p.median, 1) for p in pts} == {4: 53.7, 16: 51.0}
    col, rows = _rows(tables.fraction_of_peak(Results.load(st)))
    four = rows[("bw", "pinned:device", "pipelined-gpu C=4", "host-device")]
    sixteen = rows[("bw", "pinned:device", "pipelined-gpu C=16", "host-device")]
    assert four[col["ceiling"]] == sixteen[col["ceiling"]] == "h2d-pinned"
    assert four[col["peak MPI GB/s"]] == pytest.approx(53.734, abs=1e-3)
    assert sixteen[col["peak MPI GB/s"]] == pytest.approx(51.036, abs=1e-3)
    assert 90 < four[col["% of ceiling"]] <= 100 and sixteen[col["% of ceiling"]] < four[col["% of ceiling"]]


def test_fraction_of_peak_flags_rows_whose_launches_died():
    """A launch that crashed after some sizes leaves a row with a partial peak: the check column says how many
    launches of that row failed or timed out; rows of other paths are not flagged."""
    st = _real("bw-ob1-nvlink", "bw-ob1-samegpu")
    for rep, status in ((1, "failed"), (2, "timeout")):
        st.record_launch(launch_id=f"b3.bw.r{rep}", library="ompi-ob1", benchmark="bw", repetition=rep,
                         memory="device:device", strategy="direct", ranks=2, planned_path="nvlink", status=status,
                         reason="MPI_Waitall failed")
    col, rows = _rows(tables.fraction_of_peak(Results.load(st)))
    assert rows[("bw", "device:device", "direct", "nvlink")][col["check"]] == \
        "2 launch(es) failed/timeout: sizes after the failure missing (see Not measured)"
    assert rows[("bw", "device:device", "direct", "same-gpu")][col["check"]] == "nothing flagged"


def test_fraction_of_peak_compares_at_the_ceilings_size_on_real_records():
    """ob1 on the 2 x H200 machine: bw device:device on one GPU peaks at 16 MiB (1905 GB/s), where no ceiling was
    measured; the table takes 64 MiB, where d2d was measured (1926 GB/s), instead of comparing with a median pooled
    over 1 MiB (cache-sized, 371 GB/s) and 64 MiB copies (that comparison gave 165 %)."""
    st = _real("bw-ob1-nvlink", "bw-ob1-samegpu", "bibw-ob1-nvlink", "bibw-ob1-samegpu")
    t = tables.fraction_of_peak(Results.load(st))
    col, rows = _rows(t)
    same = rows[("bw", "device:device", "direct", "same-gpu")]
    assert same[col["at size"]] == "64M" and same[col["peak MPI GB/s"]] == pytest.approx(1816.489, abs=1e-3)
    assert same[col["ceiling"]] == "d2d" and same[col["ceiling GB/s"]] == pytest.approx(1926.2, abs=0.01)
    assert same[col["% of ceiling"]] == pytest.approx(94.3, abs=0.05)
    best = max(p.median for p in combine(Results.load(st).ok("bw")) if p.path_class == "same-gpu")
    assert best > same[col["peak MPI GB/s"]]  # the 16 MiB figure is not the one compared
    nv = rows[("bw", "device:device", "direct", "nvlink")]
    assert (nv[col["at size"]], nv[col["ceiling"]], nv[col["% of ceiling"]]) == ("64M", "p2p-ce", 98.0)
    assert nv[col["% of nominal"]] == pytest.approx(78.7, abs=0.05)
    bibw_nv = rows[("bibw", "device:device", "direct", "nvlink")]
    assert bibw_nv[col["ceiling"]] == "p2p-ce x2" and bibw_nv[col["% of ceiling"]] == pytest.approx(90.0, abs=0.05)
    bibw_same = rows[("bibw", "device:device", "direct", "same-gpu")]  # one memory for both directions: x1
    assert bibw_same[col["ceiling"]] == "d2d x1" and bibw_same[col["% of ceiling"]] == pytest.approx(82.8, abs=0.05)
    assert all(r[col["% of ceiling"]] <= 105 for r in t.rows)
    # nothing to flag in any row: no check column repeating "nothing flagged", the note says so
    assert "check" not in col and "check (nothing flagged)" in t.note
    ct = tables.ceilings_table(Results.load(st))
    assert ["d2d", "same-gpu", "1M", 371.11] in ct.rows and ["d2d", "same-gpu", "64M", 1926.2] in ct.rows


def test_fraction_of_peak_without_a_ceiling_at_the_sizes_measured(tmp_path):
    """A library measured at sizes where no ceiling was measured: the row says so, with no percentage, and the
    peak is the best over the validated sizes; a path with no ceiling at all says that."""
    mpi = (synth.pt2pt_results("s", "bw", [4 * M, 8 * M], "device", "device", "nvlink")
           + synth.pt2pt_results("s", "bw", [M], "device", "device", "pcie")
           + synth.pt2pt_results("s", "bw", [M], "host", "host", "host"))  # one row with a ceiling
    st = _synthetic(tmp_path, [("p2p-ipc", "nvlink", M, 160.0), ("p2p-ipc", "nvlink", 64 * M, 380.0),
                               ("host-copy", "host", M, 40.0)], mpi)
    col, rows = _rows(tables.fraction_of_peak(Results.load(st)))
    nv = rows[("bw", "device:device", "direct", "nvlink")]
    # no bare empty cell: the cell says why there is no percentage
    assert nv[col["% of ceiling"]] == nv[col["ceiling GB/s"]] == "no ceiling at 8M"
    assert isinstance(nv[col["% of ceiling"]], cells.Absent)
    assert nv[col["ceiling"]] == "none at the sizes measured (measured at 1M, 64M)" and nv[col["at size"]] == "8M"
    pcie = rows[("bw", "device:device", "direct", "pcie")]
    assert pcie[col["% of ceiling"]] == "no ceiling at 1M" and pcie[col["ceiling"]] == "none measured for this path"
    assert isinstance(rows[("bw", "host:host", "direct", "host")][col["% of ceiling"]], float)


def test_fraction_of_peak_skips_sizes_that_failed_validation_at_ceiling_sizes(tmp_path):
    """The 64 MiB point delivered wrong data: the peak is taken at 1 MiB (the other size with a ceiling) and the
    row counts the failed size."""
    lines = (REAL / "bw-ob1-nvlink.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    for r in recs:
        if r.get("bytes") == 64 * M:
            r.update(status="failed", validation="failed", validation_error="rank 1: byte 7 differs")
    synth.write_jsonl(tmp_path / "bw.jsonl", recs)
    st = _real()
    st.ingest(tmp_path / "bw.jsonl", library="ompi-ob1")
    col, rows = _rows(tables.fraction_of_peak(Results.load(st)))
    nv = rows[("bw", "device:device", "direct", "nvlink")]
    assert nv[col["at size"]] == "1M" and nv[col["ceiling GB/s"]] == pytest.approx(162.7, abs=0.1)
    assert nv[col["sizes failed validation"]] == 1
    assert nv[col["% of ceiling"]] == pytest.approx(100 * nv[col["peak MPI GB/s"]] / 162.7, abs=0.1)


def test_mpi_above_its_ceiling_is_flagged(tmp_path):
    """host-copy at 1 MiB on the H200 machine was timed with thread creation (1.1 GB/s): an MPI host:host
    figure many times above it is not a result, the row says the ceiling is suspect."""
    st = _real()
    f = synth.write_jsonl(tmp_path / "hh.jsonl", [synth.context("h", "bw", "Open MPI v5.0.7"),
                                                  *synth.pt2pt_results("h", "bw", [M], "host", "host", "host")])
    st.ingest(f)
    col, rows = _rows(tables.fraction_of_peak(Results.load(st)))
    hh = rows[("bw", "host:host", "direct", "host")]
    assert hh[col["ceiling"]] == "host-copy" and hh[col["% of ceiling"]] > 105
    assert hh[col["check"]] == "ceiling suspect: MPI above it"


def test_a_points_figure_is_the_geometric_mean_of_its_launches_medians(store):
    pts = [p for p in combine(Results.load(store).ok("latency")) if p.library == "openmpi-5.0.7"
           and p.memory == "host:host" and p.bytes == 1024]
    assert len(pts) == 1
    p = pts[0]
    rows = store.results("latency", library="openmpi-5.0.7", memory="host:host", bytes=1024)
    meds = [json.loads(r["json"])["time_us"]["median"] for r in rows]
    assert p.reps == 3 and p.values == meds
    assert p.median == pytest.approx((meds[0] * meds[1] * meds[2]) ** (1 / 3)) and p.low < p.median < p.high


def test_fraction_of_peak_table_on_synthetic_records(store):
    """The synthetic fixture's ceilings (peaks at 256 MiB) were not measured at any size the libraries measured
    (up to 4 MiB): every row says so, and the peak is the best over all sizes."""
    t = tables.fraction_of_peak(Results.load(store))
    col = {c: i for i, c in enumerate(t.columns)}
    row = next(r for r in t.rows if r[0] == "openmpi-5.0.7" and r[1] == "bw" and r[2] == "device:device")
    best = max(p.median for p in combine(Results.load(store).ok("bw"))
               if p.library == "openmpi-5.0.7" and p.memory == "device:device")
    assert row[col["peak MPI GB/s"]] == pytest.approx(best, abs=1e-3)
    assert row[col["% of nominal"]] == pytest.approx(100 * best / 478.0, abs=0.1)
    assert row[col["path"]] == "nvlink"
    assert all(r[col["ceiling"]].startswith("none") for r in t.rows)
    # no row has a ceiling to compare with: the percentage columns are left out, not filled with one reason
    assert "% of ceiling" not in col and "ceiling GB/s" not in col
    assert "left out: % of ceiling; ceiling GB/s" in t.note


def test_csv_export_and_no_overwrite(store, tmp_path):
    written = render_csv.export_csv(tables.all_tables(Results.load(store)), tmp_path / "csv")
    names = {p.name for p in written}
    assert "fraction_of_peak.csv" in names
    with open(tmp_path / "csv" / "fraction_of_peak.csv") as f:
        rows = list(csv.reader(f))
    assert rows[0][0] == "library" and len(rows) > 5
    assert float(rows[1][6]) > 0
    before = (tmp_path / "csv" / "fraction_of_peak.csv").read_text()
    with pytest.raises(FileExistsError):
        render_csv.export_csv(tables.all_tables(Results.load(store)), tmp_path / "csv")
    assert (tmp_path / "csv" / "fraction_of_peak.csv").read_text() == before


def test_status_table_lists_unsupported(store):
    t = tables.status_table(Results.load(store))
    col = {c: i for i, c in enumerate(t.columns)}
    assert any(r[col["status"]] == "unsupported" and "CUDA-aware" in r[col["reason"]] for r in t.rows)


def _stores(ompi_dir, mpich_dir):
    a, b = Store(), Store()
    for f in ompi_dir.glob("*.jsonl"):
        a.ingest(f)
    for f in mpich_dir.glob("*.jsonl"):
        b.ingest(f)
    return a, b


def test_compare_ratios_and_significance(ompi_dir, mpich_dir):
    a, b = _stores(ompi_dir, mpich_dir)
    rows = compare.compare(Results.load(a), Results.load(b)).rows
    assert rows
    lat = next(r for r in rows if r.benchmark == "latency" and r.memory == "host:host" and r.bytes == 1)
    # mpich fixture is generated with scale 1.3: latency ~30 % higher, significant, worse
    assert lat.ratio == pytest.approx(1.3, rel=0.05)
    assert lat.significant and lat.worse_pct > 20
    assert lat.ratio_low <= lat.ratio <= lat.ratio_high
    bw = next(r for r in rows if r.benchmark == "bw" and r.memory == "host:host" and r.bytes == 1 << 20)
    assert bw.ratio < 1 and bw.worse_pct > 0  # bandwidth lower = worse
    same = compare.compare(Results.load(a), Results.load(a)).rows
    assert all(not r.significant and r.ratio == pytest.approx(1.0) for r in same)


def test_compare_tolerances(ompi_dir, mpich_dir, tmp_path):
    a, b = _stores(ompi_dir, mpich_dir)
    rows = compare.compare(Results.load(a), Results.load(b)).rows
    loose = tmp_path / "loose.toml"
    loose.write_text("[default]\nmax_regression_pct = 50\n")
    assert tolerances.check(rows, tolerances.load_tolerances(loose)) == []
    strict = tmp_path / "strict.toml"
    strict.write_text('[default]\nmax_regression_pct = 50\n[[rule]]\nbenchmark = "latency"\nmax_bytes = 64\n'
                      'max_regression_pct = 5\n')
    bad = tolerances.check(compare.compare(Results.load(a), Results.load(b)).rows, tolerances.load_tolerances(strict))
    assert bad and all(r.benchmark == "latency" and r.bytes <= 64 for r in bad)


def test_compare_compares_every_common_point_whichever_side_is_a(tmp_path, capsys):
    """Two launches each whose medians differ 100x at one size: every common point is compared all the same (its
    interval on log scale lies above 0), swapping A and B compares the same points with the same verdicts and
    reciprocal ratios, and the point of one side only is listed with why, not dropped without a word."""
    from gmb.cli import main

    recs = []
    for version, noisy, sizes in (("Open MPI v5.0.7", 8, [8, 64, 512]),
                                  ("MPICH Version: 4.0.2", 64, [8, 64, 512, 4096])):
        for launch, stall in enumerate((1.0, 100.0)):
            rid = f"{version.split()[0]}-{launch}"
            recs.append(synth.context(rid, "latency", version))
            for r in synth.pt2pt_results(rid, "latency", sizes, seed=launch):
                if r["bytes"] == noisy:
                    r["time_us"] = synth.stats(r["time_us"]["median"] * stall)
                recs.append(r)
    f = synth.write_jsonl(tmp_path / "both.jsonl", recs)
    shown = {}
    for a_lib, b_lib in (("openmpi-5.0.7", "mpich-4.0.2"), ("mpich-4.0.2", "openmpi-5.0.7")):
        comparison = compare.compare(*[Results.load(open_results(f))] * 2, a_lib, b_lib)
        shown[a_lib] = {r.bytes: r for r in comparison.rows}
        (lone,) = comparison.unmatched
        assert (lone.side, lone.point.bytes, lone.why) == ("B" if a_lib == "openmpi-5.0.7" else "A", 4096,
                                                           compare.ONLY_HERE)
        assert main(["compare", str(f), str(f), "--a-library", a_lib, "--b-library", b_lib]) == 0
        out, err = capsys.readouterr()
        a_points, b_points = (3, 4) if a_lib == "openmpi-5.0.7" else (4, 3)
        assert f"A = {a_lib}: {a_points} points: 3 matched" in err and f"B = {b_lib}: {b_points} points: 3 matched" \
            in err and "3 matched: " in err, err
        assert f"only in {lone.side}" in out
    assert set(shown["openmpi-5.0.7"]) == set(shown["mpich-4.0.2"]) == {8, 64, 512}
    for size, x in shown["openmpi-5.0.7"].items():
        y = shown["mpich-4.0.2"][size]
        assert x.ratio * y.ratio == pytest.approx(1.0) and x.p == pytest.approx(y.p) and x.verdict == y.verdict
        assert x.ratio_low * y.ratio_high == pytest.approx(1.0) and x.ratio_high * y.ratio_low == pytest.approx(1.0)
        assert 0 < x.ratio_low < x.ratio < x.ratio_high < float("inf")
        assert 0 < x.a.low < x.a.median < x.a.high and 0 < x.b.low < x.b.median < x.b.high


def test_compare_two_libraries_in_one_store(store):
    with pytest.raises(ValueError, match="several libraries"):
        compare.compare(Results.load(store), Results.load(store), "openmpi-5.0.7").rows
    rows = compare.compare(Results.load(store), Results.load(store), "openmpi-5.0.7", "mpich-4.0.2").rows
    assert any(r.significant for r in rows)


def test_compare_rows_show_path_and_ranks(store, tmp_path):
    """bw device:device 64M between two GPUs (nvlink) and on one GPU (same-gpu) are two points of the comparison,
    and so are allreduce 1M on 2 and on 4 ranks: their rows (table and CSV) say which is which."""
    st = _real("bw-ob1-nvlink", "bw-ob1-samegpu")
    rows = [r for r in compare.compare(Results.load(st), Results.load(st)).rows
            if r.benchmark == "bw" and r.bytes == 64 * M]
    assert sorted(r.path_class for r in rows) == ["nvlink", "same-gpu"]
    rows += [r for r in compare.compare(Results.load(store), Results.load(store), "openmpi-5.0.7", "mpich-4.0.2").rows
             if r.operation == "allreduce" and r.bytes == M]
    t = compare_words.as_table(rows, "a", "b")
    col = {c: i for i, c in enumerate(t.columns)}
    assert [(r[col["benchmark"]], r[col["path"]], r[col["ranks"]]) for r in t.rows] == [
        ("bw", "nvlink", "a pair"), ("bw", "same-gpu", "a pair"), ("coll", "", 2), ("coll", "", 4)]
    assert len({tuple(r[:col["A"]]) for r in t.rows}) == 4  # the key columns tell the rows apart
    text = render_text.table_text(t)
    assert "nvlink" in text and "same-gpu" in text
    (path,) = render_csv.export_csv([t], tmp_path / "csv")
    with open(path) as f:
        csv_rows = list(csv.DictReader(f))
    assert [(r["path"], r["ranks"], r["size"]) for r in csv_rows] == [
        ("nvlink", "a pair", "64M"), ("same-gpu", "a pair", "64M"), ("", "2", "1M"), ("", "4", "1M")]


def test_fresh_buffers_are_a_point_of_their_own(tmp_path):
    """Buffers allocated per size (--fresh-buffers) are a point of their own, labelled; validated records (checked
    outside the timing) count like unvalidated ones."""
    def bw(run_id, gbps, **fields):
        (r,) = synth.pt2pt_results(run_id, "bw", [M], "device", "device", "nvlink")
        r["bandwidth_GBps"] = {**synth.stats(gbps, spread=0.05), "median": gbps}
        return [synth.context(run_id, "bw", "Open MPI v5.0.7", cuda=True),
                {key: value for key, value in {**r, **fields}.items() if value is not None}]

    mpi = [*bw("b", 160.0, validation="passed", validated_iterations=2, buffer_allocation="once-per-launch"),
           *bw("c", 150.0, validation="off", buffer_allocation="once-per-launch"),
           *bw("d", 90.0, validation="passed", validated_iterations=2, buffer_allocation="fresh-per-size")]
    st = _synthetic(tmp_path, [("p2p-ipc", "nvlink", M, 200.0)], mpi)
    pts = {p.strategy_label: p for p in combine(Results.load(st).ok("bw"))}
    assert set(pts) == {"direct", "direct (fresh buffers)"}
    assert pts["direct"].reps == 2 and pts["direct"].median == pytest.approx((160.0 * 150.0) ** 0.5)
    assert pts["direct (fresh buffers)"].median == pytest.approx(90.0)
    col, rows = _rows(tables.fraction_of_peak(Results.load(st)))
    assert rows[("bw", "device:device", "direct (fresh buffers)", "nvlink")][col["peak MPI GB/s"]] == pytest.approx(90.0)


# ------------------------------------------------------------------ every cell says something; precision; flags
def test_a_column_without_any_value_is_left_out_and_named_in_the_note():
    t = cells.Table("t", ["a", "b", "c"], [[1, cells.Absent("not measured"), cells.Absent("x")],
                                            [2, cells.Absent("not measured"), "y"]], "A note.")
    assert t.columns == ["a", "c"] and t.rows == [[1, "x"], [2, "y"]]
    assert t.note == "A note. Columns without a value in any row, left out: b (not measured)."
    assert cells.Table("empty", ["a"], []).columns == ["a"]  # no rows: nothing to judge


@pytest.mark.parametrize("which", ["gpu_store", "host_store", "store"])
def test_no_table_cell_is_empty_and_numbers_stay_numbers(which, request):
    """GPU and host-only result sets alike: every cell of every table holds a value or says why it has none; the
    figures are numbers (right-aligned in the report, numbers in the CSV), not text."""
    st = request.getfixturevalue(which)
    for t in tables.all_tables(Results.load(st)):
        for r in t.rows:
            assert len(r) == len(t.columns), t.title
            for c, v in zip(t.columns, r):
                assert v is not None and str(v).strip() != "", (t.title, c, r)
                assert not isinstance(v, bool), (t.title, c, r)
    col, rows = _rows(tables.fraction_of_peak(Results.load(st)))
    for r in rows.values():
        assert isinstance(r[col["peak MPI GB/s"]], float) and isinstance(r[col["sizes failed validation"]], int)
        # a peak from a launch of fewer than 6 samples (these engines took 5 from 64 KiB) has no interval to show
        precision = r[col[cells.PRECISION_COLUMN]]
        assert isinstance(precision, float) or precision == "no interval: fewer than 6 samples"
        if "% of ceiling" in col:
            assert isinstance(r[col["% of ceiling"]], (float, cells.Absent))


def test_empty_cells_say_why_on_real_records(gpu_store):
    col, rows = _rows(tables.fraction_of_peak(Results.load(gpu_store)))
    same = next(r for k, r in rows.items() if k[3] == "same-gpu")  # one GPU: no link, no nominal rate
    assert same[col["% of nominal"]] == same[col["nominal GB/s"]] == "link rate unknown"
    t = tables.collectives_table(Results.load(gpu_store))
    c = {name: i for i, name in enumerate(t.columns)}
    gather = next(r for r in t.rows if r[c["operation"]] == "allgather")
    # labelled by their version string, Open MPI 5.0.7's pml ob1 and ucx records are two configurations, named by the
    # settings that differ
    (ob1,) = [name for name in c if name.startswith("openmpi-5.0.7 [") and "OMPI_MCA_pml=ob1" in name]
    assert gather[c["nccl-2.28.9"]] == "not measured" and isinstance(gather[c[ob1]], float)
    # these engines took 1-5 samples at the largest sizes: no row has an interval, so no library is called fastest and
    # the column is left out, saying why
    assert "fastest" not in c and "left out: fastest;" in t.note


def test_latency_table_says_which_size_was_not_measured(tmp_path):
    mpi = (synth.pt2pt_results("s", "latency", [1, 1024], "host", "host", "host")
           + synth.pt2pt_results("s", "latency", [1], "device", "device", "nvlink"))
    t = tables.latency_table(Results.load(_synthetic(tmp_path, [], mpi)))
    c = {name: i for i, name in enumerate(t.columns)}
    dev = next(r for r in t.rows if r[c["memory"]] == "device:device")
    assert dev[c["1K"]] == "not measured" and isinstance(dev[c["1 B"]], float)


# each launch of a synthetic point moves its figure by these (2 % launch noise, geometric mean 1 over three)
LAUNCH_FACTORS = (1.0, 0.98, 1 / 0.98)


def _coll_store(tmp_path, figures, op_figures=None, launches=2):
    """allreduce (and bcast) 1 MiB on 4 ranks, one library per (MPI version string, bus bandwidth median, interval
    half-width as a fraction, p95/p5), each measured in ``launches`` launches, the n-th launch's figures times
    LAUNCH_FACTORS[n] (launches that agree exactly would carry no claim)."""
    st = Store()
    for i, (version, gbps, half, spread) in enumerate(figures):
        for launch in range(launches):
            rid = f"c{i}-{launch}"
            recs = synth.coll_results(rid, ["allreduce", "bcast"], [M], 4, memory="device")
            for rec in recs:
                g = LAUNCH_FACTORS[launch] * (gbps if rec["operation"] == "allreduce"
                                              else (op_figures or {}).get(version, gbps))
                rec["busbw_GBps"] = {**rec["busbw_GBps"], "median": g, "ci95_low": g * (1 - half),
                                     "ci95_high": g * (1 + half), "p5": g / spread ** 0.5, "p95": g * spread ** 0.5,
                                     "min": g / spread, "max": g * spread}
            st.ingest(synth.write_jsonl(tmp_path / f"{rid}.jsonl",
                                        [synth.context(rid, "coll", version, world_size=4, cuda=True), *recs]))
    return st


def test_collectives_call_a_library_fastest_only_when_the_intervals_are_apart(tmp_path):
    """allreduce: 100 and 102 GB/s over 2 launches 2 % apart: not proven apart, no fastest and no ratio (a 1.0x ratio
    is not a win). bcast: 100 against 300 GB/s: mpich is the fastest, 3x."""
    st = _coll_store(tmp_path, [("Open MPI v5.0.7", 100.0, 0.05, 2), ("MPICH Version: 4.0.2", 102.0, 0.05, 2)],
                     {"MPICH Version: 4.0.2": 300.0})
    t = tables.collectives_table(Results.load(st))
    c = {name: i for i, name in enumerate(t.columns)}
    rows = {r[c["operation"]]: r for r in t.rows}
    assert rows["allreduce"][c["fastest"]] == "not proven apart"
    assert rows["allreduce"][c["fastest / slowest"]] == "not proven different: ratio 1.02x [0.959, 1.08] (95 %) includes 1"
    assert rows["bcast"][c["fastest"]] == "mpich-4.0.2"
    assert re.fullmatch(r"3\.00x \[2\.\d\d, 3\.\d\d\]", rows["bcast"][c["fastest / slowest"]])  # with its interval
    # two launches 2 % apart at the series' one size: their own spread, t(0.975, 1) = 12.7
    assert rows["allreduce"][c[f"{cells.PRECISION_COLUMN}, widest"]] == 13.7
    assert "geometric mean of the launch medians" in t.note
    # from one launch each, no claim: launches, not samples, are the replicates
    (tmp_path / "one").mkdir()
    t = tables.collectives_table(Results.load(_coll_store(tmp_path / "one", [("Open MPI v5.0.7", 100.0, 0.05, 2),
                                                                ("MPICH Version: 4.0.2", 300.0, 0.05, 2)], launches=1)))
    c = {name: i for i, name in enumerate(t.columns)}
    assert "fastest" not in c and "fastest (not proven apart)" in t.note
    # only overlapping rows: the columns would repeat one reason, so they are left out and the note says why
    (tmp_path / "o").mkdir()
    t = tables.collectives_table(Results.load(_coll_store(tmp_path / "o", [("Open MPI v5.0.7", 100.0, 0.05, 2),
                                                              ("MPICH Version: 4.0.2", 101.0, 0.05, 2)])))
    assert "fastest" not in t.columns and "fastest (not proven apart)" in t.note


def test_collectives_fastest_of_three_needs_to_be_apart_from_each_other(tmp_path):
    """300 and 290 GB/s (+-5 %) overlap, both far above 100: the ratio to the slowest is significant, but which of
    the two is the fastest is not."""
    st = _coll_store(tmp_path, [("Open MPI v5.0.7", 300.0, 0.05, 2), ("MPICH Version: 4.0.2", 290.0, 0.05, 2),
                                ("MVAPICH2 Version 2.3.7", 100.0, 0.05, 2)])
    t = tables.collectives_table(Results.load(st))
    c = {name: i for i, name in enumerate(t.columns)}
    row = next(r for r in t.rows if r[c["operation"]] == "allreduce")
    assert row[c["fastest"]] == "openmpi-5.0.7 or mpich-4.0.2 (not proven apart)"
    assert row[c["fastest / slowest"]].startswith("3.00x [")


def test_collectives_flag_noisy_points(tmp_path):
    st = _coll_store(tmp_path, [("Open MPI v5.0.7", 100.0, 0.05, 16), ("MPICH Version: 4.0.2", 300.0, 0.05, 2)])
    t = tables.collectives_table(Results.load(st))
    c = {name: i for i, name in enumerate(t.columns)}
    row = next(r for r in t.rows if r[c["operation"]] == "allreduce")
    assert row[c["check"]] == "noisy (openmpi-5.0.7): p95/p5 16x"


def test_fraction_of_peak_shows_precision_cap_and_noise(tmp_path):
    """A point whose adaptive launch stopped at its iteration cap, with samples over an order of magnitude
    (p95/p5 >= 10): its row shows its precision and both flags; a well-behaved row shows its precision only."""
    (capped,) = synth.pt2pt_results("s", "bw", [M], "device", "device", "nvlink")
    capped["precision"] = {"target": 0.01, "achieved": 0.04, "stopped": "iteration cap", "max_seconds": 1.0}
    bw = capped["bandwidth_GBps"]
    capped["bandwidth_GBps"] = {**bw, "p5": bw["median"] / 4, "p95": bw["median"] * 3}
    (lat,) = synth.pt2pt_results("s", "latency", [1024], "host", "host", "host")
    lat["precision"] = {"target": 0.01, "achieved": 0.02, "stopped": "time cap", "max_seconds": 1.0}
    mpi = [capped, lat, *synth.pt2pt_results("s", "bw", [M], "host", "host", "host")]
    st = _synthetic(tmp_path, [("p2p-ipc", "nvlink", M, 400.0), ("host-copy", "host", M, 40.0)], mpi)
    col, rows = _rows(tables.fraction_of_peak(Results.load(st)))
    (p,) = [p for p in combine(Results.load(st).ok("bw")) if p.path_class == "nvlink"]
    nv = rows[("bw", "device:device", "direct", "nvlink")]
    assert nv[col[cells.PRECISION_COLUMN]] == round(100 * p.precision, 1) > 0
    assert nv[col["check"]] == "cap reached; noisy: p95/p5 12x"
    assert rows[("bw", "host:host", "direct", "host")][col["check"]] == "nothing flagged"
    assert "with one launch it is that launch's own interval of the median" in tables.fraction_of_peak(Results.load(st)).note
    t = tables.latency_table(Results.load(st))
    c = {name: i for i, name in enumerate(t.columns)}
    assert t.rows[0][c["check"]] == "cap reached at 1K" and isinstance(t.rows[0][c[f"{cells.PRECISION_COLUMN}, "
                                                                                    "widest"]], float)


def test_status_table_groups_rows_of_one_reason(store):
    """Twelve launches that died of the same crash are one row with their count and what they cover, not twelve
    rows repeating the reason; so are the planner's skips and the result points of one reason."""
    for i in range(12):
        store.record_launch(launch_id=f"l{i}", library=("ompi-ucx", "ompi-ob1")[i % 2], benchmark="bw",
                            repetition=i // 2, memory="device:device", strategy="direct", ranks=2,
                            planned_path="nvlink", status="failed", reason="UCX cuda_ipc: signal 11")
    store.record_launch(launch_id="t0", library="ompi-ob1", benchmark="nbc", repetition=0, memory="", strategy=None,
                        ranks=2, planned_path=None, status="timeout", reason=None)
    for what in ("bw host:host", "latency host:host"):
        store.record_skip("c", "nccl", what, "NCCL moves device memory only (device:device)")
    t = tables.status_table(Results.load(store))
    c = {name: i for i, name in enumerate(t.columns)}
    rows = {(r[c["status"]], r[c["reason"]]): r for r in t.rows}
    assert len(t.rows) == len(rows)  # one row per status and reason
    crash = rows[("launch failed", "UCX cuda_ipc: signal 11")]
    assert (crash[c["count"]], crash[c["counted"]]) == (12, "launches")
    assert crash[c["covers (library benchmark operation memory strategy)"]] == \
        "ompi-ob1 bw device:device direct; ompi-ucx bw device:device direct"
    skip = rows[("skipped", "NCCL moves device memory only (device:device)")]
    assert (skip[c["count"]], skip[c["covers (library benchmark operation memory strategy)"]]) == \
        (2, "nccl bw host:host; nccl latency host:host")
    unsupported = rows[("unsupported", "library is not CUDA-aware")]
    assert (unsupported[c["count"]], unsupported[c["counted"]]) == (2, "result points")
    assert unsupported[c["covers (library benchmark operation memory strategy)"]] == \
        "mpich-4.0.2 bw device:device; openmpi-5.0.7 bw device:device"
    assert rows[("launch timeout", "no reason recorded")][c["covers (library benchmark operation memory strategy)"]] == \
        "ompi-ob1 nbc"


def test_status_table_names_a_validation_failure(gpu_store):
    """The engine gives a point whose data arrived wrong no reason (validation_error, per size, says what
    differed): the row says that the data failed validation."""
    t = tables.status_table(Results.load(gpu_store))
    assert ["failed", "data failed validation", 5, "result points"] in [r[:4] for r in t.rows]


def test_collective_sizes_asked_for_are_points_of_the_size_measured(tmp_path):
    """On 3 ranks the engine measures 1, 2 and 4 B of alltoall as 3 B (whole blocks), once, the record naming the sizes
    asked for (requested_bytes): that launch gives one point at 3 B, not three repetitions of it; a launch that asked
    for 3 B measured the same operation, a second launch of that point; tables show the sizes measured."""
    st = Store()
    for rid, asked in (("a", {3: [1, 2, 4], 63: [64]}), ("b", {3: [3]})):
        recs = synth.coll_results(rid, ["alltoall"], sorted(asked), 3)
        for rec in recs:
            rec["requested_bytes"] = asked[rec["bytes"]]
        st.ingest(synth.write_jsonl(tmp_path / f"{rid}.jsonl", [synth.context(rid, "coll", "Open MPI v5.0.7",
                                                                              world_size=3), *recs]), validate=True)
    points = {p.bytes: p for p in combine(Results.load(st).ok("coll"))}
    assert sorted(points) == [3, 63]
    assert (points[3].reps, points[63].reps) == (2, 1)
    t = tables.collectives_table(Results.load(st))
    c = {name: i for i, name in enumerate(t.columns)}
    assert [r[c["size (total)"]] for r in t.rows] == ["3", "63"]  # bytes
