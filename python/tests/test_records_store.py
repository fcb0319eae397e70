# SPDX-License-Identifier: BSD-3-Clause
import json
import sqlite3

import pytest
import synth

from gmb.machine import identity
from gmb.results import records
from gmb.outputs import OutputError
from gmb.results.records import RecordError, read_records
from gmb.results.store import Store, open_results
from gmb.results.store_file import SCHEMA_VERSION, StoreError
from conftest import DATA


def all_records(d):
    for f in sorted(d.glob("*.jsonl")):
        for line in f.read_text().splitlines():
            yield json.loads(line)


def test_fixtures_are_schema_valid(ompi_dir):
    v = records.validator()
    assert v is not None, "jsonschema must be installed for the tests"
    recs = list(all_records(ompi_dir)) + list(all_records(DATA))
    assert len(recs) > 100
    for rec in recs:
        errors = list(v.iter_errors(rec))
        assert not errors, (rec.get("type"), rec.get("benchmark"), errors[0].message)


def test_schema_rejects_broken_record(tmp_path):
    rec = synth.pt2pt_results("r", "latency", [8])[0]
    del rec["time_us"]["median"]
    p = synth.write_jsonl(tmp_path / "bad.jsonl", [synth.context("r", "latency"), rec])
    with pytest.raises(RecordError, match="schema violation"):
        read_records(p, validate=True)


def test_truncated_last_line_is_tolerated_but_middle_garbage_is_not(tmp_path):
    ctx = json.dumps(synth.context("r", "latency"))
    res = json.dumps(synth.pt2pt_results("r", "latency", [8])[0])
    p = tmp_path / "t.jsonl"
    p.write_text(ctx + "\n" + res + "\n" + res[:40])
    rf = read_records(p)
    assert len(rf.contexts) == 1 and len(rf.results) == 1
    q = tmp_path / "u.jsonl"
    q.write_text(ctx + "\n{oops\n" + res + "\n")
    with pytest.raises(RecordError, match=r"u.jsonl:2"):
        read_records(q)


def test_library_label():
    assert identity.library_label({"mpi": {"library_version": "Open MPI v4.1.4, package: Debian"}}) == "openmpi-4.1.4"
    assert identity.library_label({"mpi": {"library_version": "MPICH Version: 4.0.2"}}) == "mpich-4.0.2"


def test_ingest_counts_and_columns(store):
    assert store.libraries() == ["mpich-4.0.2", "openmpi-5.0.7"]
    lat = store.results("latency", library="openmpi-5.0.7", memory="host:host", bytes=8)
    assert len(lat) == 3  # three repetitions
    assert all(json.loads(r["json"])["time_us"]["median"] > 0 and r["path_class"] == "host" for r in lat)
    bw = store.results("bw", library="openmpi-5.0.7", memory="pinned:device")
    assert bw and all(r["mem_send"] == "pinned" and r["mem_recv"] == "device" for r in bw)
    unsup = store.results("bw", status="unsupported")
    assert len(unsup) == 2 and unsup[0]["reason"] == "library is not CUDA-aware"
    assert store.meta("schema_version") == str(SCHEMA_VERSION)


def test_store_file_has_version_and_refuses_other_versions(tmp_path):
    p = tmp_path / "s.sqlite"
    Store(p).close()
    db = sqlite3.connect(p)
    assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    db.execute("UPDATE meta SET value='999' WHERE key='schema_version'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="version 999"):
        Store(p)


def test_open_results_variants(ompi_dir, tmp_path):
    s = open_results(ompi_dir)  # directory of jsonl
    assert s.libraries() == ["openmpi-5.0.7"]
    with pytest.raises(StoreError, match="no such file"):
        open_results(tmp_path / "nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(StoreError, match="no store.sqlite"):
        open_results(empty)


def test_launch_bookkeeping_for_resume(tmp_path):
    s = Store(tmp_path / "s.sqlite")
    s.record_launch(launch_id="a", status="ok")
    s.record_launch(launch_id="b", status="running")
    s.record_launch(launch_id="c", status="timeout")
    assert s.finished_launches() == {"a", "c"}


def test_single_broken_line_is_an_error_not_an_empty_file(tmp_path):
    """A file whose only line is not JSON is not a record file cut short: it is an error (gmb report exits 2 and
    writes no report); a truncated last line after complete records stays tolerated."""
    from gmb.cli import main

    p = tmp_path / "one.jsonl"
    p.write_text('{"schema": "gmb.record/1", "type": "cont\n')
    with pytest.raises(RecordError, match=r"one.jsonl:1: not JSON"):
        read_records(p)
    p.write_text("not json at all")  # without a newline either
    with pytest.raises(RecordError, match=r"one.jsonl:1: not JSON"):
        read_records(p)
    assert main(["report", str(p), "-o", str(tmp_path / "r.html")]) == 2
    assert not (tmp_path / "r.html").exists()
    ctx = json.dumps(synth.context("r", "latency"))
    q = tmp_path / "two.jsonl"
    q.write_text(ctx + "\n" + ctx[:30])
    assert len(read_records(q).contexts) == 1
    (tmp_path / "empty.jsonl").write_text("")  # a launch that wrote nothing: no records, no error
    assert read_records(tmp_path / "empty.jsonl").results == []


@pytest.mark.parametrize("content", [b"", b"SQLite format 3\x00 but not really", b"plain text\n", "foreign"])
def test_report_refuses_a_sqlite_file_that_is_not_a_gmb_store(tmp_path, capsys, content):
    """`gmb report X.sqlite` on an empty file, a file that is not SQLite, or somebody else's SQLite database: exit 2
    with a clear message, no report, and the file left byte-identical (no gmb tables written into it)."""
    from gmb.cli import main

    x = tmp_path / "x.sqlite"
    if content == "foreign":
        db = sqlite3.connect(x)
        db.execute("CREATE TABLE accounts (id INTEGER, name TEXT)")
        db.execute("INSERT INTO accounts VALUES (1, 'a')")
        db.commit()
        db.close()
    else:
        x.write_bytes(content)
    before = x.read_bytes()
    assert main(["report", str(x)]) == 2
    err = capsys.readouterr().err
    assert "not a gmb store" in err and str(x) in err
    assert x.read_bytes() == before and not x.with_suffix(".html").exists()
    assert main(["tables", str(x)]) == 2 and x.read_bytes() == before
    with pytest.raises(StoreError, match="not a gmb store"):
        open_results(x)
    if content == "foreign":  # writing into a foreign database is refused as well (gmb ingest)
        with pytest.raises(StoreError, match="without meta.schema_version"):
            Store(x)
        assert x.read_bytes() == before


def test_report_reads_a_gmb_store_without_changing_it(ompi_dir, tmp_path):
    """A results store is opened read-only by report/tables/compare: the file stays byte-identical."""
    from gmb.cli import main

    p = tmp_path / "s.sqlite"
    st = Store(p)
    for f in sorted(ompi_dir.glob("*.jsonl")):
        st.ingest(f)
    st.close()
    before = p.read_bytes()
    assert main(["report", str(p)]) == 0 and p.with_suffix(".html").is_file()
    assert main(["tables", str(p)]) == 0
    assert p.read_bytes() == before
    ro = open_results(p)
    assert ro.libraries() == ["openmpi-5.0.7"]
    with pytest.raises(OutputError, match="attempt to write a readonly database"):
        ro.set_meta("x", "y")
    assert p.read_bytes() == before
