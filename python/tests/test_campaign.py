import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gmb import campaign
from gmb.campaign import Block, Campaign, CampaignError, load_campaign, parse_campaign, plan
from gmb.mpilibs import MpiLibrary
from gmb.store import Store
from gmb.topology import Gpu, Topology

CAPS = {"benchmarks": [{"name": n, "summary": "", "min_ranks": 2} for n in
                       ("latency", "bw", "bibw", "coll", "nbc", "um", "halo", "mbw")] +
        [{"name": "peaks", "summary": "", "min_ranks": 1}],
        "memory_kinds": [{"name": "host", "available": True}, {"name": "pinned", "available": True},
                         {"name": "device", "available": True}, {"name": "managed", "available": True},
                         {"name": "managed:host", "available": True}, {"name": "managed:device", "available": True}],
        "features": {"cuda": True}}
HOST_CAPS = {"benchmarks": [{"name": n, "summary": "", "min_ranks": 2} for n in ("latency", "bw", "bibw", "coll")],
             "memory_kinds": [{"name": "host", "available": True},
                              {"name": "device", "available": False, "reason": "built without CUDA"}],
             "features": {"cuda": False}}


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
    launches, skipped = plan(c, [lib("a"), lib("b")], {"a": CAPS, "b": CAPS})
    assert len(launches) == 2 * 2 * 2 * 2 * 2  # bench x lib x mem x strategy x reps
    assert not skipped
    ids = [x.launch_id for x in launches]
    assert len(set(ids)) == len(ids)
    x = next(x for x in launches if x.memory == "device:device" and x.strategy == "staged-pinned")
    assert x.engine_args[:7] == [x.benchmark, "--sizes", "1:4K", "--send", "device", "--recv", "device"]
    assert "--validate" in x.engine_args and "--window" in x.engine_args
    assert x.env["CUDA_VISIBLE_DEVICES"] == "0,1"
    # randomised but reproducible
    again, _ = plan(c, [lib("a"), lib("b")], {"a": CAPS, "b": CAPS})
    assert [y.launch_id for y in again] == ids
    assert ids != sorted(ids)


def test_skips_with_reasons():
    c = Campaign("s", [Block(["latency", "nbc"], memory=["host:host", "device:device"], strategies=["direct"],
                             libraries=["plain", "ghost"])], repetitions=1, order="sequential")
    launches, skipped = plan(c, [lib("plain", aware=False)], {"plain": HOST_CAPS})
    assert [(x.library, x.benchmark, x.memory) for x in launches] == [("plain", "latency", "host:host")]
    reasons = {(lb, what): why for lb, what, why in skipped}
    assert "library not found" in reasons[("ghost", "block 1")]
    assert "unavailable" in reasons[("plain", "latency device:device")]
    assert "does not list" in reasons[("plain", "nbc")]


def test_direct_device_refused_for_non_cuda_aware():
    c = Campaign("s", [Block(["bw"], memory=["device:device"], strategies=["direct", "staged-pinned"])],
                 repetitions=1)
    launches, skipped = plan(c, [lib("sys", aware=False)], {"sys": CAPS})
    assert [x.strategy for x in launches] == ["staged-pinned"]
    assert any("not CUDA-aware" in why for _, _, why in skipped)


def test_managed_memory_spec():
    assert campaign.parse_memory("managed:host:managed:device") == ("managed:host", "managed:device")
    assert campaign.parse_memory("host:device") == ("host", "device")
    with pytest.raises(ValueError):
        campaign.parse_memory("host")


def test_ceilings_first():
    c = Campaign("s", [Block(["latency", "bw"], memory=["host:host"]), Block(["peaks"])], repetitions=3, seed=1)
    launches, _ = plan(c, [lib("a")], {"a": CAPS})
    assert [x.benchmark for x in launches[:3]] == ["peaks"] * 3
    assert all(x.benchmark != "peaks" for x in launches[3:])


def test_default_campaign_gpu_machine():
    topo = Topology(gpus=[Gpu(0, "H200"), Gpu(1, "H200")], links={(0, 1): "NV18", (1, 0): "NV18"},
                    numa_nodes={0: "0-7"})
    c = campaign.default_campaign(topo, [lib("ucx", aware=True), lib("sys", aware=False)],
                                  {"ucx": CAPS, "sys": CAPS})
    paths = {(b.libraries[0], b.path) for b in c.blocks}
    assert ("ucx", "ceilings") in paths and ("ucx", "nvlink") in paths and ("ucx", "same-gpu") in paths
    assert ("ucx", "host-device") in paths and ("sys", "host") in paths and ("ucx", "managed") in paths
    assert c.blocks[0].benchmarks == ["peaks"]
    sys_dd = next(b for b in c.blocks if b.libraries == ["sys"] and b.path == "nvlink")
    assert sys_dd.strategies == ["staged-pinned"]
    um = next(b for b in c.blocks if b.benchmarks == ["um"])
    assert len(um.memory) == 4
    launches, _ = plan(c, [lib("ucx", aware=True), lib("sys", aware=False)], {"ucx": CAPS, "sys": CAPS})
    assert not any(x.library == "sys" and x.strategy == "direct" and "device" in x.memory for x in launches)


def test_default_quick_host_only():
    topo = Topology(numa_nodes={0: "0-1"})
    c = campaign.default_campaign(topo, [lib("a"), lib("b")], {"a": HOST_CAPS}, quick=True)
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
])
def test_bad_campaign_files(tmp_path, body, msg):
    f = tmp_path / "bad.toml"
    f.write_text(body)
    with pytest.raises(CampaignError, match=msg):
        load_campaign(f)


def test_results_dir_never_reused(tmp_path):
    a = campaign.new_results_dir(tmp_path, "q")
    b = campaign.new_results_dir(tmp_path, "q")
    assert a != b and a.is_dir() and b.is_dir() and a.name.startswith("q-")
