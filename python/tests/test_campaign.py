# SPDX-License-Identifier: BSD-3-Clause
import json
import os
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from fake_engine import describe, description

from gmb.campaign import generated
from gmb.run import execute, why_failed
from gmb.machine import mpilibs
from gmb.campaign import checks, sizes, spec
from gmb.campaign.plan import plan, Launch
from gmb.campaign.results_dir import new_results_dir, read_plan
from gmb.campaign.spec import Block, Campaign, CampaignError, load_campaign, parse_campaign
from gmb.engine.description import EngineDescription
from gmb.machine.mpilibs import MpiLibrary
from gmb.results.store import Store
from gmb.machine.topology import Gpu, Topology

CUDA_DESC = describe(cuda=True)
# an engine that lists only the point-to-point benchmarks and coll, built without CUDA
HOST_DESC = describe(without=("mbw", "mlat", "um", "nbc", "halo", "peaks", "doctor"))


def lib(name, aware=None, launcher="mpirun"):
    return MpiLibrary(name=name, family="openmpi", version="5", prefix="/x", launcher_path="/x/bin/mpirun",
                      launcher=launcher, cuda_aware=aware)


def test_parse_and_expand_matrix(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text("""
[campaign]
name = "m"
repetitions = 2
seed = 4
[[run]]
benchmarks = ["latency", "bw"]
memory = ["host:host", "device:device"]
strategies = ["direct", "staged-pinned"]
sizes = "1:4K"
ranks = [2]
gpus = [0, 1]
options = { iters = 10, validate = true, window = 8 }
""")
    c = load_campaign(f)
    libs = [lib("a", aware=True), lib("b", aware=True)]
    launches, skipped = plan(c, libs, {"a": CUDA_DESC, "b": CUDA_DESC})
    assert len(launches) == 2 * 2 * 2 * 2 * 2  # bench x lib x mem x strategy x reps
    assert not skipped
    ids = [x.launch_id for x in launches]
    assert len(set(ids)) == len(ids)
    x = next(x for x in launches if x.memory == "device:device" and x.strategy == "staged-pinned")
    assert x.engine_args[:7] == [x.benchmark, "--sizes", "1:4K", "--send", "device", "--recv", "device"]
    assert "--validate" in x.engine_args and "--window" in x.engine_args
    assert x.env["CUDA_VISIBLE_DEVICES"] == "0,1"
    # randomised but reproducible
    again, _ = plan(c, libs, {"a": CUDA_DESC, "b": CUDA_DESC})
    assert [y.launch_id for y in again] == ids
    assert ids != sorted(ids)


def test_skips_with_reasons():
    c = Campaign("s", [Block(["latency", "nbc"], memory=["host:host", "device:device"], strategies=["direct"],
                             libraries=["plain", "ghost"])], repetitions=1, order="sequential")
    launches, skipped = plan(c, [lib("plain", aware=False)], {"plain": HOST_DESC})
    assert [(x.library, x.benchmark, x.memory) for x in launches] == [("plain", "latency", "host:host")]
    reasons = {(lb, what): why for lb, what, why in skipped}
    assert "library not found" in reasons[("ghost", "block 1")]
    assert "unavailable" in reasons[("plain", "latency device:device")]
    assert "does not list" in reasons[("plain", "nbc")]


def test_a_block_binding_unlike_the_librarys_own_is_refused_at_plan_time():
    bound = replace(lib("bound"), launcher_args=["--bind-to", "none"])
    c = Campaign("s", [Block(["latency"], memory=["host:host"], bind="core"),
                       Block(["latency"], memory=["host:host"], bind="none")], repetitions=1, order="sequential")
    launches, skipped = plan(c, [bound, lib("plain")], {"bound": HOST_DESC, "plain": HOST_DESC})
    assert sorted((x.library, x.bind) for x in launches) == [("bound", "none"), ("plain", "core"),
                                                               ("plain", "none")]
    assert [(lb, what) for lb, what, why in skipped] == [("bound", "latency (block 1)")]
    assert "launcher_args bind them otherwise" in skipped[0][2]


def test_direct_device_refused_for_non_cuda_aware():
    c = Campaign("s", [Block(["bw"], memory=["device:device"], strategies=["direct", "staged-pinned"])],
                 repetitions=1)
    launches, skipped = plan(c, [lib("sys", aware=False)], {"sys": CUDA_DESC})
    assert [x.strategy for x in launches] == ["staged-pinned"]
    assert any("not CUDA-aware" in why for _, _, why in skipped)


def test_managed_memory_spec():
    assert spec.parse_memory("managed:host:managed:device") == ("managed:host", "managed:device")
    assert spec.parse_memory("host:device") == ("host", "device")
    with pytest.raises(ValueError):
        spec.parse_memory("host")


def test_ceilings_first():
    c = Campaign("s", [Block(["latency", "bw"], memory=["host:host"]), Block(["peaks"])], repetitions=3, seed=1)
    launches, _ = plan(c, [lib("a")], {"a": CUDA_DESC})
    assert [x.benchmark for x in launches[:3]] == ["peaks"] * 3
    assert all(x.benchmark != "peaks" for x in launches[3:])


def test_default_campaign_gpu_machine():
    topo = Topology(gpus=[Gpu(0, "H200"), Gpu(1, "H200")], links={(0, 1): "NV18", (1, 0): "NV18"},
                    numa_nodes={0: "0-7"})
    c = generated.default_campaign(topo, [lib("ucx", aware=True), lib("sys", aware=False)],
                                  {"ucx": CUDA_DESC, "sys": CUDA_DESC})
    paths = {(b.libraries[0], b.path) for b in c.blocks}
    assert ("ucx", "ceilings") in paths and ("ucx", "nvlink") in paths and ("ucx", "same-gpu") in paths
    assert ("ucx", "host-device") in paths and ("sys", "host") in paths and ("ucx", "managed") in paths
    assert c.blocks[0].benchmarks == ["peaks"]
    sys_dd = next(b for b in c.blocks if b.libraries == ["sys"] and b.path == "nvlink")
    assert sys_dd.strategies == ["staged-pinned"]
    um = next(b for b in c.blocks if b.benchmarks == ["um"])
    assert len(um.memory) == 4
    launches, _ = plan(c, [lib("ucx", aware=True), lib("sys", aware=False)], {"ucx": CUDA_DESC, "sys": CUDA_DESC})
    assert not any(x.library == "sys" and x.strategy == "direct" and "device" in x.memory for x in launches)


def test_default_quick_host_only():
    topo = Topology(numa_nodes={0: "0-1"})
    c = generated.default_campaign(topo, [lib("a"), lib("b")], {"a": HOST_DESC}, quick=True)
    assert all(m in ("", "host:host") for b in c.blocks for m in b.memory)
    assert any(lb == "b" and "gmb build" in why for lb, _, why in c.skipped)
    assert {b.benchmarks[0] for b in c.blocks} == {"latency", "coll"}
    text = c.to_toml()
    again = parse_campaign(__import__("tomllib").loads(text))
    assert len(again.blocks) == len(c.blocks)


@pytest.mark.parametrize("body,msg", [
    ("[campaign]\nname='x'\n", "no \\[\\[run\\]\\]"),
    ("[[run]]\nmemory=['host:host']\n", "'benchmarks' is required"),
    ("[[run]]\nbenchmarks=['bw']\nmemory=['host']\n", "send:recv"),
    ("[[run]]\nbenchmarks=['bw']\nbogus=1\n", "unknown keys"),
    ("[campaign]\nrepetitions=0\n[[run]]\nbenchmarks=['bw']\n", "repetitions"),
    ("this is not toml", "not valid TOML"),
    ('[campaign]\nrepetitions = "abc"\n[[run]]\nbenchmarks=["bw"]\n', "repetitions must be an integer >= 1"),
    ('[campaign]\nrepetitions = true\n[[run]]\nbenchmarks=["bw"]\n', "repetitions must be an integer >= 1"),
    ('[campaign]\nseed = "x"\n[[run]]\nbenchmarks=["bw"]\n', "seed must be an integer"),
    ('[campaign]\nnmae = "x"\n[[run]]\nbenchmarks=["bw"]\n', r"\[campaign\]: unknown keys \['nmae'\]"),
    ('campaign = 3\n[[run]]\nbenchmarks=["bw"]\n', "campaign must be a \\[campaign\\] table"),
    ('[[run]]\nbenchmarks=["bw"]\nranks = ["two"]\n', "ranks must be an integer >= 1"),
    ('[[run]]\nbenchmarks=["bw"]\nranks = 0\n', "ranks must be an integer >= 1"),
    ('[[run]]\nbenchmarks=["bw"]\noptions = "x"\n', "options must be a table"),
    ('[[run]]\nbenchmarks=["bw"]\noptions = { iters = [1] }\n', "options.iters must be a string, number or boolean"),
    ('[[run]]\nbenchmarks=["bw"]\nsizes = ["1", "2"]\n', "sizes must be a string"),
    ('[[run]]\nbenchmarks=["bw"]\njoin_operations = "yes"\n', "join_operations must be true or false"),
    ('[[run]]\nbenchmarks=["bw"]\npath = 3\n', "path must be a string"),
    ('[[run]]\nbenchmarks=["bw"]\nrepetitions = 0\n', r"\[\[run\]\] #1: repetitions must be an integer >= 1 \(got 0\)"),
    ('[[run]]\nbenchmarks=["bw"]\nrepetitions = "2"\n', r"repetitions must be an integer >= 1 \(got \"2\"\)"),
    ('[[run]]\nbenchmarks=["bw"]\nrepetitions = true\n', r"repetitions must be an integer >= 1 \(got true\)"),
    ('run = 5\n', "run must be \\[\\[run\\]\\] tables"),
    ('[run]\nbenchmarks=["bw"]\n', "\\[run\\] must be written \\[\\[run\\]\\]"),
])
def test_bad_campaign_files(tmp_path, body, msg):
    f = tmp_path / "bad.toml"
    f.write_text(body)
    with pytest.raises(CampaignError, match=msg):
        load_campaign(f)


def test_a_block_with_repetitions_of_its_own(tmp_path):
    """A block's repetitions replace the campaign's for its points alone, and survive the campaign written back."""
    f = tmp_path / "c.toml"
    f.write_text('[campaign]\nrepetitions = 4\n[[run]]\nbenchmarks = ["latency"]\nmemory = ["host:host"]\n'
                 'repetitions = 2\n[[run]]\nbenchmarks = ["bw"]\nmemory = ["host:host"]\n')
    c = load_campaign(f)
    assert [b.repetitions for b in c.blocks] == [2, None]
    launches, _ = plan(c, [lib("plain")], {"plain": HOST_DESC})
    reps = {bench: sorted(x.repetition for x in launches if x.benchmark == bench) for bench in ("latency", "bw")}
    assert reps == {"latency": [1, 2], "bw": [1, 2, 3, 4]}
    again = tmp_path / "again.toml"
    again.write_text(c.to_toml())
    assert [b.repetitions for b in load_campaign(again).blocks] == [2, None]


def test_results_dir_never_reused(tmp_path):
    a = new_results_dir(tmp_path, "q")
    b = new_results_dir(tmp_path, "q")
    assert a != b and a.is_dir() and b.is_dir() and a.name.startswith("q-")


TOPO2 = Topology(gpus=[Gpu(0, "H200"), Gpu(1, "H200")], links={(0, 1): "NV18", (1, 0): "NV18"}, numa_nodes={0: "0-7"})


def test_unknown_cuda_awareness_is_planned_as_not_aware():
    """cuda_aware None (e.g. MPICH on a GPU machine: no ompi_info) gets staged-pinned, never device pointers, and the
    skip reason says the awareness is unknown (not that the library is not aware)."""
    libs = [lib("mpich", aware=None), lib("sys", aware=False), lib("ucx", aware=True)]
    caps = {x.name: CUDA_DESC for x in libs}
    c = generated.default_campaign(TOPO2, libs, caps)
    launches, skipped = plan(c, libs, caps)
    for name in ("mpich", "sys"):
        dd = {x.strategy for x in launches if x.library == name and "device" in x.memory and x.benchmark != "um"}
        assert dd == {"staged-pinned"}, name
        assert not any(x.library == name and x.benchmark == "um" for x in launches)
        coll = next(x for x in launches if x.library == name and x.benchmark == "coll")
        assert "--mem" not in coll.engine_args
    assert "direct" in {x.strategy for x in launches if x.library == "ucx"}
    reasons = {(lb, what): why for lb, what, why in c.skipped}
    assert "CUDA awareness unknown" in reasons[("mpich", "direct device buffers")]
    assert "staged-pinned instead" in reasons[("mpich", "direct device buffers")]
    assert reasons[("sys", "direct device buffers")].startswith("library is not CUDA-aware")
    # quick campaign and a campaign file alike (the engine's default strategy is direct, too)
    q = generated.default_campaign(TOPO2, libs[:1], caps, quick=True)
    assert {s for b in q.blocks if "device:device" in b.memory for s in b.strategies} == {"staged-pinned"}
    f = Campaign("f", [Block(["bw"], memory=["device:device", "host:host"], strategies=["direct", ""]),
                       Block(["um"], memory=["managed:device:managed:device"])], repetitions=1)
    launches, skipped = plan(f, libs[:1], caps)
    assert sorted((x.benchmark, x.memory, x.strategy) for x in launches) == [
        ("bw", "host:host", ""), ("bw", "host:host", "direct"), ("um", "managed:device:managed:device", "")]
    assert {(what, "unknown" in why) for _, what, why in skipped} == {("bw device:device direct", True)}


def test_inter_node_blocks_with_several_hosts():
    libs = [lib("ucx", aware=True), lib("sys", aware=False)]
    caps = {x.name: CUDA_DESC for x in libs}
    one = generated.default_campaign(TOPO2, libs, caps)
    assert not any(b.path == "inter-node" for b in one.blocks)
    two = generated.default_campaign(TOPO2, libs, caps, hosts=2)
    inter = {(b.libraries[0], tuple(b.memory), tuple(b.strategies), tuple(b.nodes or ())): b
             for b in two.blocks if b.path == "inter-node"}
    pair = ("latency", "bw", "bibw")
    assert set(inter) == {("ucx", ("",), ("",), ()),  # the network's own ceiling: peaks across two nodes
                          ("ucx", ("host:host", "pinned:pinned"), ("",), ()),
                          ("ucx", ("device:device",), ("direct",), ()),
                          ("ucx", ("device:device",), ("direct",), (2,)),  # whole nodes: every GPU with its own
                          ("sys", ("host:host", "pinned:pinned"), ("",), ())}
    assert inter[("ucx", ("",), ("",), ())].benchmarks == ["peaks"]
    assert all(b.ranks == [2] and tuple(b.benchmarks) == pair for k, b in inter.items() if k[1] != ("",) and not k[3])
    assert inter[("ucx", ("device:device",), ("direct",), ())].gpus == [0]  # each node's first GPU
    whole = inter[("ucx", ("device:device",), ("direct",), (2,))]
    assert whole.ranks_per_node == 2 and whole.gpus == [0, 1] and "mbw" in whole.benchmarks
    assert any(lb == "sys" and what == "inter-node device:device" for lb, what, _ in two.skipped)
    # without GPUs (or a build without CUDA): host memory only; --quick too
    host = generated.default_campaign(Topology(numa_nodes={0: "0-3"}), [lib("a")], {"a": HOST_DESC}, quick=True,
                                     hosts=3)
    assert [(b.path, b.memory) for b in host.blocks if b.path == "inter-node"] == [("inter-node", ["host:host"])]
    launches, _ = plan(two, libs, caps)
    x = next(x for x in launches if x.planned_path == "inter-node")
    assert x.ranks == 2 and x.env in ({}, {"CUDA_VISIBLE_DEVICES": "0"})
    # one host known (--nodes 1, a hostfile of one host): inter-node blocks are skipped with the reason
    launches, skipped = plan(two, libs, caps, hosts=1)
    assert not any(x.planned_path == "inter-node" for x in launches)
    assert any("(inter-node)" in what and "one host" in why for _, what, why in skipped)


def test_placement_of_launches_on_several_nodes():
    def launch(bench, path, ranks=2):
        return Launch("i", "l", bench, "host:host", "", ranks, 1, [bench], {}, path, None, 10,
                      CUDA_DESC.benchmark(bench).family)

    assert execute.placement(launch("bw", "inter-node"), None, None) == (None, 1)  # hostfile: ppr 1 per node
    assert execute.placement(launch("bw", "inter-node"), 4, 4) == (2, 1)  # srun: 2 nodes, one rank each
    assert execute.placement(launch("bw", "host"), 4, 4) == (1, None)  # meant for one node: stays there
    assert execute.placement(launch("bw", None), 4, 4) == (2, 1)  # no path: one rank per node (as before)
    assert execute.placement(launch("coll", None, 16), 4, 4) == (4, 4)
    assert execute.placement(launch("bw", "host"), None, None) == (None, None)


def test_name_checks():
    c = Campaign("c", [Block(["latency", "bww"], libraries=["a"])], libraries=["*"])
    with pytest.raises(CampaignError, match="unknown benchmark 'bww'; did you mean 'bw'"):
        checks.check_benchmark_names(c, {"a": HOST_DESC})
    # one engine lists nbc, another newbench
    c = replace(c, blocks=[replace(c.blocks[0], benchmarks=["latency", "nbc", "newbench"])])
    newer = description()
    newer["benchmarks"].append({**newer["benchmarks"][0], "name": "newbench"})
    checks.check_benchmark_names(c, {"a": HOST_DESC, "b": describe(), "c": EngineDescription(newer)})
    with pytest.raises(CampaignError, match="unknown benchmark 'newbench'"):
        checks.check_benchmark_names(c, {"a": describe()})
    checks.check_benchmark_names(c, {})  # no engine described itself: nothing to check against
    checks.check_library_names(c, ["a", "b"])
    c = replace(c, libraries=["a", "c"])
    with pytest.raises(CampaignError, match=r"\[campaign\] libraries: unknown library 'c'.*found or declared: a, b"):
        checks.check_library_names(c, ["a", "b"])


def test_sizes_as_a_number_and_shipped_campaigns_still_load():
    c = parse_campaign({"run": [{"benchmarks": "bw", "sizes": 1024}]})
    assert c.blocks[0].sizes == "1024" and c.blocks[0].benchmarks == ["bw"]
    for f in sorted((Path(__file__).parents[2] / "campaigns").glob("*.toml")):
        if f.name != "tolerances.example.toml":
            c = load_campaign(f)
            checks.check_benchmark_names(c, {"a": describe()})


def test_engine_doctor_refines_unknown_awareness_and_finds_settings(monkeypatch, capsys):
    from gmb.engine import awareness, doctor
    from gmb.engine.configurations import Configuration

    verdicts = {"m1": {"gpu_awareness": {"verdict": "aware", "summary": "proved"}},
                "m2": {"crashed": True, "gpu_awareness": {"verdict": "not aware", "summary": "crashed (signal 11)"}},
                "m3": {"error": "exit 1: no"},
                "known": {"gpu_awareness": {"verdict": "not aware", "summary": "no CUDA support"}}}
    asked = []

    def fake(lib, engine, timeout=120):
        asked.append((lib.name, dict(lib.env)))
        if lib.name == "m2" and lib.env.get("UCX_MEMTYPE_CACHE") == "n":  # the remedy works
            return {"gpu_awareness": {"verdict": "aware", "summary": "proved"}}
        return verdicts[lib.name]

    monkeypatch.setattr(doctor, "engine_doctor", fake)
    libs = [lib("m1"), lib("m2"), lib("m3"), lib("known", aware=False)]
    confs, found = awareness.doctor_configurations([Configuration(x, "/e", CUDA_DESC) for x in libs], TOPO2)
    assert [c.library.cuda_aware for c in confs] == [True, False, None, False]
    assert "m3: CUDA awareness unknown" in capsys.readouterr().err
    # m2, not aware as configured, gets its family's GPU settings tried one at a time; m3 (no answer) and "known"
    # (built without CUDA) get none
    assert [name for name, env in asked] == ["m1", "m2", "m2", "m2", "m3", "known"]
    m2 = next(f for f in found if f["library"] == "m2")
    assert [(f["setting"], f["kind"]) for f in m2["findings"]] == [("UCX_MEMTYPE_CACHE=n", "remedy")]
    assert m2["findings"][0]["effect"] == "makes it work: with it the doctor says aware (proved)"
    asked.clear()
    assert awareness.doctor_configurations([Configuration(lib("m4"), "/e", CUDA_DESC)], Topology())[1] == []  # no GPU
    assert asked == []


def test_the_doctors_answers_are_kept_per_configuration_engine_and_gpus(monkeypatch, tmp_path, capsys):
    """A second session asks no doctor for the same configuration, engine and GPUs; --refresh, a rebuilt engine,
    other GPUs or another setting ask again; a doctor that could not run is not kept."""
    import os

    from gmb.engine import awareness, doctor
    from gmb.engine.configurations import Configuration

    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    asked = []
    answer = {"gpu_awareness": {"verdict": "aware", "summary": "proved"}}

    def fake(lib, engine, timeout=120):
        asked.append(lib.name)
        return answer

    monkeypatch.setattr(doctor, "engine_doctor", fake)
    engine = tmp_path / "gmb-bench"
    engine.write_text("an engine")
    conf = Configuration(lib("m1"), str(engine), CUDA_DESC)

    def session(c=conf, topo=TOPO2, refresh=False):
        asked.clear()
        confs, found = awareness.doctor_configurations([c], topo, refresh=refresh)
        return list(asked), confs[0].library.cuda_aware, found

    first = session()
    assert first[0] and first[1] is True
    again = session()
    assert again == ([], True, first[2])  # nothing asked, the same answers
    assert "as an earlier session found them" in capsys.readouterr().err
    assert session(refresh=True)[0]
    assert session(topo=Topology(gpus=[Gpu(0, "H100")]))[0]
    assert session(c=Configuration(lib("m1", launcher="mpiexec"), str(engine), CUDA_DESC))[0]
    os.utime(engine, ns=(1, 1))  # rebuilt
    assert session()[0] and not session()[0]
    answer = {"error": "timed out"}
    assert session(c=Configuration(lib("m2"), str(engine), CUDA_DESC))[0]
    assert session(c=Configuration(lib("m2"), str(engine), CUDA_DESC))[0]  # not kept: asked again


def test_settings_that_matter_ablates_each_setting(monkeypatch):
    """A library proven aware: the doctor runs again without each of its settings; those that change the verdict or
    the fresh-buffer check are the settings that matter (pml ucx: UCX's memory-type cache crashes device memory)."""
    from gmb.engine import doctor

    ucx = MpiLibrary(name="ucx", family="openmpi", version="5", prefix="/x", launcher_path="/x/bin/mpirun",
                     launcher="mpirun", env={"UCX_MEMTYPE_CACHE": "n", "UCX_WARN_UNUSED_ENV_VARS": "n"},
                     launcher_args=["--mca", "pml", "ucx", "--bind-to", "none"], cuda_aware=True)

    def fake(lib, engine, timeout=120):
        if "UCX_MEMTYPE_CACHE" not in lib.env:
            return {"crashed": True, "signal": 11, "gpu_awareness": {"verdict": "not aware", "summary": "crashed"}}
        fresh = "passed" if "ucx" not in lib.launcher_args else "failed"
        return {"gpu_awareness": {"verdict": "aware", "summary": "proved"},
                "fresh_buffers": {"status": fresh, "detail": "2-byte window: wrong data" if fresh == "failed" else ""}}

    monkeypatch.setattr(doctor, "engine_doctor", fake)
    out = doctor.settings_that_matter(ucx, Path("/e"))
    assert out["tried"] == ["without UCX_MEMTYPE_CACHE=n", "without UCX_WARN_UNUSED_ENV_VARS=n",
                            "without --mca pml ucx"]
    assert [(f["setting"], f["kind"]) for f in out["findings"]] == [("UCX_MEMTYPE_CACHE=n", "needed"),
                                                                    ("--mca pml ucx", "reallocation")]
    assert out["findings"][0]["effect"] == ("needed: without it the doctor says not aware (the awareness proof "
                                            "crashed: signal 11)")
    assert out["findings"][1]["effect"] == ("decides whether device buffers freed and allocated again move correctly: "
                                            "without it the check passed, with it failed")
    assert out["as_configured"] == ("aware (proved); device buffers freed and allocated again: failed (2-byte window: "
                                    "wrong data)")


def test_mpich_needing_two_settings_at_once_gets_them_tried_together(monkeypatch):
    """An MPICH built with CUDA on a site that turned its GPU support off (MPIR_CVAR_ENABLE_GPU=0 in the
    environment), found without its GPU profile: GPU support on alone crashes (UCX's memory-type cache), the cache
    off alone changes nothing; only both together prove it aware, and that is the remedy reported. A library that
    one setting fixes is not also tried with all of them."""
    from gmb.engine import doctor

    mpich = MpiLibrary(name="mpich-4.0.2", family="mpich", version="4.0.2", prefix="/m", launcher_path="/m/bin/mpiexec",
                       launcher="mpiexec")
    asked = []

    def fake(lib, engine, timeout=120):
        asked.append(dict(lib.env))
        if lib.env.get("MPIR_CVAR_ENABLE_GPU") == "1" and lib.env.get("UCX_MEMTYPE_CACHE") == "n":
            return {"gpu_awareness": {"verdict": "aware", "summary": "proved"}}
        if lib.env.get("MPIR_CVAR_ENABLE_GPU") == "1":
            return {"crashed": True, "signal": 11, "gpu_awareness": {"verdict": "not aware", "summary": "crashed"}}
        return {"gpu_awareness": {"verdict": "not aware", "summary": "MPIX_GPU_query_support says no"}}

    monkeypatch.setattr(doctor, "engine_doctor", fake)
    out = doctor.settings_that_matter(mpich, Path("/e"))
    assert out["tried"] == ["with MPIR_CVAR_ENABLE_GPU=1", "with UCX_MEMTYPE_CACHE=n",
                            "with UCX_WARN_UNUSED_ENV_VARS=n",
                            "with MPIR_CVAR_ENABLE_GPU=1 UCX_MEMTYPE_CACHE=n UCX_WARN_UNUSED_ENV_VARS=n"]
    assert [(f["setting"], f["kind"]) for f in out["findings"]] == [
        ("MPIR_CVAR_ENABLE_GPU=1 UCX_MEMTYPE_CACHE=n UCX_WARN_UNUSED_ENV_VARS=n", "remedy")]
    assert out["findings"][0]["effect"] == "makes it work: with it the doctor says aware (proved)"
    # with its profile (what a GPU node runs) it is aware, and on that site each of the two settings is needed
    asked.clear()
    profiled = mpilibs.with_gpu_support(mpich)
    out = doctor.settings_that_matter(profiled, Path("/e"))
    assert [(f["setting"], f["kind"]) for f in out["findings"]] == [("MPIR_CVAR_ENABLE_GPU=1", "needed"),
                                                                    ("UCX_MEMTYPE_CACHE=n", "needed")]
    assert "crashed: signal 11" in out["findings"][1]["effect"]


def test_damaged_plan_is_a_campaign_error(tmp_path):
    (tmp_path / "plan.json").write_text('{"campaign": "x", "engines": {}, "libraries": [], "launches": [{"a": 1}]}')
    with pytest.raises(CampaignError, match="launch #1 must be an object with the keys"):
        read_plan(tmp_path)
    (tmp_path / "plan.json").write_text('{"campaign": "x", "engines": {}, "libraries": [], "launches": [], '
                                        '"resume_options": [], "stop_library_after": 0, "seed": "one"}')
    with pytest.raises(CampaignError, match="'seed' must be an integer or null"):
        read_plan(tmp_path)
    (tmp_path / "plan.json").write_text('{"campaign": "x", "engines": {"a": "/e"}, "libraries": [{"name": "a"}], '
                                        '"launches": [], "resume_options": ["--config", "l.toml"], '
                                        '"stop_library_after": 2, "seed": 7}')
    saved = read_plan(tmp_path)  # read back as data, a plan written before bundles were planned: unbundled
    assert (saved.campaign, saved.engines, saved.seed, saved.bundle, saved.stop_library_after) == ("x", {"a": "/e"}, 7,
                                                                                                    False, 2)


LOGS = Path(__file__).parent / "data" / "h200-x2" / "logs"


def test_failed_launch_reason_names_engine_and_library_errors():
    """Real logs of the 2 x H200 campaign (trimmed): the reason is the engine's FATAL line with the library's first
    error (the cause), not Open MPI's closing banner; an unsupported launch gives the engine record's reason."""
    why = why_failed.last_error(LOGS / "ucx-bw-device-failed.log")
    assert why.startswith("gmb-bench: FATAL on host vm rank 1 at /work/main/src/core/transfer.cpp:80: MPI_Waitall(")
    assert why.endswith("MPI_ERR_IN_STATUS: error code in status [first library error: cuda_ipc_cache.c:288  UCX  "
                        "ERROR cuIpcOpenMemHandle() failed: operation not permitted]")
    why = why_failed.last_error(LOGS / "ob1-nbc-unsupported.log")
    assert why.startswith("nbc allreduce: Open MPI 5.0.7 applies the reduction of MPI_Iallreduce on the CPU")
    assert "prterun" not in why and "Exit code" not in why


def test_failed_launch_reason_of_a_pml_that_could_not_be_opened():
    """Real logs of a 1 x H100 quick campaign: Open MPI's pml ucx finding no usable UCX. The cause is the UCX of the
    wrong version it loaded, or the pml that could not be selected, never Open MPI's note about its help messages."""
    why = why_failed.last_error(LOGS / "ucx-pml-wrong-ucx.log")
    assert why.startswith("ucp_context.c:2137 UCX  WARN  UCP API version is incompatible: required >= 1.22, "
                          "actual 1.16.0 (loaded from /lib/x86_64-linux-gnu/libucp.so.0)")
    why = why_failed.last_error(LOGS / "ucx-pml-not-selected.log")
    assert why == "No components were able to be opened in the pml framework."


def test_failed_launch_reason_without_engine_words(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("$ mpirun -np 2 gmb-bench bw\n[host:123] *** Process received signal ***\n"
                   "[host:123] Signal: Segmentation fault (11)\n-----\nprterun noticed that process rank 0 exited\n")
    assert why_failed.last_error(log) == "Signal: Segmentation fault (11)"
    log.write_text('$ mpirun\n{"type":"result","status":"ok","bytes":1}\nmpirun: exiting\n')
    assert why_failed.last_error(log) == "mpirun: exiting"
    log.write_text("$ mpirun\n")
    assert why_failed.last_error(log) == ""


def test_quick_campaign_on_a_gpu_node_covers_every_path_and_configuration():
    """--quick on 2 GPUs: ceilings at every bandwidth size it measures; per CUDA-aware configuration latency and
    bandwidth over NVLink, on one GPU, host <-> device from pinned and pageable memory and host to host, managed
    memory device to device, device collectives; a library that is not aware gets the staged path and host
    collectives with the reasons for the rest; pipelined-gpu beside one library's own path; NCCL; five repetitions,
    bundled, each size repeated to +-5 %."""
    from gmb.machine.mpilibs import nccl_library

    libs = [lib("ob1", aware=True), lib("ucx", aware=True), lib("sys", aware=False)]
    libs.append(nccl_library(libs[0], "nccl"))
    descs = {x.name: describe(cuda=True, nccl="2.28.9") for x in libs}
    c = generated.default_campaign(TOPO2, libs, descs, quick=True)
    assert c.repetitions == 5 and c.bundle  # claims across launches need several; bundled, they cost little
    peaks = [b for b in c.blocks if b.path == "ceilings"]
    assert len(peaks) == 1 and c.blocks[0] is peaks[0]
    ceiling_sizes = set(sizes.parse_sizes(peaks[0].sizes))
    seen = {}
    for b in c.blocks[1:]:
        (bench,) = b.benchmarks
        adaptive = descs[b.libraries[0]].benchmark(bench).adaptive  # part_overlap: fixed counts
        assert b.options.get("precision") == (0.05 if adaptive else None) and b.options["validate"] is True
        seen.setdefault(b.libraries[0], set()).add((bench, b.memory[0], b.strategies[0], b.path))
        if bench == "bw":
            assert {s for s in sizes.parse_sizes(b.sizes) if s >= 64 << 10} <= ceiling_sizes, b
        if bench == "latency":
            assert 8 in sizes.parse_sizes(b.sizes)
    for name in ("ob1", "ucx"):
        for memory, strategy, path in (("device:device", "direct", "nvlink"), ("device:device", "direct", "same-gpu"),
                                       ("pinned:device", "direct", "host-device"),
                                       ("host:device", "direct", "host-device"), ("host:host", "", "host")):
            assert {("latency", memory, strategy, path), ("bw", memory, strategy, path)} <= seen[name], (name, path)
        assert ("um", "managed:device:managed:device", "", "managed") in seen[name]
        coll = next(b for b in c.blocks if b.libraries == [name] and b.benchmarks == ["coll"])
        assert coll.options["mem"] == "device" and coll.operations == ["allreduce", "bcast", "alltoall"]
        assert coll.join_operations and coll.gpus == [0, 1]
    strategies = [(lb, s) for lb, got in seen.items() for (_, _, s, _) in got if s == "pipelined-gpu"]
    assert strategies == [("ob1", "pipelined-gpu")]
    assert ("bw", "device:device", "staged-pinned", "nvlink") in seen["sys"]
    assert not any(m.startswith(("pinned:device", "managed")) or p == "same-gpu" for _, m, _, p in seen["sys"])
    assert "mem" not in next(b for b in c.blocks if b.libraries == ["sys"] and b.benchmarks == ["coll"]).options
    why = {(lb, what): reason for lb, what, reason in c.skipped}
    assert "staged" in why[("sys", "host-device")] and "one GPU per rank" in why[("nccl", "same-gpu")]
    assert {("latency", "device:device", "direct", "nvlink"), ("bw", "device:device", "direct", "nvlink"),
            ("coll", "", "", None)} <= seen["nccl"]
    launches, _ = plan(c, libs, descs)
    assert sorted({x.repetition for x in launches}) == [1, 2, 3, 4, 5]
    # five launches a point, the ceilings (references, not claims) two
    assert len(launches) == 5 * (len(c.blocks) - 1) + 2 and {x.repetition for x in launches if x.benchmark == "peaks"} \
        == {1, 2}
    # with several hosts the quick campaign also measures between two nodes
    two = generated.default_campaign(TOPO2, libs, descs, quick=True, hosts=2)
    inter = {(b.libraries[0], b.memory[0]) for b in two.blocks if b.path == "inter-node"}
    assert {("ob1", "host:host"), ("ob1", "device:device"), ("sys", "host:host")} <= inter
