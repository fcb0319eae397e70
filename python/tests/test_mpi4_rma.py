# SPDX-License-Identifier: BSD-3-Clause
"""One-sided (RMA), persistent and partitioned communication in the harness: their records kept apart by operation
and variant, their tables, figure and answers, the generated campaign's blocks (and the reasons where an MPI-3
library or an older engine cannot run them), the estimate, and a campaign of them on the fake engine."""

import json
from dataclasses import replace

import pytest
import synth
from conftest import check_report_in_chromium, described
from fake_engine import describe, description

from gmb.report import answers
from gmb.report.answers_words import feature_sentence
from gmb.campaign import generated, mpi4_and_rma
from gmb.campaign import estimate
from gmb.report import feature_figures, plots
from gmb.report import tables
from gmb.cli import main
from gmb.engine.description import DescriptionError, EngineDescription
from gmb.machine.mpilibs import MpiLibrary
from gmb.campaign.plan import plan
from gmb.report.html import build_html
from gmb.results.store import Store
from gmb.machine.topology import Gpu, Topology
from gmb.results.model import Results
from gmb.results.points import combine
from gmb.report import render_html, render_text

SIZES = synth.pow2_sizes(1, 1 << 20)
TOPO2 = Topology(gpus=[Gpu(0, "H200"), Gpu(1, "H200")], links={(0, 1): "NV18", (1, 0): "NV18"},
                 numa_nodes={0: "0-7"})
NEW = ("rma_latency", "rma_bw", "rma_bibw", "part_latency", "part_bw", "part_overlap")


def lib(name, aware=True):
    return MpiLibrary(name=name, family="openmpi", version="5", prefix="/x", launcher_path="/x/bin/mpirun",
                      launcher="mpirun", cuda_aware=aware)


def _ingest(store: Store, name: str, benchmark: str, records: list[dict], tmp_path, library="ompi", rep=1):
    path = synth.write_jsonl(tmp_path / f"{name}-{library}-{rep}.jsonl",
                             [synth.context(records[0]["run_id"], benchmark, "Open MPI v5.0.7", cuda=True), *records])
    store.ingest(path, library=library, repetition=rep)


def _ceilings_at(run_id: str, sizes) -> list[dict]:
    """p2p-ipc ceilings over NVLink at the sizes the MPI records measured (fraction of peak needs the same size)."""
    return [{"schema": synth.SCHEMA_ID, "type": "result", "run_id": run_id, "benchmark": "peaks", "status": "ok",
             "bytes": b, "operation": "p2p-ipc", "path": {"class": "nvlink"},
             "bandwidth_GBps": synth.stats(380.0, spread=0.01)} for b in sizes]


@pytest.fixture
def mpi4_store(tmp_path):
    """Two repetitions of: one-sided put and get (latency, bw, bibw) between two GPUs, the regular and persistent
    latency and bw, part_latency and part_bw over partition counts, part_overlap with its compute sweep; ceilings
    at the bandwidth sizes."""
    s = Store()
    for rep in (1, 2):
        _ingest(s, "peaks", "peaks", _ceilings_at(f"peaks{rep}", [64 << 10, 1 << 20]), tmp_path, rep=rep)
        for bench, head in (("rma_latency", "time_us"), ("rma_bw", "bandwidth_GBps"), ("rma_bibw", "bandwidth_GBps")):
            for op in ("put", "get"):
                rid = f"{bench}-{op}-{rep}"
                _ingest(s, rid, bench, synth.rma_results(rid, bench, SIZES, "device", "device", "nvlink", op,
                                                         headline=head, seed=rep), tmp_path, rep=rep)
        for bench, head in (("latency", "time_us"), ("bw", "bandwidth_GBps")):
            rid = f"{bench}-persistent-{rep}"
            regular = synth.pt2pt_results(rid, bench, SIZES, "device", "device", "nvlink", seed=rep, headline=head)
            _ingest(s, rid, bench, regular + synth.persistent_results(regular, "MPI_Send_init/MPI_Recv_init"),
                    tmp_path, rep=rep)
        for bench, head in (("part_latency", "time_us"), ("part_bw", "bandwidth_GBps")):
            rid = f"{bench}-{rep}"
            _ingest(s, rid, bench, synth.partitioned_results(rid, bench, SIZES, "device", "device", "nvlink",
                                                             [1, 16], seed=rep, headline=head), tmp_path, rep=rep)
        rid = f"part_overlap-{rep}"
        _ingest(s, rid, "part_overlap", synth.part_overlap_results(rid, [1 << 20, 4 << 20], "device", "device",
                                                                   "nvlink", [4, 16], ["after-kernel", "per-block"],
                                                                   sweep=True, seed=rep), tmp_path, rep=rep)
    return described(s)


def test_operation_and_variant_are_part_of_a_point(mpi4_store):
    """Records of one benchmark that differ by operation or variant are different points, in the store and in every
    table: put and get, regular and persistent, P=1 and P=16 never merge."""
    labels = {r["operation"] for r in mpi4_store.rows("SELECT DISTINCT operation FROM results")}
    assert {"put flush create", "get flush create", "persistent", "P=1", "P=16", "P=4 per-block",
            "P=16 after-kernel", None} <= labels
    lat = [p for p in combine(Results.load(mpi4_store).ok("latency")) if p.bytes == 8]
    assert sorted(p.operation or "" for p in lat) == ["", "persistent"] and all(p.reps == 2 for p in lat)
    peak = tables.fraction_of_peak(Results.load(mpi4_store))
    col = {c: i for i, c in enumerate(peak.columns)}
    rows = {(r[col["benchmark"]], r[col["operation"]]) for r in peak.rows}
    assert {("rma_bw", "put flush create"), ("rma_bw", "get flush create"), ("bw", "persistent"),
            ("part_bw", "P=16")} <= rows and ("bw", "none") in rows
    latency = tables.latency_table(Results.load(mpi4_store))
    col = {c: i for i, c in enumerate(latency.columns)}
    got = {(r[col["benchmark"]], r[col["operation"]]) for r in latency.rows}
    assert {("rma_latency", "put flush create"), ("latency", "persistent"), ("part_latency", "P=1")} <= got
    assert not any(b == "part_overlap" for b, _ in got)  # an overall time with compute is not a latency


def test_one_sided_bandwidth_has_its_percent_of_ceiling(mpi4_store):
    """RMA bandwidth is bounded by the ceilings two-sided bandwidth is (same path class and size); rma_bibw by twice
    the one-way ceiling on NVLink."""
    peak = tables.fraction_of_peak(Results.load(mpi4_store))
    col = {c: i for i, c in enumerate(peak.columns)}
    by = {(r[col["benchmark"]], r[col["operation"]]): r for r in peak.rows}
    put = by[("rma_bw", "put flush create")]
    assert put[col["at size"]] == "1M" and put[col["ceiling"]] == "p2p-ipc"
    assert 0 < put[col["% of ceiling"]] < 105
    assert by[("rma_bibw", "put flush create")][col["ceiling"]] == "p2p-ipc x2"
    t = tables.one_sided_table(Results.load(mpi4_store))
    col = {c: i for i, c in enumerate(t.columns)}
    assert [r[col["operation"]] for r in t.rows] == ["get (MPI_Get)", "put (MPI_Put)"]
    for r in t.rows:
        assert r[col["synchronisation"]] == "flush" and r[col["window creation"]] == "create"
        assert r[col["latency at 8 B (us)"]] > 0 and r[col["bandwidth at size"]] == "1M"
        assert 0 < r[col["% of ceiling"]] < 105 and r[col["ceiling GB/s"]] == pytest.approx(380, rel=0.05)


def test_persistent_table_pairs_each_point_with_the_regular_one(mpi4_store):
    t = tables.persistent_table(Results.load(mpi4_store))
    col = {c: i for i, c in enumerate(t.columns)}
    assert {r[col["benchmark"]] for r in t.rows} == {"latency", "bw"}
    assert {r[col["size"]] for r in t.rows} == {"8", "1K", "64K", "1M"}
    for r in t.rows:
        assert r[col["speedup (regular / persistent)"]] == pytest.approx(1.15, abs=0.02)
        assert r[col["difference"]] == "persistent faster"
        assert r[col["regular (us)"]] > r[col["persistent (us)"]] > 0


def test_partitioned_overlap_table_and_figure(mpi4_store):
    t = tables.partitioned_overlap_table(Results.load(mpi4_store))
    col = {c: i for i, c in enumerate(t.columns)}
    assert len(t.rows) == 2 * 2 * 2  # sizes x partition counts x ready modes
    by = {(r[col["size"]], r[col["partitions"]], r[col["ready"]]): r for r in t.rows}
    assert by[("4M", 16, "per-block")][col["overlap (%)"]] > by[("4M", 16, "after-kernel")][col["overlap (%)"]]
    assert all(r[col["repetitions"]] == 2 for r in t.rows)
    assert feature_figures.partitioned_overlap(Results.load(mpi4_store)) is not None
    assert {fid for fid, _, _ in plots.figures(Results.load(mpi4_store))} >= {"partitioned-overlap", "rma_bw", "part_bw"}


def test_tables_fill_every_cell_and_say_their_units(mpi4_store):
    shown = {t.title: t for t in tables.all_tables(Results.load(mpi4_store))}
    for title in ("One-sided communication (RMA)", "Persistent vs regular calls (time, us)",
                  "Partitioned communication overlapped with compute"):
        t = shown[title]
        assert t.rows and all(v not in ("", None) for r in t.rows for v in r), title
    assert not {t.title for t in tables.all_tables(Results.load(Store()))} & {"One-sided communication (RMA)"}


def test_answers_say_the_best_rma_the_persistent_speedup_and_the_partitioned_overlap(mpi4_store):
    a = answers.answers(Results.load(mpi4_store))
    said = {f.topic: feature_sentence(f) for f in a.features}
    assert said["one-sided"].startswith("NVLink pair: bandwidth at 1M: ompi put flush create")
    assert "of ceiling p2p-ipc" in said["one-sided"] and "latency at 8 B: ompi put flush create" in said["one-sided"]
    assert "persistent calls 1.1" in said["persistent"] and "clearly faster at" in said["persistent"]
    assert "per-block vs after-kernel: P=4" in said["partitioned"] and "at 4M" in said["partitioned"]
    # the answer per path is the regular two-sided one: persistent and partitioned points are not mixed into it
    assert all(not f.point.operation for p in a.paths for f in p.figures)
    text = render_text.answers_text(answers.answers(Results.load(mpi4_store)))
    assert "One-sided communication (RMA), best per path:" in text and max(map(len, text.splitlines())) <= 100
    assert "Persistent calls against the regular ones" in render_html.answers_html(answers.answers(Results.load(mpi4_store)))


def test_report_has_the_new_tables_and_figure(mpi4_store, tmp_path):
    html = build_html(Results.load(mpi4_store))
    for title in ("One-sided communication (RMA)", "Persistent vs regular calls", "Partitioned communication "
                  "overlapped with compute", "fig-partitioned-overlap"):
        assert title in html
    check_report_in_chromium(html, tmp_path)


# ---------------------------------------------------------------------------------------------------- campaign
def _blocks(c, library, benchmark):
    return [b for b in c.blocks if b.libraries == [library] and b.benchmarks[0] == benchmark]


def test_quick_gpu_campaign_adds_one_sided_put_and_part_overlap():
    libs = [lib("ob1"), lib("sys", aware=False)]
    descs = {x.name: describe(cuda=True) for x in libs}
    c = generated.default_campaign(TOPO2, libs, descs, quick=True)
    rma = {(b.benchmarks[0], b.memory[0], b.options["op"]) for b in c.blocks if b.benchmarks[0].startswith("rma")}
    # put's bandwidth on every path, its latency between GPUs: the quick campaign stays a few launches longer
    assert rma == {("rma_bw", "device:device", "put"), ("rma_bw", "pinned:device", "put"),
                   ("rma_latency", "device:device", "put")}
    assert all(b.libraries == ["ob1"] and b.options["sync"] == "flush" for b in c.blocks
               if b.benchmarks[0].startswith("rma"))
    assert all(b.options["window"] == mpi4_and_rma.QUICK_RMA_WINDOW for b in c.blocks if b.benchmarks[0] == "rma_bw")
    assert not [b for b in c.blocks if b.options.get("persistent")]
    (overlap,) = _blocks(c, "ob1", "part_overlap")
    assert overlap.options["ready"] == "both" and overlap.options["compute-sweep"] is True
    assert overlap.options["partitions"] == "8" and overlap.memory == ["device:device"]
    assert not _blocks(c, "sys", "part_overlap") and not _blocks(c, "sys", "rma_bw")
    why = {(lb, what): reason for lb, what, reason in c.skipped}
    assert "not CUDA-aware" in why[("sys", mpi4_and_rma.MPI4_ON_DEVICE)]
    without = {x.name: describe(cuda=True, without=NEW) for x in libs}
    base, _ = plan(generated.default_campaign(TOPO2, libs, without, quick=True), libs, without)
    launches, _ = plan(c, libs, descs)
    assert len(launches) - len(base) == 4 * generated.GENERATED_REPETITIONS  # rma 3 and part_overlap 1, each repeated
    # flags a benchmark does not take are not passed: --op only to one-sided, --partitions only to partitioned
    for x in launches:
        assert ("--op" in x.engine_args) == x.benchmark.startswith("rma_")
        assert ("--partitions" in x.engine_args) == x.benchmark.startswith("part_")


def test_full_campaign_blocks_and_reasons_for_an_mpi3_library():
    libs = [lib("ob1")]
    c = generated.default_campaign(TOPO2, libs, {"ob1": describe(cuda=True)})
    lat_ops = {(b.memory[0], b.options["op"]) for b in _blocks(c, "ob1", "rma_latency")}
    assert {op for mem, op in lat_ops if mem == "device:device"} == {"put", "get", "acc", "fop", "cas"}
    assert {op for mem, op in lat_ops if mem == "host:host"} == {"put", "get"}
    assert {(b.options["op"], b.options["sync"]) for b in _blocks(c, "ob1", "rma_bw")
            if b.memory == ["device:device"]} == set(mpi4_and_rma.RMA_BANDWIDTH)
    assert all(b.sizes == "8" for b in _blocks(c, "ob1", "rma_latency") if b.options["op"] in ("fop", "cas"))
    (coll,) = [b for b in _blocks(c, "ob1", "coll") if b.options.get("persistent")]
    assert coll.operations == ["allreduce"] and coll.options["mem"] == "device"
    transfers = _blocks(c, "ob1", "part_latency")
    assert {b.memory[0] for b in transfers} == {"host:host", "device:device"}
    assert transfers[0].benchmarks == ["part_latency", "part_bw"] and transfers[0].options["partitions"] == "1,4,16,64"
    assert len(_blocks(c, "ob1", "part_overlap")) == 1

    mpi3 = generated.default_campaign(TOPO2, libs, {"ob1": describe(cuda=True, mpi3=True)})
    why = {what: reason for _, what, reason in mpi3.skipped}
    assert "MPI_Psend_init" in why["partitioned"] and "MPI_Allreduce_init" in why["persistent collectives"]
    assert not any(b.benchmarks[0].startswith("part_") for b in mpi3.blocks)
    assert not any(b.benchmarks == ["coll"] and b.options.get("persistent") for b in mpi3.blocks)
    assert _blocks(mpi3, "ob1", "rma_bw") and any(b.options.get("persistent") for b in mpi3.blocks)

    fewer = generated.default_campaign(TOPO2, libs, {"ob1": EngineDescription(description(cuda=True, without=NEW))})
    why = {what: reason for _, what, reason in fewer.skipped}
    assert "family rma" in why["one-sided (rma)"] and "family partitioned" in why["partitioned"]

    older = description(cuda=True)
    del older["mpi"]  # an engine that does not say which MPI-4 interfaces its library has: rebuild it
    with pytest.raises(DescriptionError, match=r"mpi\.features.*rebuild it"):
        EngineDescription(older)


def test_host_only_campaign_skips_part_overlap_with_the_reason():
    c = generated.default_campaign(Topology(numa_nodes={0: "0-1"}), [lib("a", aware=None)], {"a": describe()})
    assert _blocks(c, "a", "rma_latency") and _blocks(c, "a", "part_latency")
    assert {b.options["op"] for b in _blocks(c, "a", "rma_latency")} == set(mpi4_and_rma.RMA_LATENCY_OPERATIONS)
    assert "on a GPU only" in {what: why for _, what, why in c.skipped}["part_overlap"]


def test_estimate_counts_sweeps_and_the_persistent_form():
    """part_overlap's compute sweep and both ready modes, a partition-count sweep and --persistent each make a launch
    measure more than once: its estimate grows so."""
    libs = [lib("ob1")]
    descs = {"ob1": describe(cuda=True)}
    launches, _ = plan(generated.default_campaign(TOPO2, libs, descs), libs, descs)

    def measuring(x, drop=(), **options):
        """Seconds past the start-up of launch x with the flags ``drop`` left out and option values replaced."""
        args = [a for a in x.engine_args if a not in drop]
        for k, v in options.items():
            args[args.index(f"--{k}") + 1] = v
        return estimate.launch_seconds(replace(x, engine_args=args), descs) - estimate.START_S - \
            estimate.PER_RANK_S * x.ranks

    overlap = next(x for x in launches if x.benchmark == "part_overlap")
    assert measuring(overlap) > 2 * 3 * measuring(overlap, ("--compute-sweep",), ready="per-block")
    transfer = next(x for x in launches if x.benchmark == "part_bw")
    assert measuring(transfer) == pytest.approx(4 * measuring(transfer, partitions="16"))
    persistent = next(x for x in launches if "--persistent" in x.engine_args and x.benchmark == "bw")
    assert measuring(persistent) == pytest.approx(2 * measuring(persistent, ("--persistent",)))


# ---------------------------------------------------------------------------------------------------- fake engine
CAMPAIGN = """
[campaign]
name = "mpi4"
repetitions = 1
seed = 1
[[run]]
benchmarks = ["rma_latency", "rma_bw"]
memory = ["device:device"]
options = { op = "put", sync = "flush", iters = 10 }
[[run]]
benchmarks = ["latency", "bw"]
memory = ["device:device"]
options = { persistent = true, iters = 10 }
[[run]]
benchmarks = ["coll"]
operations = ["allreduce"]
options = { persistent = true, mem = "device", iters = 10 }
[[run]]
benchmarks = ["part_latency", "part_bw"]
memory = ["host:host"]
options = { partitions = "1,4", iters = 10 }
[[run]]
benchmarks = ["part_overlap"]
memory = ["device:device"]
options = { partitions = "4", ready = "both", compute-sweep = true, iters = 10 }
"""


def test_a_campaign_of_them_on_the_fake_engine(fake_setup, tmp_path, capsys):
    """Planned, run, stored, tabled and reported; the MPI-3 library's partitioned points and persistent
    collectives are unsupported with the engine's reason, under Not measured."""
    cfg = fake_setup["config"]
    text = cfg.read_text().replace('engine = "', 'cuda_aware = true\nenv = { FAKE_CUDA = "1" }\nengine = "', 1)
    cfg.write_text(text.replace('FAKE_SCALE = "1.4",', 'FAKE_SCALE = "1.4", FAKE_CUDA = "1", FAKE_MPI3 = "1",')
                   .replace('version = "1.0"\n', 'version = "1.0"\ncuda_aware = true\n'))
    campaign = tmp_path / "mpi4.toml"
    campaign.write_text(CAMPAIGN)
    rc = main(["run", str(campaign), "--config", str(cfg), "--no-detect", "--results", str(tmp_path / "res"),
               "--no-build"])
    out = capsys.readouterr()
    (outdir,) = list((tmp_path / "res").iterdir())
    st = Store(outdir / "store.sqlite", create=False)
    statuses = {(r["library"], r["benchmark"]): r["status"] for r in st.launches()}
    assert statuses[("fakempi-a", "part_overlap")] == "ok" and statuses[("fakempi-b", "part_overlap")] == "unsupported"
    assert rc == 0, out.err
    reasons = {r["reason"] for r in st.results(status="unsupported")}
    assert any("MPI_Psend_init" in r for r in reasons) and any("MPI_Allreduce_init" in r for r in reasons)
    html = (outdir / "report.html").read_text()
    for title in ("One-sided communication (RMA)", "Persistent vs regular calls", "Partitioned communication "
                  "overlapped with compute", "fig-partitioned-overlap", "MPI_Psend_init"):
        assert title in html, title
    persistent = tables.persistent_table(Results.load(st))
    assert {(r[0], r[1]) for r in persistent.rows} >= {("fakempi-a", "coll"), ("fakempi-b", "latency")}
    assert not any(r[0] == "fakempi-b" and r[1] == "coll" for r in persistent.rows)
    plan_json = json.loads((outdir / "plan.json").read_text())
    assert {x["family"] for x in plan_json["launches"]} >= {"rma", "partitioned"}
