# SPDX-License-Identifier: BSD-3-Clause
"""Several node counts in one campaign: one results directory, the node count part of each point, collectives in
strong and weak scaling (the engine's counts.split says which operations keep each rank's share by growing S)."""
import json
import sqlite3
from pathlib import Path

from test_cli import run_gmb

from gmb.campaign import plan as plan_mod
from gmb.campaign import spec
from gmb.engine.description import EngineDescription
from gmb.results.model import Results
from gmb.results.store import open_results
from conftest import HOST_ENGINE
from test_mpi4_rma import lib

SCALING = """
[campaign]
name = "scaling"
repetitions = 1
[[run]]
benchmarks = ["coll"]
operations = ["allreduce", "alltoall"]
join_operations = true
sizes = "1M"
nodes = [1, 2]
ranks_per_node = 2
scaling = "weak"
"""


def test_weak_scaling_grows_only_what_the_ranks_split():
    desc = EngineDescription(json.loads(HOST_ENGINE.read_text()))
    c = spec.parse_campaign(__import__("tomllib").loads(SCALING))
    launches, skipped = plan_mod.plan(c, [lib("a", aware=None)], {"a": desc}, hosts=2)
    got = sorted((x.nodes, x.ranks, x.scaling, x.engine_args[1], x.engine_args[x.engine_args.index("--sizes") + 1])
                 for x in launches)
    assert got == [(1, 2, "weak", "allreduce", "1M"), (1, 2, "weak", "alltoall", str(1 << 20)),
                   (2, 4, "weak", "allreduce", "1M"), (2, 4, "weak", "alltoall", str(2 << 20))]
    assert all(".N1." in x.launch_id or ".N2." in x.launch_id for x in launches)
    # one host: the 2-node launches are skipped with the reason
    launches, skipped = plan_mod.plan(c, [lib("a", aware=None)], {"a": desc}, hosts=1)
    assert {x.nodes for x in launches} == {1}
    assert any("on 2 nodes" in what and "has 1 host" in why for _, what, why in skipped)


def test_a_run_over_node_counts_is_one_results_directory(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text(SCALING.replace('scaling = "weak"', 'scaling = "strong"').replace(
        'operations = ["allreduce", "alltoall"]', 'operations = ["allreduce"]').replace(
        "[campaign]", '[campaign]\nlibraries = ["fakempi-a"]'))
    hostfile = tmp_path / "hosts"
    hostfile.write_text("nodeA slots=2\nnodeB slots=2\n")
    rc = run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                 "--no-build", "--hostfile", hostfile, "--no-report")
    assert rc == 0, capsys.readouterr().err
    (outdir,) = list((tmp_path / "res").iterdir())
    argv = [json.loads(r[0]) for r in sqlite3.connect(outdir / "store.sqlite").execute("SELECT argv FROM launches")]
    assert sorted((a[a.index("-np") + 1], a[a.index("--map-by") + 1]) for a in argv) == \
        [("2", "ppr:2:node"), ("4", "ppr:2:node")]
    results = Results.load(open_results(outdir))
    hosts = sorted({r.config.hosts for r in results.ok("coll")})
    assert hosts == [1, 2]
    names = {r.configuration for r in results.ok("coll")}
    assert any("2 hosts" in n for n in names) and any("1 host" in n for n in names)
    assert {r.scaling for r in results.ok("coll")} == {"strong"}
    # the report's scaling table and answer: one series per library and size, its time at each node count and its
    # growth, named without the node count
    from gmb.report import answers, render_text, tables
    (t,) = [t for t in tables.all_tables(results) if t.title.startswith("Collectives over node counts")]
    assert t.columns[6:8] == ["1 node", "2 nodes"]
    sizes = {r[5] for r in t.rows}
    assert len(t.rows) == len(sizes) > 1  # the fake measured several sizes: a series each
    assert {tuple(r[:5]) for r in t.rows} == {("fakempi-a", "allreduce", "host", "strong scaling (S fixed)", 2)}
    # one launch a point: the growth without an interval, said so
    assert all(r[6].endswith("GB/s)") and r[8].endswith("x (no interval: one launch)")
               and 0.9 < float(r[8].split("x")[0]) < 1.1 for r in t.rows)
    text = " ".join(render_text.answers_text(answers.answers(results)).split())
    assert ("allreduce (host), strong scaling (S fixed) at 64K, 1 -> 2 nodes, 2 ranks per node: time growth "
            "fakempi-a ") in text  # the fake's figures move a little from launch to launch: a growth near 1


def test_one_rank_on_one_node_is_no_collective_and_is_skipped_with_the_reason():
    desc = EngineDescription(json.loads(HOST_ENGINE.read_text()))
    c = spec.parse_campaign(__import__("tomllib").loads(SCALING.replace("ranks_per_node = 2", "ranks_per_node = 1")))
    launches, skipped = plan_mod.plan(c, [lib("a", aware=None)], {"a": desc}, hosts=2)
    assert {(x.nodes, x.ranks) for x in launches} == {(2, 2)}
    assert any("on 1 node" in what and "a collective on one rank moves no data" in why for _, what, why in skipped)


def test_device_collectives_on_an_engine_without_cuda_are_skipped_with_the_reason():
    """The shipped scaling campaign on a host-only engine: its collectives on device memory are named as skipped
    (the engine has no device memory), never planned as launches that would each exit 3."""
    desc = EngineDescription(json.loads(HOST_ENGINE.read_text()))
    c = spec.load_campaign(Path(__file__).parents[2] / "campaigns" / "scaling.toml")
    launches, skipped = plan_mod.plan(c, [lib("a", aware=None)], {"a": desc}, hosts=2)
    assert {(x.benchmark, x.memory) for x in launches} == {("latency", "host:host"), ("bw", "host:host")}
    device = [(what, why) for _, what, why in skipped if "device" in what]
    assert ("coll on device memory (block 1)", "memory kind device unavailable: this gmb-bench was built without CUDA "
            "(reconfigure with -DGMB_ENABLE_CUDA=ON)") in device and len(device) == 4


def test_plan_takes_a_hostfile_as_run_does(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text(SCALING.replace("[campaign]", '[campaign]\nlibraries = ["fakempi-a"]'))
    hostfile = tmp_path / "hosts"
    for hosts, counts in (("nodeA slots=2\nnodeB slots=2\n", "N1 N2"), ("nodeA:2\n", "N1")):
        hostfile.write_text(hosts)
        assert run_gmb("plan", c, "--config", fake_setup["config"], "--no-detect", "--hostfile", hostfile) == 0
        out = capsys.readouterr().out
        assert " ".join(n for n in ("N1", "N2") if f".{n}." in out) == counts
        assert ("on 2 nodes: the session has 1 host(s)" in out) == (counts == "N1")
