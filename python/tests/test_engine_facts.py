# SPDX-License-Identifier: BSD-3-Clause
"""Each library's engine description is kept with its results, and the tables and answers take what bounds a
transfer, which side is host memory, what a strategy stages through and which benchmark counts both directions from
it: changing the description changes them, with no list of the harness's own."""
import copy
import json
import sqlite3

import pytest
import synth
from conftest import HOST_ENGINE, described, write_engine_file
from test_cli import CAMPAIGN, run_gmb

from gmb.cli import main
from gmb.engine.description import EngineDescription
from gmb.report import answers, tables
from gmb.results import peaks
from gmb.results.model import Results
from gmb.results.store import Store, open_results

M = 1 << 20


def _peak(op, path, gbps):
    return {"schema": "gmb.record/1", "type": "result", "run_id": "s", "benchmark": "peaks", "status": "ok",
            "bytes": M, "operation": op, "bandwidth_GBps": {**synth.stats(gbps, spread=0.01), "median": gbps},
            "path": {"class": path, "link": path, "nominal_GBps": None}, "metrics": {"pair": "pair0"}}


def _store(tmp_path, description: dict | None):
    """Ceilings of every copy at 1 MiB, a bw and a bibw on device:device over NVLink, and the description given."""
    ceilings = [("p2p-ipc", "nvlink", 300.0), ("p2p-ce", "nvlink", 280.0), ("h2d-pinned", "host-device", 50.0),
                ("d2h-pinned", "host-device", 40.0), ("h2d-pageable", "host-device", 20.0),
                ("d2h-pageable", "host-device", 10.0)]
    mpi = [*synth.pt2pt_results("s", "bw", [M], "device", "device", "nvlink"),
           *synth.pt2pt_results("s", "bibw", [M], "device", "device", "nvlink")]
    f = synth.write_jsonl(tmp_path / "s.jsonl", [synth.context("s", "bw", "Open MPI v5.0.7", cuda=True),
                                                 *[_peak(*c) for c in ceilings], *mpi])
    st = Store()
    st.ingest(f, library="lib")
    if description is not None:
        st.record_engine("lib", description)
    return st


def _host_engine() -> dict:
    return json.loads(HOST_ENGINE.read_text())


def test_the_ceiling_follows_the_engines_description(tmp_path):
    desc = _host_engine()
    c = peaks.ceilings(Results.load(_store(tmp_path, desc)))
    assert c.at("bw", "nvlink", "device", "device", M) == ("p2p-ipc", pytest.approx(300.0))
    assert c.at("bibw", "nvlink", "device", "device", M) == ("p2p-ipc x2", pytest.approx(600.0))
    assert c.at("bw", "nvlink", "device", "device", M, "staged-pinned")[0] == "min(d2h-pinned, h2d-pinned)"

    # an engine whose p2p-ipc copy no longer bounds NVLink, whose bibw counts one direction, and with a strategy
    # the harness has never heard of: the ceilings follow, with no change to the harness
    changed = copy.deepcopy(desc)
    for ceiling in changed["ceilings"]:
        if ceiling["operation"] == "p2p-ipc":
            ceiling["bounds"] = []
    for bench in changed["benchmarks"]:
        if bench["name"] == "bibw":
            bench["directions"] = "uni"
    changed["strategies"].append({"name": "staged-new", "description": "through pageable memory", "chunked": False,
                                  "staged_side": "gpu_backed",
                                  "staging": {"property": "pageable", "what": "pageable host memory"}})
    (tmp_path / "b").mkdir()
    c = peaks.ceilings(Results.load(_store(tmp_path / "b", changed)))
    assert c.at("bw", "nvlink", "device", "device", M) == ("p2p-ce", pytest.approx(280.0))
    assert c.at("bibw", "nvlink", "device", "device", M) == ("p2p-ce", pytest.approx(280.0))
    assert c.at("bw", "nvlink", "device", "device", M, "staged-new") == ("min(d2h-pageable, h2d-pageable)",
                                                                         pytest.approx(10.0))


def test_host_sides_are_told_by_the_memory_kinds_properties(tmp_path):
    c = peaks.ceilings(Results.load(_store(tmp_path, _host_engine())))
    assert c.at("bw", "host-device", "pinned", "device", M)[0] == "h2d-pinned"
    assert c.at("bw", "host-device", "host", "device", M)[0] == "h2d-pageable"
    assert c.at("bw", "host-device", "managed:host", "device", M)[0] == "h2d-pageable"
    assert c.at("bw", "host-device", "device", "pinned", M)[0] == "d2h-pinned"
    assert c.at("bw", "host-device", "host", "device", M, "pipelined-gpu")[0] == "h2d-pageable"


def test_without_a_description_no_figure_gets_a_ceiling_and_the_report_says_why(tmp_path):
    results = Results.load(_store(tmp_path, None))
    assert results.undescribed()
    assert peaks.ceilings(results).at("bw", "nvlink", "device", "device", M) == (None, None)
    t = tables.fraction_of_peak(results)
    col = {c: i for i, c in enumerate(t.columns)}
    assert {r[col["ceiling"]] for r in t.rows} == {"unknown: no engine description stored"}
    notes = " ".join(answers.answers(results).notes)
    assert "No engine description was stored with these results" in notes
    (tmp_path / "d").mkdir()
    described_notes = answers.answers(Results.load(described(_store(tmp_path / "d", None)))).notes
    assert not any("engine description" in n for n in described_notes)


def test_a_run_keeps_each_engines_description_and_ingest_takes_it_back(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    assert run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                   "--no-build", "--no-report") == 0
    (outdir,) = list((tmp_path / "res").iterdir())
    files = sorted(p.name for p in (outdir / "engines").iterdir())
    assert files == ["fakempi-a.json", "fakempi-b.json"]
    db = sqlite3.connect(outdir / "store.sqlite")
    assert {r[0] for r in db.execute("SELECT library FROM engines")} == {"fakempi-a", "fakempi-b"}
    assert Results.load(open_results(outdir)).engines.described == ("fakempi-a", "fakempi-b")

    # a store made again from the raw records and the engine files has the descriptions back
    capsys.readouterr()
    again = tmp_path / "again.sqlite"
    assert main(["ingest", str(again), *map(str, sorted((outdir / "raw").glob("*.jsonl"))),
                 *map(str, sorted((outdir / "engines").glob("*.json")))]) == 0
    results = Results.load(Store(again, create=False))
    assert set(results.engines.described) == {"fakempi-a", "fakempi-b"} and not results.undescribed()


def test_a_file_that_is_not_an_engine_file_is_refused_and_nothing_stored(tmp_path, capsys):
    bad = tmp_path / "engine.json"
    bad.write_text(json.dumps({"library": "x"}))
    rec = synth.write_jsonl(tmp_path / "r.jsonl", [synth.context("r", "bw", "Open MPI v5.0.7"),
                                                   *synth.pt2pt_results("r", "bw", [M], "host", "host", "host")])
    db = tmp_path / "s.sqlite"
    assert main(["ingest", str(db), str(rec), str(bad)]) == 2
    err = capsys.readouterr().err
    assert "engine.json: not an engine file" in err and "gmb run writes into RESULTS/engines/" in err
    assert not db.exists()


def test_a_directory_of_records_reads_its_engine_files(tmp_path):
    d = tmp_path / "records"
    d.mkdir()
    synth.write_jsonl(d / "r.jsonl", [synth.context("r", "bibw", "Open MPI v5.0.7"),
                                      *synth.pt2pt_results("r", "bibw", [M], "host", "host", "host")])
    assert Results.load(open_results(d)).undescribed()
    write_engine_file(d, "openmpi-5.0.7")
    results = Results.load(open_results(d))
    assert not results.undescribed() and results.engines.bidirectional("bibw")
    assert isinstance(EngineDescription(json.loads(HOST_ENGINE.read_text())), EngineDescription)
