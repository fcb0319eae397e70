# SPDX-License-Identifier: BSD-3-Clause
"""Bundles (run/bundles.py): launches that can share one engine launch run as the blocks of one `gmb-bench plan`,
each block keeping its own records, row and status; a crash or a hang inside a bundle costs that block alone, a gmb
killed inside one is resumed block by block, an isolated block runs alone, an engine without plans one by one."""

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from gmb.campaign.plan import Launch
from gmb.cli import main
from gmb.engine.description import EngineDescription
from gmb.run import bundles, leftovers

sys.path.insert(0, str(Path(__file__).parent))
from test_reliability import WAIT_S, _check_complete, _gmb, _results_dir, _rows, _running_launch  # noqa: E402

CAMPAIGN = """
[campaign]
name = "bundled"
repetitions = 2
timeout_s = 60
seed = 5
bundle = true
stop_library_after = 0
[[run]]
benchmarks = ["latency", "bw", "bibw"]
memory = ["host:host"]
sizes = "1:4K"
options = { iters = 10 }
"""


def _launch(lid, library="a", rep=1, env=None, ranks=2, isolate=False, args=("latency",)):
    return Launch(lid, library, args[0], "host:host", "", ranks, rep, list(args), env or {}, None, None, 60.0,
                  "pt2pt", isolate=isolate)


def test_launches_that_share_a_launch_are_bundled_and_repetitions_interleaved():
    launches = [_launch(f"{lib}.{bench}.r{rep}", lib, rep, args=(bench,))
                for lib in ("a", "b") for bench in ("latency", "bw", "bibw") for rep in (1, 2)]
    launches += [_launch("a.4ranks.r1", "a", 1, ranks=4), _launch("a.env.r1", "a", 1, env={"UCX_TLS": "sm"}),
                 _launch("a.alone.r1", "a", 1, isolate=True, args=("bw", "--sizes", "8")),
                 _launch("a.alone2.r1", "a", 1, isolate=True, args=("bw", "--sizes", "16")),
                 _launch("a.tab.r1", "a", 1, args=("bw", "--out-note", "a\tb"))]
    out = bundles.bundles(launches, seed=5)
    assert sorted(x.launch_id for b in out for x in b.launches) == sorted(x.launch_id for x in launches)  # each once
    by_id = {b.bundle_id: {x.launch_id for x in b.launches} for b in out}
    shared = [ids for ids in by_id.values() if len(ids) > 1]
    assert sorted(map(sorted, shared)) == sorted(sorted(f"{lib}.{b}.r{rep}" for b in ("latency", "bw", "bibw"))
                                                 for lib in ("a", "b") for rep in (1, 2))
    # another rank count, another environment, an isolated block, arguments a plan cannot hold: each alone
    assert sum(len(ids) == 1 for ids in by_id.values()) == 5
    # every bundle's first repetition before any second one
    reps = [b.bundle_id.rsplit(".r", 1)[1] for b in out]
    assert reps == sorted(reps)
    # the same seed, the same order; the order of blocks inside a bundle is its own each repetition
    assert [(b.bundle_id, [x.launch_id for x in b.launches]) for b in bundles.bundles(launches, seed=5)] == \
        [(b.bundle_id, [x.launch_id for x in b.launches]) for b in out]
    orders = {tuple(x.benchmark for x in b.launches) for seed in range(20) for b in bundles.bundles(launches, seed)
              if len(b.launches) == 3}
    assert len(orders) > 1


def _run(fake_setup, tmp_path, campaign, *extra):
    c = tmp_path / "c.toml"
    c.write_text(campaign)
    rc = main([str(a) for a in ("run", c, "--config", fake_setup["config"], "--no-detect", "--results",
                                tmp_path / "res", "--no-build", "--no-report", *extra)])
    (outdir,) = list((tmp_path / "res").iterdir())
    return rc, outdir


def _points(outdir: Path) -> set:
    return set(_rows(outdir, "SELECT library, benchmark, repetition, bytes, status FROM results"))


def test_a_bundled_campaign_stores_what_launches_of_their_own_store(fake_setup, tmp_path):
    rc, outdir = _run(fake_setup, tmp_path, CAMPAIGN)
    assert rc == 0
    rows = _rows(outdir, "SELECT launch_id, status, log_file, raw_file FROM launches")
    assert len(rows) == 2 * 3 * 2 and {r[1] for r in rows} == {"ok"}
    # one launch per library and repetition, each block its own record file
    assert len({r[2] for r in rows}) == 4 and len({r[3] for r in rows}) == 12
    assert len(list((outdir / "logs").glob("*.log"))) == 4
    _check_complete(outdir, launches=12)
    plan_files = sorted((outdir / "raw").glob("*.plan"))
    assert len(plan_files) == 4 and all(len(p.read_text().splitlines()) == 4 for p in plan_files)  # a comment, 3 blocks
    said = [json.loads(line) for p in (outdir / "raw").glob("*.status.jsonl") for line in p.read_text().splitlines()]
    assert sorted(s["block"] for s in said) == sorted(r[0] for r in rows)
    unbundled = tmp_path / "plain"
    unbundled.mkdir()
    rc, plain = _run(fake_setup, unbundled, CAMPAIGN.replace("bundle = true", "bundle = false"))
    assert rc == 0 and len(list((plain / "logs").glob("*.log"))) == 12
    assert _points(plain) == _points(outdir)


def test_a_crash_inside_a_bundle_costs_that_block_and_the_rest_run_on(fake_setup, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL", "bw")
    rc, outdir = _run(fake_setup, tmp_path, CAMPAIGN, "--library", "fakempi-a")
    assert rc == 1
    status = dict(_rows(outdir, "SELECT launch_id, status FROM launches"))
    assert Counter(status.values()) == {"ok": 4, "failed": 2}
    assert all(s == "failed" for lid, s in status.items() if ".bw." in lid)
    reasons = [r for (r,) in _rows(outdir, "SELECT reason FROM launches WHERE status = 'failed'")]
    assert all("MPI_Send failed" in r for r in reasons)
    # nothing stored twice; a block after the crash ran in a new launch of its bundle
    dup = _rows(outdir, "SELECT launch_id, bytes, COUNT(*) FROM results GROUP BY launch_id, bytes HAVING COUNT(*) > 1")
    assert dup == []
    logs = {log for (log,) in _rows(outdir, "SELECT log_file FROM launches")}
    assert len(logs) >= 2


def test_a_hang_inside_a_bundle_times_out_that_block_alone(fake_setup, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_HANG", "bibw")
    # The hung block costs the whole timeout; the others (a fraction of a second each) must end well within theirs on
    # a busy machine too.
    campaign = CAMPAIGN.replace("timeout_s = 60", "timeout_s = 10").replace("repetitions = 2", "repetitions = 1")
    rc, outdir = _run(fake_setup, tmp_path, campaign, "--library", "fakempi-a")
    assert rc == 1
    assert dict(_rows(outdir, "SELECT benchmark, status FROM launches")) == {"latency": "ok", "bw": "ok",
                                                                           "bibw": "timeout"}
    (reason,) = _rows(outdir, "SELECT reason FROM launches WHERE status = 'timeout'")[0]
    assert "killed after 10 s in this block" in reason


def test_an_isolated_block_has_a_launch_of_its_own(fake_setup, tmp_path):
    campaign = CAMPAIGN.replace("repetitions = 2", "repetitions = 1") + """
[[run]]
benchmarks = ["mbw"]
memory = ["host:host"]
sizes = "8"
isolate = true
"""
    rc, outdir = _run(fake_setup, tmp_path, campaign, "--library", "fakempi-a")
    assert rc == 0
    log_of = dict(_rows(outdir, "SELECT benchmark, log_file FROM launches"))
    assert log_of["mbw"] not in {log_of[b] for b in ("latency", "bw", "bibw")}
    assert len({log_of[b] for b in ("latency", "bw", "bibw")}) == 1


def test_an_engine_without_plans_runs_its_launches_one_by_one(fake_setup, tmp_path, monkeypatch):
    monkeypatch.setattr(EngineDescription, "plan", property(lambda self: False))
    rc, outdir = _run(fake_setup, tmp_path, CAMPAIGN.replace("repetitions = 2", "repetitions = 1"),
                      "--library", "fakempi-a")
    assert rc == 0
    assert len(list((outdir / "logs").glob("*.log"))) == 3 and not list((outdir / "raw").glob("*.plan"))
    _check_complete(outdir, launches=3)


def _hung_in_its_second_block(fake_setup, tmp_path):
    """`gmb run` (its own process) of a bundle of latency then bw, bw hanging, once latency has ended: (the process,
    the results directory, the lock's running launch, the status lines so far)."""
    c = tmp_path / "hang.toml"
    c.write_text(CAMPAIGN.replace("repetitions = 2", "repetitions = 1").replace('["latency", "bw", "bibw"]',
                                                                                 '["latency", "bw"]'))
    res = tmp_path / "res"
    proc = _gmb(fake_setup, "run", c, "--results", res, "--library", "fakempi-a", env={"FAKE_HANG": "bw"}, wait=False)
    outdir = _results_dir(res)
    launch = _running_launch(outdir)
    status_file = Path(launch["record_file"])
    deadline = time.monotonic() + WAIT_S
    while not bundles.status_lines(status_file) and time.monotonic() < deadline:  # seed 5: latency, then bw hangs
        time.sleep(0.05)
    ended_before = bundles.status_lines(status_file)
    assert [s["benchmark"] for s in ended_before] == ["latency"]
    return proc, outdir, launch, ended_before


def test_gmb_killed_inside_a_bundle_is_resumed_block_by_block(fake_setup, tmp_path):
    """kill -9 while a bundle's second block hangs: the resume stops the orphaned launch, keeps the block that had
    ended, and runs the others; every block once, its figures once."""
    proc, outdir, launch, ended_before = _hung_in_its_second_block(fake_setup, tmp_path)
    proc.kill()
    proc.communicate(timeout=30)
    orphans = leftovers.session_members(launch["session"])
    assert orphans  # the engine's launch runs on
    kept = {s["block"]: (outdir / "raw" / f"{s['block']}.jsonl").stat().st_mtime_ns for s in ended_before}
    rc, _, err = _gmb(fake_setup, "run", "--resume", outdir, "--library", "fakempi-a")
    assert rc == 0, err
    assert "leftover" in err and leftovers.session_members(launch["session"]) == []
    _check_complete(outdir, launches=2)
    for block, mtime in kept.items():  # a block that had ended was not measured again
        assert (outdir / "raw" / f"{block}.jsonl").stat().st_mtime_ns == mtime


def test_bad_bundle_settings_are_refused(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    for text, said in (("bundle = \"yes\"", "bundle must be true or false"),):
        c.write_text(CAMPAIGN.replace("bundle = true", text))
        assert main(["run", str(c), "--config", str(fake_setup["config"]), "--no-detect", "--no-build"]) == 2
        assert said in capsys.readouterr().err
    c.write_text(CAMPAIGN + "isolate = 1\n")
    assert main(["run", str(c), "--config", str(fake_setup["config"]), "--no-detect", "--no-build"]) == 2
    assert "isolate must be true or false" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def test_plan_lines_hold_each_blocks_arguments_its_record_file_and_deadline(tmp_path):
    x = _launch("a.bw.r1", args=("bw", "--sizes", "1:4K"))
    text = bundles.plan_text([x], {"a.bw.r1": tmp_path / "raw" / "a.bw.r1.jsonl"})
    (line,) = [ln for ln in text.splitlines() if not ln.startswith("#")]
    assert line.split("\t") == ["a.bw.r1", "48", "bw", "--sizes", "1:4K", "--out", str(tmp_path / "raw/a.bw.r1.jsonl"),
                                "--format", "json"]


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="no /proc")
def test_a_plans_launch_is_found_by_its_status_file(tmp_path):
    raw = tmp_path / "res" / "raw"
    raw.mkdir(parents=True)
    status = raw / "u0001.r1.status.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "plan", "x.plan", "--status",
                             str(status)])
    try:
        deadline = time.monotonic() + WAIT_S
        while "--status" not in leftovers.command_line(proc.pid) and time.monotonic() < deadline:  # until exec'd
            time.sleep(0.01)
        assert leftovers.names_record_file(proc.pid, status)
    finally:
        proc.kill()
        proc.wait()


def test_gmb_plan_shows_the_bundles_and_their_launches(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    assert main(["plan", str(c), "--config", str(fake_setup["config"]), "--no-detect"]) == 0
    out, err = capsys.readouterr()
    heads = [ln for ln in out.splitlines() if ln.startswith("bundle ")]
    assert len(heads) == 4 and all(h.endswith("one launch, 3 block(s)") for h in heads)
    assert len([ln for ln in out.splitlines() if ln.startswith("  b1.")]) == 12
    assert "12 launches as blocks of 4 engine launches (4 bundles)" in err


def test_bundle_on_the_command_line_bundles_a_generated_campaign(fake_setup, tmp_path, capsys):
    assert main(["plan", "--quick", "--bundle", "--config", str(fake_setup["config"]), "--no-detect"]) == 0
    out, err = capsys.readouterr()
    assert any(ln.startswith("bundle u0001.r1: one launch,") for ln in out.splitlines())
    assert "engine launches" in err
    rc, outdir = _run(fake_setup, tmp_path, CAMPAIGN.replace("repetitions = 2", "repetitions = 1"),
                      "--library", "fakempi-a")
    assert rc == 0
    assert main(["run", "--resume", str(outdir), "--bundle", "--config", str(fake_setup["config"]),
                 "--no-detect"]) == 2
    assert "--bundle cannot change a campaign already planned" in capsys.readouterr().err


def test_a_signal_inside_a_bundle_stores_what_ended_and_resume_completes(fake_setup, tmp_path):
    """SIGTERM while a bundle's second block hangs: gmb ends the launch, stores the block that had ended, marks the
    others interrupted and exits 128+15; the resume runs those alone."""
    proc, outdir, launch, _ = _hung_in_its_second_block(fake_setup, tmp_path)
    proc.send_signal(15)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 128 + 15, err
    assert leftovers.session_members(launch["session"]) == []
    assert dict(_rows(outdir, "SELECT benchmark, status FROM launches")) == {"latency": "ok", "bw": "interrupted"}
    rc, _, err = _gmb(fake_setup, "run", "--resume", outdir, "--library", "fakempi-a")
    assert rc == 0, err
    _check_complete(outdir, launches=2)
