import csv

import pytest

from gmb import compare, peaks, tables
from gmb.store import Store


def test_ceilings_and_selection(store):
    c = peaks.ceilings(store)
    assert c["p2p-ipc"] == pytest.approx(380.0, rel=0.02)
    assert peaks.ceiling_for("bw", "nvlink", "device", "device", c)[0] == "p2p-ipc"
    assert peaks.ceiling_for("bw", "host-device", "pinned", "device", c)[0] == "h2d-pinned"
    assert peaks.ceiling_for("bw", "host-device", "host", "device", c)[0] == "h2d-pageable"
    op, v = peaks.ceiling_for("bibw", "nvlink", "device", "device", c)
    assert op == "p2p-ipc x2" and v == pytest.approx(2 * c["p2p-ipc"])
    assert peaks.ceiling_for("bw", "inter-node", "host", "host", c) == (None, None)


def test_combine_uses_median_of_repetitions(store):
    pts = [p for p in tables.combine(store.results("latency")) if p.library == "openmpi-5.0.7"
           and p.memory == "host:host" and p.bytes == 1024]
    assert len(pts) == 1
    p = pts[0]
    rows = store.results("latency", library="openmpi-5.0.7", memory="host:host", bytes=1024)
    meds = sorted(r["t_median"] for r in rows)
    assert p.reps == 3 and p.median == pytest.approx(meds[1])
    assert p.low == min(r["t_ci95_low"] for r in rows) and p.high == max(r["t_ci95_high"] for r in rows)


def test_fraction_of_peak_table(store):
    t = tables.fraction_of_peak(store)
    col = {c: i for i, c in enumerate(t.columns)}
    row = next(r for r in t.rows if r[0] == "openmpi-5.0.7" and r[1] == "bw" and r[2] == "device:device")
    peak = row[col["peak MPI GB/s"]]
    best = max(p.median for p in tables.combine(store.results("bw"))
               if p.library == "openmpi-5.0.7" and p.memory == "device:device")
    assert peak == pytest.approx(best, abs=1e-3)
    ceiling = peaks.ceilings(store)["p2p-ipc"]
    assert row[col["% of ceiling"]] == pytest.approx(100 * best / ceiling, abs=0.1)
    assert row[col["% of nominal"]] == pytest.approx(100 * best / 478.0, abs=0.1)
    assert row[col["path"]] == "nvlink"
    # host-host has a measured ceiling (host-stream) but no nominal link rate
    hh = next(r for r in t.rows if r[0] == "mpich-4.0.2" and r[1] == "bibw" and r[2] == "host:host")
    assert hh[col["ceiling"]] == "host-stream x2" and hh[col["% of nominal"]] == ""


def test_csv_export_and_no_overwrite(store, tmp_path):
    written = tables.export_csv(tables.all_tables(store), tmp_path / "csv")
    names = {p.name for p in written}
    assert "fraction_of_peak.csv" in names
    with open(tmp_path / "csv" / "fraction_of_peak.csv") as f:
        rows = list(csv.reader(f))
    assert rows[0][0] == "library" and len(rows) > 5
    assert float(rows[1][6]) > 0
    before = (tmp_path / "csv" / "fraction_of_peak.csv").read_text()
    with pytest.raises(FileExistsError):
        tables.export_csv(tables.all_tables(store), tmp_path / "csv")
    assert (tmp_path / "csv" / "fraction_of_peak.csv").read_text() == before


def test_status_table_lists_unsupported(store):
    t = tables.status_table(store)
    assert any(r[4] == "unsupported" and "CUDA-aware" in r[5] for r in t.rows)


def _stores(ompi_dir, mpich_dir):
    a, b = Store(), Store()
    for f in ompi_dir.glob("*.jsonl"):
        a.ingest(f)
    for f in mpich_dir.glob("*.jsonl"):
        b.ingest(f)
    return a, b


def test_compare_ratios_and_significance(ompi_dir, mpich_dir):
    a, b = _stores(ompi_dir, mpich_dir)
    rows = compare.compare(a, b)
    assert rows
    lat = next(r for r in rows if r.benchmark == "latency" and r.memory == "host:host" and r.bytes == 1)
    # mpich fixture is generated with scale 1.3: latency ~30 % higher, significant, worse
    assert lat.ratio == pytest.approx(1.3, rel=0.05)
    assert lat.significant and lat.worse_pct > 20
    assert lat.ratio_low <= lat.ratio <= lat.ratio_high
    bw = next(r for r in rows if r.benchmark == "bw" and r.memory == "host:host" and r.bytes == 1 << 20)
    assert bw.ratio < 1 and bw.worse_pct > 0  # bandwidth lower = worse
    same = compare.compare(a, a)
    assert all(not r.significant and r.ratio == pytest.approx(1.0) for r in same)


def test_compare_tolerances(ompi_dir, mpich_dir, tmp_path):
    a, b = _stores(ompi_dir, mpich_dir)
    rows = compare.compare(a, b)
    loose = tmp_path / "loose.toml"
    loose.write_text("[default]\nmax_regression_pct = 50\n")
    assert compare.check(rows, compare.load_tolerances(loose)) == []
    strict = tmp_path / "strict.toml"
    strict.write_text('[default]\nmax_regression_pct = 50\n[[rule]]\nbenchmark = "latency"\nmax_bytes = 64\n'
                      'max_regression_pct = 5\n')
    bad = compare.check(compare.compare(a, b), compare.load_tolerances(strict))
    assert bad and all(r.benchmark == "latency" and r.bytes <= 64 for r in bad)


def test_compare_two_libraries_in_one_store(store):
    with pytest.raises(ValueError, match="several libraries"):
        compare.compare(store, store)
    rows = compare.compare(store, store, "openmpi-5.0.7", "mpich-4.0.2")
    assert any(r.significant for r in rows)
