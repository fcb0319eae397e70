# SPDX-License-Identifier: BSD-3-Clause
"""NCCL as one more library: declaration, planning, records, tables, compare; on the fake engine."""

import dataclasses
import json
import os
import sqlite3
import subprocess
import sys

import pytest
import synth
from conftest import HERE
from fake_engine import describe
from test_campaign import CUDA_DESC, lib

from gmb.engine import build_cache
from gmb.report import compare
from gmb.campaign import generated
from gmb.results import records
from gmb.machine import identity
from gmb.report import tables
from gmb.campaign.plan import plan
from gmb.campaign.spec import Block, Campaign
from gmb.cli import main
from gmb.machine.libraries import load_config
from gmb.machine.mpilibs import ConfigError, nccl_library
from gmb.results.store import Store, open_results
from gmb.machine.topology import Gpu, Topology
from gmb.results.model import Results

NCCL_DESC = describe(cuda=True, nccl="2.28.3")
TOPO4 = Topology(gpus=[Gpu(i, "NVIDIA H200") for i in range(4)],
                 links={(i, j): "NV18" for i in range(4) for j in range(4) if i != j}, numa_nodes={0: "0-63"})


def _config(tmp_path, body):
    (tmp_path / "ompi" / "bin").mkdir(parents=True, exist_ok=True)
    (tmp_path / "ompi" / "bin" / "mpirun").write_text("")
    cfg = tmp_path / "libs.toml"
    cfg.write_text(body.replace("PREFIX", str(tmp_path / "ompi")))
    return cfg


OB1 = """
[[library]]
name = "ompi-ob1"
prefix = "PREFIX"
profile = "openmpi-ob1"
version = "5.0.7"
env = { A = "1" }
cmake_args = ["-DGMB_ENABLE_CUDA=ON"]
"""


def test_declared_nccl_library_takes_its_via_library(tmp_path):
    cfg = _config(tmp_path, OB1 + '[[library]]\nname = "nccl"\ntransport = "nccl"\nvia = "ompi-ob1"\n'
                                  'env = { NCCL_DEBUG = "WARN" }\n')
    ob1, nccl = load_config(cfg)
    assert (nccl.transport, nccl.via, nccl.source) == ("nccl", "ompi-ob1", "declared")
    assert nccl.launcher_path == ob1.launcher_path and nccl.launcher_args == ob1.launcher_args
    assert nccl.env == {"A": "1", "NCCL_DEBUG": "WARN"} and nccl.cuda_aware is None
    assert build_cache.build_dir(nccl) == build_cache.build_dir(ob1)  # one engine, built once
    assert nccl.cmake_args == ob1.cmake_args


@pytest.mark.parametrize("entry,msg", [
    ('name = "nccl"\ntransport = "nccl"\n', "needs via"),
    ('name = "nccl"\ntransport = "nccl"\nvia = "ghost"\n', "not found"),
    ('name = "nccl"\ntransport = "nccl"\nvia = "ompi-ob1"\nprefix = "/x"\n', "not allowed here"),
    ('name = "nccl"\ntransport = "ucc"\nvia = "ompi-ob1"\n', "transport must be"),
    ('name = "x"\nprefix = "PREFIX"\nvia = "ompi-ob1"\n', "via applies"),
    ('name = "x"\nprefix = "PREFIX"\nbogus = 1\n', "unknown keys"),
    ('name = "ompi-ob1"\nprefix = "PREFIX"\n', "declared twice"),
])
def test_bad_nccl_declarations(tmp_path, entry, msg):
    cfg = _config(tmp_path, OB1 + "[[library]]\n" + entry)
    with pytest.raises(ConfigError, match=msg):
        load_config(cfg)


def test_nccl_via_nccl_refused(tmp_path):
    cfg = _config(tmp_path, OB1 + '[[library]]\nname = "n1"\ntransport = "nccl"\nvia = "ompi-ob1"\n'
                                  '[[library]]\nname = "n2"\ntransport = "nccl"\nvia = "n1"\n')
    with pytest.raises(ConfigError, match="itself an NCCL library"):
        load_config(cfg)


def _nccl():
    return nccl_library(lib("ob1", aware=True), "nccl")


def test_plan_for_nccl_only_device_pt2pt_and_device_collectives():
    c = Campaign("n", [
        Block(["latency", "bw", "bibw"], memory=["device:device", "host:host", "pinned:device"],
              strategies=["direct", "staged-pinned"], gpus=[0, 1]),
        Block(["bw"], memory=["device:device"], strategies=["direct"], gpus=[0, 0], path="same-gpu"),
        Block(["coll"], ranks=[4], operations=["allreduce", "reduce_scatter", "barrier", "alltoall"],
              options={"mem": "device"}),
        Block(["coll"], ranks=[4], operations=["allreduce"]),
        Block(["nbc", "halo", "peaks", "mbw"]),
    ], repetitions=1, order="sequential")
    launches, skipped = plan(c, [_nccl()], {"nccl": NCCL_DESC})
    got = [(x.benchmark, x.memory, x.strategy, x.engine_args[1] if x.benchmark == "coll" else "") for x in launches]
    assert got == [("latency", "device:device", "direct", ""), ("bw", "device:device", "direct", ""),
                   ("bibw", "device:device", "direct", ""), ("coll", "", "", "allreduce"),
                   ("coll", "", "", "alltoall")]
    assert all(x.engine_args[x.engine_args.index("--transport") + 1] == "nccl" for x in launches)
    why = {what: reason for _, what, reason in skipped}
    assert "device memory only" in why["bw host:host"] and "device memory only" in why["latency pinned:device"]
    assert "no staging" in why["bw device:device staged-pinned"]
    assert "one GPU per rank" in why["bw device:device gpus [0, 0]"]
    assert "reduce_scatter_block" in why["coll reduce_scatter"] and "no barrier" in why["coll barrier"]
    assert 'mem = "device"' in why["coll"]
    for b in ("nbc", "halo", "peaks", "mbw"):
        assert "MPI only" in why[b]
    # an engine without NCCL: nothing planned, one reason per block
    launches, skipped = plan(c, [_nccl()], {"nccl": CUDA_DESC})
    assert launches == [] and all("without NCCL" in r for _, _, r in skipped)


def test_mpi_launches_do_not_name_a_transport_and_joined_operations():
    c = Campaign("n", [Block(["coll"], ranks=[4], operations=["allreduce", "bcast"], join_operations=True,
                             options={"mem": "device"})], repetitions=2)
    launches, _ = plan(c, [lib("ob1", aware=True), _nccl()], {"ob1": NCCL_DESC, "nccl": NCCL_DESC})
    assert len(launches) == 4 and {x.engine_args[1] for x in launches} == {"allreduce,bcast"}
    mpi = [x for x in launches if x.library == "ob1"]
    assert mpi and all("--transport" not in x.engine_args for x in mpi)
    assert all("allreduce+bcast" in x.launch_id for x in launches)


def test_nccl_added_to_the_default_campaign_via_ob1():
    from gmb.engine.configurations import Configuration, nccl_configuration

    ucx = Configuration(dataclasses.replace(lib("ucx", aware=True), profile="openmpi-ucx"), "/e", NCCL_DESC)
    ob1 = Configuration(dataclasses.replace(lib("ob1", aware=True), profile="openmpi-ob1"), "/e", NCCL_DESC)
    added, why = nccl_configuration([ucx, ob1], TOPO4)
    assert added.name == "nccl" and added.library.via == "ob1" and "via 'ob1'" in why and "2.28.3" in why
    assert added.engine == "/e" and added.description is NCCL_DESC
    assert nccl_configuration([dataclasses.replace(ucx, description=CUDA_DESC)], TOPO4)[0] is None  # no NCCL
    assert nccl_configuration([ucx], Topology())[0] is None  # no GPU
    assert nccl_configuration([ucx, added], TOPO4)[0] is None  # declared already
    # a CUDA-aware configuration before one that is not (a system Open MPI found first under pml ob1)
    system = Configuration(dataclasses.replace(lib("system-ob1", aware=False), profile="openmpi-ob1"), "/e", NCCL_DESC)
    assert nccl_configuration([system, ucx, ob1], TOPO4)[0].library.via == "ob1"
    assert nccl_configuration([system, ucx], TOPO4)[0].library.via == "ucx"


def test_default_campaign_nccl_blocks():
    c = generated.default_campaign(TOPO4, [lib("ob1", aware=True), _nccl()], {"ob1": NCCL_DESC, "nccl": NCCL_DESC})
    launches, skipped = plan(c, [lib("ob1", aware=True), _nccl()], {"ob1": NCCL_DESC, "nccl": NCCL_DESC})
    nccl = [x for x in launches if x.library == "nccl"]
    assert {(x.benchmark, x.memory) for x in nccl} == {("latency", "device:device"), ("bw", "device:device"),
                                                       ("bibw", "device:device"), ("coll", "")}
    coll = next(x for x in nccl if x.benchmark == "coll")
    assert coll.engine_args[1] == "allreduce,allgather,reduce_scatter_block,alltoall,bcast"
    assert coll.ranks == 4 and coll.env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3" and "--mem" in coll.engine_args
    assert any(lb == "nccl" and what == "same-gpu" for lb, what, _ in skipped)


def _nccl_records(tmp_path):
    """A directory of record files as an MPI and an NCCL launch would write them (no campaign)."""
    d = tmp_path / "recs"
    d.mkdir()
    for (transport, scale), launch in ((t, n) for t in (("mpi", 1.0), ("nccl", 0.01)) for n in (1, 2)):
        rid = f"{transport}-coll-{launch}"
        ctx = synth.context(rid, "coll", "Open MPI v5.0.7", world_size=4, cuda=True)
        # the engine's layout (head -1 of a real record file): options.benchmark.transport, top-level nccl
        ctx["options"] = {"common": ctx["options"], "benchmark": {"operation": "allreduce,alltoall",
                                                                  "transport": transport}}
        ctx["tool"]["build"]["nccl"] = True
        ctx["nccl"] = {"available": True, "version": "2.28.3"}
        # the second launch 2 % slower: launches that agree exactly would carry no claim
        res = synth.coll_results(rid, ["allreduce", "alltoall"], synth.pow2_sizes(4, 64 << 20), 4,
                                 scale * (1 + 0.02 * (launch - 1)), "device")
        for r in res:
            r["transport"] = transport
        synth.write_jsonl(d / f"{transport}-{launch}.jsonl", [ctx, *res])
    return d


def test_records_of_an_nccl_run_are_labelled_nccl(tmp_path):
    d = _nccl_records(tmp_path)
    v = records.validator()
    for f in d.glob("*.jsonl"):
        records.read_records(f, validate=v is not None)
    st = open_results(d)
    assert st.libraries() == ["nccl-2.28.3", "openmpi-5.0.7"]
    t = tables.collectives_table(Results.load(st))
    col = {c: i for i, c in enumerate(t.columns)}
    row = next(r for r in t.rows if r[col["operation"]] == "allreduce" and r[col["size (total)"]] == "64M")
    assert row[col["fastest"]] == "nccl-2.28.3" and float(row[col["fastest / slowest"]].split("x")[0]) > 50
    assert row[col["memory"]] == "device" and row[col["ranks"]] == 4
    assert [r[col["size (total)"]] for r in t.rows if r[col["operation"]] == "allreduce"] == ["16M", "32M", "64M"]
    rows = compare.compare(Results.load(st), Results.load(st), "openmpi-5.0.7", "nccl-2.28.3").rows
    big = next(r for r in rows if r.operation == "allreduce" and r.bytes == 64 << 20)
    assert big.ratio > 50 and big.worse_pct < 0 and big.verdict == "different"  # NCCL better, over 2 launches
    # a campaign names the library itself: the declared name wins over the records' labels
    named = Store()
    named.ingest(d / "nccl-1.jsonl", library="nccl")
    assert named.libraries() == ["nccl"]


def test_unlabelled_context_without_version(tmp_path):
    ctx = synth.context("r", "bw", "Open MPI v5.0.7", cuda=True)
    ctx["options"] = {"common": {}, "benchmark": {"transport": "nccl"}}
    assert identity.library_label(ctx) == "nccl"  # no nccl object in the context: no version to name
    ctx["nccl"] = {"available": False, "reason": "built without NCCL"}
    assert identity.library_label(ctx) == "nccl"
    ctx["options"]["benchmark"]["transport"] = "mpi"
    assert identity.library_label(ctx) == "openmpi-5.0.7"
    # the layouts the harness used to read are not the engine's: they name nothing
    wrong = synth.context("r", "bw", "Open MPI v5.0.7", cuda=True)
    wrong["options"]["transport"] = "nccl"
    wrong["tool"]["build"]["nccl_version"] = "2.28.3"
    assert identity.transport_of(wrong) == "mpi" and identity.nccl_label(wrong) == "nccl"


REAL = HERE / "data" / "h200-x2"


def test_real_records_without_library_name_are_labelled_by_nccl_version(tmp_path, capsys):
    """Records of the 2 x H200 machine (gmb-bench coll, MPI and --transport nccl), ingested without a library
    name (`gmb report DIR_OF_JSONL`): the NCCL run is labelled by the NCCL version its context records, the MPI
    run by its MPI library."""
    d = tmp_path / "recs"
    d.mkdir()
    for name in ("nccl-coll.jsonl", "mpi-coll.jsonl"):
        (d / name).write_bytes((REAL / name).read_bytes())
        rf = records.read_records(d / name, validate=records.validator() is not None)
        (ctx,) = rf.contexts
        assert identity.transport_of(ctx) == ("nccl" if name.startswith("nccl") else "mpi")
    assert identity.nccl_label(ctx) == "nccl-2.28.9"  # the mpi run's context records NCCL as well
    st = open_results(d)
    assert st.libraries() == ["nccl-2.28.9", "openmpi-5.0.7"]
    assert {r["library"] for r in st.contexts()} == {"nccl-2.28.9", "openmpi-5.0.7"}
    nccl_rows = st.results("coll", library="nccl-2.28.9")
    assert nccl_rows and all(json.loads(r["json"])["transport"] == "nccl" for r in nccl_rows)
    assert main(["report", str(d), "-o", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text()
    assert ">nccl-2.28.9<" in html and ">openmpi-5.0.7<" in html


def test_fake_engine_writes_the_engines_context_layout(tmp_path):
    """The fake engine's context has what the real one writes: options.benchmark.transport and nccl.version."""
    out = tmp_path / "n.jsonl"
    env = {**os.environ, "FAKE_CUDA": "1", "FAKE_NCCL": "2.28.3",
           "PYTHONPATH": str(HERE.parent / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    subprocess.run([sys.executable, str(HERE / "fake_engine.py"), "bw", "--send", "device", "--recv", "device",
                    "--transport", "nccl", "--out", str(out)], check=True, env=env)
    rf = records.read_records(out, validate=records.validator() is not None)
    (ctx,) = rf.contexts
    assert ctx["options"]["benchmark"]["transport"] == "nccl" and ctx["nccl"] == {"available": True,
                                                                                   "version": "2.28.3"}
    assert "transport" not in ctx["options"] and identity.library_label(ctx) == "nccl-2.28.3"
    st = Store()
    st.ingest(out)
    assert st.libraries() == ["nccl-2.28.3"]


@pytest.fixture
def nccl_setup(fake_setup):
    cfg = fake_setup["config"]
    text = cfg.read_text().replace('engine = "', 'env = { FAKE_CUDA = "1", FAKE_NCCL = "2.28.3" }\nengine = "', 1)
    cfg.write_text(text + '\n[[library]]\nname = "nccl"\ntransport = "nccl"\nvia = "fakempi-a"\n')
    return fake_setup


CAMPAIGN = """
[campaign]
name = "nccl"
repetitions = 2
timeout_s = 20
seed = 5
libraries = ["fakempi-a", "nccl"]
[[run]]
benchmarks = ["bw", "latency"]
memory = ["device:device", "host:host"]
gpus = [0, 1]
path = "nvlink"
[[run]]
benchmarks = ["coll"]
operations = ["allreduce", "alltoall", "barrier"]
join_operations = true
ranks = [2]
options = { mem = "device" }
"""


def test_campaign_with_nccl_end_to_end(nccl_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    rc = main(["run", str(c), "--config", str(nccl_setup["config"]), "--no-detect", "--results",
               str(tmp_path / "res"), "--no-build", "--no-progress"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    (outdir,) = list((tmp_path / "res").iterdir())
    db = sqlite3.connect(outdir / "store.sqlite")
    launched = db.execute("SELECT library, benchmark, memory, argv FROM launches").fetchall()
    nccl = [r for r in launched if r[0] == "nccl"]
    assert len(nccl) == 2 * 3  # bw, latency on device:device; coll; x2 repetitions
    assert all("--transport" in json.loads(r[3]) and r[2] in ("device:device", "") for r in nccl)
    skipped = db.execute("SELECT what, reason FROM skipped WHERE library='nccl'").fetchall()
    assert ("bw host:host", "NCCL moves device memory only (device:device)") in skipped
    assert any(w == "coll barrier" for w, _ in skipped)
    st = Store(outdir / "store.sqlite")
    assert st.libraries() == ["fakempi-a", "nccl"]
    assert {json.loads(r["json"])["transport"] for r in st.results(library="nccl")} == {"nccl"}
    t = tables.collectives_table(Results.load(st))
    assert "nccl" in t.columns and t.rows
    html = (outdir / "report.html").read_text()
    assert "Collectives: bus bandwidth" in html and ">nccl<" in html
    capsys.readouterr()
    assert main(["compare", str(outdir), str(outdir), "--a-library", "fakempi-a", "--b-library", "nccl"]) == 0
    text = capsys.readouterr().out
    assert "coll" in text and "bw" in text and "B/A" in text


def test_generated_campaign_adds_nccl(fake_setup, tmp_path, capsys, monkeypatch):
    cfg = fake_setup["config"]
    cfg.write_text(cfg.read_text().replace('engine = "', 'env = { FAKE_CUDA = "1", FAKE_NCCL = "2.28.3" }\n'
                                                          'engine = "', 1))
    topo = tmp_path / "topo.json"
    topo.write_text(json.dumps({"gpus": [{"index": i, "name": "H200"} for i in range(4)],
                                "links": {f"{i}-{j}": "NV18" for i in range(4) for j in range(4) if i < j},
                                "numa_nodes": {"0": "0-63"}}))
    rc = main(["plan", "--config", str(cfg), "--no-detect", "--topology", str(topo)])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "NCCL library 'nccl' added, via 'fakempi-a'" in out.err and "estimated" in out.err
    assert ".nccl.coll-allreduce+allgather+reduce_scatter_block+alltoall+bcast." in out.out
    assert main(["run", "--dry-run", "--config", str(cfg), "--no-detect", "--topology", str(topo)]) == 0
    assert main(["run", "--config", str(cfg), "--no-detect", "--topology", str(topo)]) == 2
