# SPDX-License-Identifier: BSD-3-Clause
"""Bundles with the real engine: a small campaign run as plan launches under Debian's Open MPI and MPICH (host
memory), each block stored as a launch of its own with its context naming the block and the launch that ran it.
Skipped, with the reason, when cmake or one of the two libraries is missing."""

import json
import sqlite3
from collections import defaultdict

import pytest
from realmpi import debian_library, have_debian

from gmb.cli import main

CAMPAIGN = """
[campaign]
name = "bundled-real"
repetitions = 2
seed = 11
timeout_s = 300
bundle = true
[[run]]
benchmarks = ["latency", "bw"]
memory = ["host:host"]
sizes = "8,4K"
options = { iters = 50, warmup = 5 }
[[run]]
benchmarks = ["coll"]
operations = ["allreduce"]
sizes = "64,4K"
options = { iters = 20, warmup = 2 }
"""


@pytest.mark.skipif(not (have_debian("openmpi") and have_debian("mpich")),
                    reason="needs cmake, g++ and both Debian MPIs (libopenmpi-dev, libmpich-dev)")
def test_a_bundled_campaign_with_the_real_engine(real_env, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no user config (~/.config/gmb) leaks in
    campaign = tmp_path / "c.toml"
    campaign.write_text(CAMPAIGN)
    libs = [debian_library("openmpi").name, debian_library("mpich").name]
    argv = ["run", str(campaign), "--results", str(tmp_path / "res"), "--no-progress", "--no-report"]
    for name in libs:
        argv += ["--library", name]
    assert main(argv) == 0
    (outdir,) = list((tmp_path / "res").iterdir())
    db = sqlite3.connect(outdir / "store.sqlite")
    launches = db.execute("SELECT launch_id, library, status, log_file FROM launches").fetchall()
    assert len(launches) == 2 * 3 * 2 and {s for _, _, s, _ in launches} == {"ok"}
    # one engine launch per library and repetition, three blocks each
    assert len({log for *_, log in launches}) == 4
    runs_of_launch = defaultdict(set)
    for launch_id, context in db.execute("SELECT launch_id, json FROM contexts"):
        plan = json.loads(context)["plan"]
        assert plan["block"] == launch_id and plan["blocks"] == 3
        runs_of_launch[plan["launch_run_id"]].add(launch_id)
    assert sorted(len(ids) for ids in runs_of_launch.values()) == [3, 3, 3, 3]
    dup = db.execute("SELECT launch_id, bytes, operation, COUNT(*) FROM results GROUP BY launch_id, bytes, operation "
                     "HAVING COUNT(*) > 1").fetchall()
    assert dup == []
    libraries = {lib for (lib,) in db.execute("SELECT DISTINCT library FROM results WHERE status = 'ok'")}
    assert libraries == set(libs)
