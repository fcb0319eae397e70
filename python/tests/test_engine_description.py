# SPDX-License-Identifier: BSD-3-Clause
"""The engine's description (gmb-bench list --format json, gmb.engine/1) as the harness reads it, on the fake
engine's description (data/engine/host.json), and what follows from it: benchmarks chosen by family, records ranked
by their headline."""

import json
import subprocess
import sys

import pytest
from conftest import DATA, HERE
from fake_engine import describe, description, old_description
from test_cli import run_gmb

from gmb.campaign import generated
from gmb.report import tables
from gmb.engine.description import DescriptionError, EngineDescription
from gmb.machine.mpilibs import MpiLibrary
from gmb.results.records import read_records
from gmb.results.result_facts import headline
from gmb.results.store import STAT_COLUMNS, Store
from gmb.machine.topology import Topology
from gmb.results.model import Results

# What tables ranked each benchmark by before records named their headline (the harness's former METRIC_OF): the
# oracle for records written before the field existed.
OLD_METRIC_OF = {"latency": "t", "bw": "bw", "bibw": "bw", "mbw": "bw", "coll": "busbw", "nbc": "t",
                 "peaks": "bw", "halo": "t", "um": "t"}


def test_benchmarks_by_family_and_what_their_records_are():
    d = describe(cuda=True, nccl="2.28.3")
    assert d.of_family("pt2pt") == ["latency", "bw", "bibw"]
    assert d.of_family("multi-pair") == ["mbw", "mlat"]
    assert d.of_family("pt2pt", "multi-pair", transport="nccl") == ["latency", "bw", "bibw"]
    assert d.with_transport("nccl") == ["latency", "bw", "bibw", "coll"]
    mlat = d.benchmark("mlat")
    assert (mlat.family, mlat.headline, mlat.metrics, mlat.point_to_point) == ("multi-pair", "time_us",
                                                                                ("time_us",), True)
    assert mlat.ranks_refusal(4) is None and mlat.ranks_refusal(3) == "runs on at least 2 ranks, an even number"
    assert d.benchmark("latency").ranks_refusal(3) == "runs on exactly 2 ranks"
    coll = d.benchmark("coll")
    assert coll.operations and coll.headline == "busbw_GBps" and "busbw_GBps" in coll.metrics
    assert not coll.point_to_point and d.point_to_point("bibw") and not d.point_to_point("nosuch")
    assert d.benchmark("doctor").headline is None and d.benchmark("nosuch") is None
    assert (d.cuda, d.nccl, d.nccl_version) == (True, True, "2.28.3")


def test_which_benchmarks_take_precision():
    """"adaptive": the benchmark takes --precision (the size-sweep runner's)."""
    d = describe()
    assert [b.name for b in d.benchmarks.values() if b.adaptive] == ["latency", "bw", "bibw", "mbw", "mlat", "um",
                                                                      "rma_latency", "rma_bw", "rma_bibw",
                                                                      "part_latency", "part_bw", "coll"]
    assert not any(d.benchmark(n).adaptive for n in ("part_overlap", "nbc", "halo", "peaks", "doctor"))


@pytest.mark.parametrize("where, key", [(None, "run_defaults"), (None, "strategies"), (None, "ceilings"),
                                        (None, "options"), ("benchmarks", "adaptive"), ("benchmarks", "directions"),
                                        ("benchmarks", "overlap"), ("benchmarks", "omb"), ("benchmarks", "options"),
                                        ("memory_kinds", "pageable"), ("strategies", "staging"),
                                        ("ceilings", "bounds")])
def test_a_description_short_of_the_contract_is_refused(where, key):
    """The engine and the harness ship together: a description without a field the contract requires is refused,
    naming the field, never read with a guess."""
    short = description()
    for entry in short[where] if where else [short]:
        del entry[key]
    with pytest.raises(DescriptionError, match=f"has no .*{key}.*rebuild it"):
        EngineDescription(short)


def test_the_facts_the_harness_plans_and_reads_by():
    """Run defaults, directions, overlap, OMB counterparts, strategies and the ceilings' path classes come from the
    description (the engine's), not from tables in the harness."""
    d = describe()
    assert (d.run_defaults.iters, d.run_defaults.warmup_large, d.run_defaults.large_size) == (1000, 10, 1 << 20)
    assert d.run_defaults.max_seconds == 1.0 and d.run_defaults.window == 64
    assert [n for n, b in d.benchmarks.items() if b.bidirectional] == ["bibw", "rma_bibw"]
    assert [n for n, b in d.benchmarks.items() if b.overlap] == ["part_overlap", "nbc"]
    assert d.benchmark("bw").bandwidth and not d.benchmark("latency").bandwidth and not d.benchmark("coll").bandwidth
    assert d.benchmark("bibw").omb["program"] == "osu_bibw" and d.benchmark("halo").omb is None
    assert d.strategies["staged-pageable"].staging_property == "pageable"
    assert d.strategies["pipelined-gpu"].staged_side == "host" and d.strategies["direct"].staged_side is None
    ceilings = {c.operation: c for c in d.ceilings}
    assert ceilings["p2p-ipc"].bounds == ("nvlink", "pcie", "peer") and ceilings["d2d"].bounds == ("same-gpu",)
    assert (ceilings["h2d-pageable"].direction, ceilings["h2d-pageable"].host_memory) == ("h2d", "pageable")


def test_options_every_benchmark_takes_and_its_own():
    """A campaign's options are checked against these: each name (every spelling), whether it takes a value, the
    accepted values where the engine lists them."""
    d = describe()
    bw = d.accepted_options("bw")
    assert bw["--window"] is bw["-W"] is bw["--window-size"] and bw["--window"].value == "required"
    assert bw["--iters"].value == "required" and bw["--validate"].value == "none"  # the driver's, every benchmark's
    assert bw["--strategy"].choices == ("direct", "staged-pageable", "staged-pinned", "pipelined", "pipelined-gpu")
    assert "--window" not in d.accepted_options("coll") and "--mem" in d.accepted_options("coll")
    assert d.accepted_options("nosuch") is None


def test_memory_kinds_by_property():
    d = describe(cuda=True)
    assert [k.name for k in d.kinds_where(gpu_memory=True)] == ["device"]
    assert [k.name for k in d.kinds_where(host_accessible=True, gpu_backed=False)] == ["host", "pinned"]
    assert d.first_kind(page_locked=True).name == "pinned"
    managed = d.first_kind(placeable=True, placement=None)
    assert managed.name == "managed" and managed.gpu_backed and not managed.gpu_memory
    assert [k.name for k in d.kinds_where(base="managed", placement="device")] == ["managed:device"]
    assert d.gpu_memory("device") and not d.gpu_memory("managed:device") and not d.gpu_memory("host")
    assert d.kind_available("device") == (True, "")
    host = describe()
    ok, why = host.kind_available("device")
    assert not ok and "without CUDA" in why
    assert host.kind_available("host") == (True, "") and host.kind_available("gpu") == (False, "not listed by the engine")


def test_collectives_and_their_nccl_counterparts():
    d = describe(cuda=True, nccl="2.28.3")
    assert d.collective("allreduce").mpi_call == "MPI_Allreduce" and d.collective("allreduce").busbw_factor
    assert d.nccl_refusal("allreduce") is None and d.nccl_refusal("alltoall") is None
    assert "reduce_scatter_block" in d.nccl_refusal("reduce_scatter")
    assert "no barrier" in d.nccl_refusal("barrier")
    assert "not a collective the engine lists" in d.nccl_refusal("allsum")


def test_an_engine_built_before_it_described_itself_is_refused_with_the_advice_to_rebuild():
    with pytest.raises(DescriptionError, match=r"has no \"schema\".*rebuild it"):
        EngineDescription(old_description(description()), source="engine /e")
    no_family = description()
    del no_family["benchmarks"][1]["family"]
    with pytest.raises(DescriptionError, match="has no family for benchmark 'bw'.*rebuild"):
        EngineDescription(no_family)
    with pytest.raises(DescriptionError, match="reads 'gmb.engine/1'"):
        EngineDescription({**description(), "schema": "gmb.engine/2"})


def test_old_engine_stops_a_plan_with_the_rebuild_advice(fake_setup, tmp_path, capsys):
    cfg = fake_setup["config"]
    cfg.write_text(cfg.read_text().replace('engine = "', 'env = { FAKE_OLD_LIST = "1" }\nengine = "', 1))
    c = tmp_path / "c.toml"
    c.write_text('[[run]]\nbenchmarks = ["latency"]\nmemory = ["host:host"]\n')
    assert run_gmb("plan", c, "--config", cfg, "--no-detect") == 2
    err = capsys.readouterr().err
    assert err.startswith("gmb plan: error: engine ") and "rebuild it" in err and len(err.strip().splitlines()) == 1


def test_the_fake_engine_lists_its_description():
    out = subprocess.run([sys.executable, str(HERE / "fake_engine.py"), "list", "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == description()


def test_a_new_benchmark_of_a_family_is_planned_without_a_harness_edit():
    """mlat is named nowhere in the harness: its family (multi-pair) puts it into the generated campaign's
    multi-pair block, next to mbw; an engine that lacks it plans that block with mbw alone."""
    lib = MpiLibrary("a", "openmpi", "5", "/x", "/x/bin/mpirun", "mpirun")
    host = Topology(numa_nodes={0: "0-3"})
    multi = [b for b in generated.default_campaign(host, [lib], {"a": describe()}).blocks
             if "mbw" in b.benchmarks]
    assert [b.benchmarks for b in multi] == [["mbw", "mlat"]]
    older = generated.default_campaign(host, [lib], {"a": describe(without=("mlat",))})
    assert [b.benchmarks for b in older.blocks if "mbw" in b.benchmarks] == [["mbw"]]


def test_a_new_benchmark_of_a_family_is_run_and_tabled_without_a_harness_edit(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text('[campaign]\nrepetitions = 1\nlibraries = ["fakempi-a"]\n[[run]]\nbenchmarks = ["latency", "mlat"]\n'
                 'memory = ["host:host"]\nsizes = "1:1K"\n')
    assert run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "r",
                   "--no-build", "--no-progress") == 0, capsys.readouterr().err
    (d,) = (tmp_path / "r").iterdir()
    st = Store(d / "store.sqlite")
    rows = read_records(next((d / "raw").glob("*mlat*.jsonl"))).results
    assert rows and all(r["headline"] == "time_us" for r in rows)
    t = tables.latency_table(Results.load(st))
    assert t.columns[:3] == ["library", "benchmark", "memory"]
    assert {r[1] for r in t.rows} == {"latency", "mlat"}
    html = (d / "report.html").read_text()
    assert "One-way latency" in html and ">mlat<" in html


def _recorded_results():
    for f in sorted(DATA.rglob("*.jsonl")):
        for r in read_records(f).results:
            yield f, r


def test_headline_rule_on_records_without_it_gives_the_old_mapping():
    """Every recorded test-data result written before records named their headline is ranked by what tables
    ranked its benchmark by before: busbw if it carries it, else bandwidth, else time; records that name it (the
    recorded quick campaign) name the same one."""
    seen = set()
    for f, r in _recorded_results():
        if "headline" in r:
            if r["status"] == "ok" and r["benchmark"] in OLD_METRIC_OF:
                assert STAT_COLUMNS[r["headline"]] == OLD_METRIC_OF[r["benchmark"]], (f, r["benchmark"])
            continue
        if r["status"] == "ok":
            assert STAT_COLUMNS[headline(r)] == OLD_METRIC_OF[r["benchmark"]], (f, r["benchmark"])
            seen.add(r["benchmark"])
    assert seen == {"latency", "bw", "bibw", "coll", "peaks"}


def test_headline_rule_on_synthetic_records_of_every_old_benchmark():
    import synth

    recs = [*synth.pt2pt_results("r", "latency", [8]), *synth.pt2pt_results("r", "bw", [8]),
            *synth.pt2pt_results("r", "bibw", [8]), *synth.pt2pt_results("r", "mbw", [8], pairs=2),
            *synth.coll_results("r", ["allreduce"], [8], 2), *synth.nbc_results("r", "iallreduce", [8]),
            *synth.peaks_results("r")]
    recs.append({"benchmark": "um", "time_us": synth.stats(3.0)})
    recs.append({"benchmark": "halo", "time_us": synth.stats(3.0)})
    for r in recs:
        assert STAT_COLUMNS[headline(r)] == OLD_METRIC_OF[r["benchmark"]], r["benchmark"]


def test_a_record_that_names_its_headline_is_ranked_by_it():
    import synth

    bw = synth.pt2pt_results("r", "bw", [8])[0]
    assert headline(bw) == "bandwidth_GBps" and headline({**bw, "headline": "time_us"}) == "time_us"
    assert headline({**bw, "headline": "no-such-statistic"}) == "bandwidth_GBps"
    assert headline({"benchmark": "coll", "operation": "barrier", "time_us": {}}) == "time_us"  # no bus bandwidth
