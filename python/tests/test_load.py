# SPDX-License-Identifier: BSD-3-Clause
"""A launch that ran beside other work on the cores its ranks need is flagged busy, in the store, the tables and the
answers (load.py)."""

import json
import os
import subprocess
import sys

from test_cli import run_gmb

from gmb.report import answers
from gmb.machine import load
from gmb.report import tables
from gmb.results.store import open_results
from gmb.results.model import Results, combine
from gmb.report import cells


def test_the_verdict_compares_other_runnable_threads_with_the_free_cores():
    monitor = load.LoadMonitor(ranks_here=2, cpus=4)  # 2 cores free
    monitor.others = [2, 3, 2, 3]  # 2.5 on average: more than the free cores by half a core
    seen = monitor.stop()
    assert seen["busy"] and seen["others_running_mean"] == 2.5 and "2 free" in seen["why"]
    monitor = load.LoadMonitor(ranks_here=2, cpus=4)
    monitor.others = [2, 2, 1, 3]
    assert monitor.stop()["busy"] is False
    assert load.busy_launch(json.dumps(seen)) and not load.busy_launch(None) and not load.busy_launch("not json")


def test_busy_host_is_recorded_and_flagged(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text('[campaign]\nname = "busy"\nrepetitions = 2\nlibraries = ["fakempi-a"]\n\n[[run]]\n'
                 'benchmarks = ["bw"]\nmemory = ["host:host"]\n')
    # more busy threads than this host has CPUs: whatever else runs, no core is left for the ranks
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range((os.cpu_count() or 1) + 2)]
    try:
        rc = run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                     "--no-build", "--no-progress", "--no-report")
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "ran on a busy host (other work kept" in out.err
    (outdir,) = (tmp_path / "res").iterdir()
    st = open_results(outdir)
    loads = [json.loads(x["load"]) for x in st.launches()]
    assert loads and all(x["busy"] and x["samples"] >= 1 and x["cpus"] == os.cpu_count() for x in loads)
    points = combine(Results.load(st).ok("bw"))
    assert points and all(p.busy == 2 for p in points)
    assert any("busy host: 2 of 2 launches" in cells.check_cell(cells.point_flags(p)) for p in points)
    assert any("2 of 2 launches ran on a busy host" in n for n in answers.answers(Results.load(st)).notes)
