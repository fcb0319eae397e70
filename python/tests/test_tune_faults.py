# SPDX-License-Identifier: BSD-3-Clause
"""`gmb tune` and `gmb run --tuned` under faults and odd input, on the fake engine: a search stopped by a signal,
launches that all fail alike, hosts that are not there, disk faults in the middle of a search (a read-only or full
file system under raw/ or logs/), another campaign on the node and a killed search's leftovers, `--verify` against
the wrong records, damaged or edited tune.json files, a declared engine that is not there, a topology file that is
no object. Each test asserts what docs/reliability.md guarantees: the message, the exit status, nothing stored wrong
or lost."""

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from test_tune import EIGHT, PLAIN, _config, fake_home  # noqa: F401 (fake_home: a fixture)

from gmb.cli import main
from gmb.run import leftovers
from gmb.run.execute import Stopped
from gmb.tune import tuner as tuner_mod

WAIT_S = 600


def _tune_main(cfg: Path, results: Path, *more: str) -> int:
    return main(["tune", "--config", str(cfg), "--no-detect", "--no-build", "--results", str(results), "--seed", "1",
                 "--no-report", *more])


def _outdir(results: Path) -> Path:
    (outdir,) = results.iterdir()
    return outdir


def _statuses(outdir: Path) -> dict[str, int]:
    db = sqlite3.connect(outdir / "store.sqlite")
    try:
        return dict(db.execute("SELECT status, COUNT(*) FROM launches GROUP BY status").fetchall())
    finally:
        db.close()


def _before_launch(monkeypatch, number: int, do):
    """``do(outdir)`` just before the search's engine launch ``number`` (from 1)."""
    real, calls = tuner_mod.run_bundles, []

    def run_bundles(outdir, *args, **kwargs):
        calls.append(outdir)
        if len(calls) == number:
            do(outdir)
        return real(outdir, *args, **kwargs)

    monkeypatch.setattr(tuner_mod, "run_bundles", run_bundles)


# ------------------------------------------------------------------------------------- what was never measured
def test_a_search_stopped_by_a_signal_says_so_of_what_it_did_not_measure(fake_home, monkeypatch, capsys):
    cfg = _config(fake_home, EIGHT)

    def stop(outdir):
        raise Stopped(signal.SIGTERM)

    _before_launch(monkeypatch, 3, stop)
    assert _tune_main(cfg, fake_home / "results", "--paths", "host") == 128 + signal.SIGTERM
    outdir = _outdir(fake_home / "results")
    answer = json.loads((outdir / "tune.json").read_text())
    assert answer["stopped"] == "gmb tune was stopped by SIGTERM" and answer["launches"] == 3  # the third interrupted
    (race,) = answer["races"]
    said = {a["why"] for a in race["arms"][1:] if a["launches"] == 0}
    assert said <= {"gmb tune was stopped by SIGTERM before its first launch",
                    "gmb tune was stopped by SIGTERM before the defaults were measured"} and said
    assert not any(a["verdict"].startswith("cut early") for a in race["arms"])
    assert "budget" not in json.dumps(race) and "running" not in _statuses(outdir)
    assert "gmb tune: the answer so far is in" in capsys.readouterr().err


def test_launches_that_all_fail_alike_are_no_verdict_on_the_settings(fake_home, capsys):
    cfg = _config(fake_home, PLAIN.replace('env = { ', 'env = { FAKE_FAIL = "bw", '))
    assert _tune_main(cfg, fake_home / "results", "--paths", "host") == 1
    answer = json.loads((_outdir(fake_home / "results") / "tune.json").read_text())
    (race,) = answer["races"]
    # each launch a block of its bundle: the reason is the engine's last error, naming the block
    assert race["unanswered"].startswith("not measured: a launch with the defaults failed: gmb-bench: FATAL on host ")
    assert "MPI_Send failed (fake, block t1.b1." in race["unanswered"]
    tried = {a["key"]: a for a in race["arms"][1:]}
    fast = tried["UCX_FAKE_KNOB=fast"]
    assert fast["verdict"] == "not measured" and fast["why"].startswith("its launch failed: gmb-bench: FATAL on host ")
    assert fast["why"].endswith(", as a launch of the defaults did: no verdict on the setting")
    assert [k for k, a in tried.items() if a["verdict"] == "broken"] == ["UCX_FAKE_KNOB=crash"]  # its doctor crashed
    err = capsys.readouterr().err
    assert "nothing was compared: no race's defaults were measured" in err and "measure it again" not in err


@pytest.mark.parametrize("command", ["tune", "plan", "run"])
def test_more_nodes_than_there_are_hosts_is_refused_before_anything_runs(fake_home, capsys, command):
    cfg = _config(fake_home, PLAIN)
    args = [command, "--config", str(cfg), "--no-detect", "--nodes", "2"] + \
        (["--results", str(fake_home / "results")] if command != "plan" else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--nodes 2: launches on 2 nodes need hosts to run on, and there are none but this one: give a hostfile" \
        in err and "or run inside a Slurm allocation" in err
    hostfile = fake_home / "hosts"
    hostfile.write_text("node1 slots=2\n")
    assert main([*args, "--hostfile", str(hostfile)]) == 2
    assert f"--nodes 2: the hostfile {hostfile} names 1 host(s) (node1); at most --nodes 1 here" in \
        capsys.readouterr().err
    assert not (fake_home / "results").exists()


# -------------------------------------------------------------------------------------------------- disk faults
@pytest.fixture
def mounts():
    """Mounts made over a search's directories, undone at the end; skips where this user may not mount."""
    made = []

    def mount(where: Path, options: str):
        if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                                               capture_output=True).returncode != 0:
            pytest.skip("needs to mount a file system (root)")
        made.append(where)

    yield mount
    for where in reversed(made):
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.parametrize("hidden", ["raw", "logs"])
def test_a_read_only_directory_mid_search_fails_it_naming_the_path(fake_home, monkeypatch, capsys, mounts, hidden):
    """raw/ (the engine cannot write its records) or logs/ (gmb cannot open the launch's log) on a read-only file
    system from the third launch on: exit 1 naming the directory and the launch, no verdict on any setting, the answer
    so far written, no launch left running."""
    cfg = _config(fake_home, EIGHT)
    _before_launch(monkeypatch, 3, lambda outdir: mounts(outdir / hidden, "ro,size=64k"))
    assert _tune_main(cfg, fake_home / "results", "--paths", "host") == 1
    outdir = _outdir(fake_home / "results")
    err = capsys.readouterr().err
    assert f"{outdir / hidden}" in err and "read-only file system" in err and "launch t1." in err, err
    assert f"the answer so far is in {outdir}" in err and "Traceback" not in err
    answer = json.loads((outdir / "tune.json").read_text())
    assert str(outdir / hidden) in answer["stopped"] and "launch t1." in answer["stopped"]
    assert not any(a["verdict"] == "broken" for r in answer["races"] for a in r["arms"])
    assert "running" not in _statuses(outdir)


def test_a_full_disk_mid_search_fails_it_naming_the_path(fake_home, monkeypatch, capsys, mounts):
    results = fake_home / "small"
    results.mkdir()
    mounts(results, "size=2m")
    cfg = _config(fake_home, EIGHT)

    def fill(outdir):
        with open(results / "filler", "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass

    _before_launch(monkeypatch, 3, fill)
    assert _tune_main(cfg, results, "--paths", "host") == 1
    err = capsys.readouterr().err
    outdir = next(results.glob("tune-*"))
    assert "gmb tune: error: " in err and str(outdir) in err, err
    assert "no space left on device" in err or "disk full" in err, err
    assert "launch t1." in err
    assert "Traceback" not in err
    (results / "filler").unlink()  # room again: what the search left is readable, its answer or why it has none
    assert (outdir / "tune.json").is_file() or "cannot write" in err
    assert "running" not in _statuses(outdir) or "the store still says launch" in err


# ------------------------------------------------------------------------------------ campaigns of the node
def _gmb(*args, env=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gmb", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
                            start_new_session=True)


def _running_launch(outdir_parent: Path) -> dict:
    """The launch the lock of the one results directory under ``outdir_parent`` says is running, once its engine is
    up."""
    from test_reliability import _running_launch as running

    import time
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and not list(outdir_parent.glob("*/gmb.lock")):
        time.sleep(0.05)
    return running(next(outdir_parent.glob("*/gmb.lock")).parent)


def test_a_search_and_a_run_on_one_node_warn_of_each_other_and_a_killed_search_is_found(fake_home):
    cfg = _config(fake_home, PLAIN)
    campaign = fake_home / "c.toml"
    campaign.write_text('[campaign]\nname = "c"\nrepetitions = 1\n\n[[run]]\nbenchmarks = ["bw"]\n'
                        'memory = ["host:host"]\n')
    libs = ["--config", cfg, "--no-detect", "--no-build"]
    search = _gmb("tune", *libs, "--paths", "host", "--results", fake_home / "t1", "--budget", "600",
                  env={"FAKE_HANG": "bw"})
    launch = _running_launch(fake_home / "t1")
    try:
        run = subprocess.run([sys.executable, "-m", "gmb", "run", campaign, *map(str, libs), "--results",
                              fake_home / "r1", "--no-progress", "--no-report"], capture_output=True, text=True,
                             timeout=WAIT_S)
        assert run.returncode == 0, run.stderr
        assert f"another gmb campaign runs on this node (pid {search.pid} since" in run.stderr
        stored = sqlite3.connect(next((fake_home / "r1").iterdir()) / "store.sqlite").execute(
            "SELECT value FROM meta WHERE key='concurrent_campaigns'").fetchone()[0]
        assert json.loads(stored)[0]["pid"] == search.pid
        search.kill()  # SIGKILL: its launch runs on
        search.communicate(timeout=WAIT_S)
        named = [p for p in leftovers.session_members(launch["session"])
                 if launch["record_file"] in leftovers.command_line(p)]
        assert named
        measuring = _gmb("run", campaign, *libs, "--results", fake_home / "r2", "--no-progress", "--no-report",
                         env={"FAKE_HANG": "bw"})
        _running_launch(fake_home / "r2")
        again = subprocess.run([sys.executable, "-m", "gmb", "tune", *map(str, libs), "--paths", "host", "--results",
                                fake_home / "t2", "--budget", "30", "--no-report"], capture_output=True, text=True,
                               timeout=WAIT_S)
        measuring.send_signal(signal.SIGTERM)
        _, err = measuring.communicate(timeout=WAIT_S)
    finally:
        leftovers.stop_session(launch["session"])
    assert again.returncode == 0, again.stderr
    assert f"another gmb campaign runs on this node (pid {measuring.pid} since" in again.stderr
    t1 = next((fake_home / "t1").iterdir()).resolve()
    for said in (err, again.stderr):  # the next run and the next search name the killed search's processes
        assert "process(es) of a launch whose gmb is gone still run on this node (pids " in said
        assert f"results {t1}): " in said and "kill " in said and f"gmb run --resume {t1}" not in said
    stored = sqlite3.connect(next((fake_home / "t2").iterdir()) / "store.sqlite").execute(
        "SELECT value FROM meta WHERE key='concurrent_campaigns'").fetchone()[0]
    assert {o.get("pid") for o in json.loads(stored)} >= {measuring.pid}


# ----------------------------------------------------------------------------------------------- --verify
def test_verify_takes_a_races_own_records_and_nothing_else(fake_home, capsys):
    """The defaults of a race are its block's own environment (a knob the block sets is part of them); an unrelated
    run's figures are never taken for them; the search against itself, and a search without its store, are
    refused."""
    cfg = _config(fake_home, PLAIN.replace('knobs = { UCX_FAKE_KNOB = ["fast", "slow", "same", "bad", "crash"] }\n',
                                           ""))
    campaign = fake_home / "mine.toml"
    campaign.write_text('[campaign]\nname = "mine"\n\n[[run]]\nbenchmarks = ["bw"]\nmemory = ["host:host"]\n'
                        'sizes = "64K,1M"\noptions = { iters = 20, warmup = 2 }\nenv = { UCX_FAKE_KNOB = "same" }\n\n'
                        '[knobs]\nUCX_FAKE_KNOB = ["fast"]\n')
    assert _tune_main(cfg, fake_home / "results", str(campaign), "--budget", "300") == 0
    search = _outdir(fake_home / "results")
    assert json.loads((search / "tune.json").read_text())["races"][0]["identity"]["settings"]["UCX_FAKE_KNOB"] == "same"
    assert main(["run", "--config", str(search / "tune-libraries.toml"), "--no-detect", str(search / "tune.toml"),
                 "--results", str(fake_home / "check"), "--no-progress", "--no-report"]) == 0
    capsys.readouterr()
    assert main(["tune", "--verify", str(search), str(_outdir(fake_home / "check"))]) == 0
    out = capsys.readouterr().out
    assert re.search(r"(agrees|DIFFERS); the gain holds \(\+(9[5-9]|10[0-5]) %\) over the run's defaults", out)
    assert out.count("DIFFERS") <= 1 and "not measured" not in out
    # an unrelated run (the same benchmark and library, without the block's setting) is not the race's
    other = fake_home / "other.toml"
    other.write_text('[[run]]\nbenchmarks = ["bw"]\nmemory = ["host:host"]\nsizes = "64K,1M"\n'
                     'options = { iters = 20, warmup = 2 }\n')
    assert main(["run", "--config", str(cfg), "--no-detect", str(other), "--results", str(fake_home / "other"),
                 "--no-progress", "--no-report"]) == 0
    capsys.readouterr()
    assert main(["tune", "--verify", str(search), str(_outdir(fake_home / "other"))]) == 1
    out = capsys.readouterr().out
    assert "run not measured: not comparable; gain not measured over the run's defaults not measured" in out
    # the search against itself; a search without its store, for --verify and for gmb tables
    assert main(["tune", "--verify", str(search), str(search / "store.sqlite")]) == 2
    assert "that is the search against itself" in capsys.readouterr().err
    shutil.copytree(search, fake_home / "copy", ignore=shutil.ignore_patterns("store.sqlite"))
    for args in (["tune", "--verify", str(fake_home / "copy"), str(_outdir(fake_home / "check"))],
                 ["tables", str(fake_home / "copy")]):
        assert main(args) == 2
        assert f"{fake_home / 'copy' / 'store.sqlite'}: is missing; {fake_home / 'copy'} is a results directory" in \
            capsys.readouterr().err


# ---------------------------------------------------------------------------------- damaged or edited tune.json
RACE = {"configuration": "plain", "path": "host", "kind": "host", "metric": "bw", "unit": "GB/s",
        "higher_is_better": True, "benchmark": "bw", "sizes": [8], "note": "", "arms": [],
        "recommendation": [{"low": 8, "high": 8, "arm": "defaults", "settings": {}, "sizes": [{"bytes": 8}]}]}
GOOD = {"budget_s": 60, "used_s": 50, "rounds": 3, "launches": 9, "cut_short": False, "min_launches": 3,
        "races": [RACE], "comparisons": [], "tuned": []}


@pytest.mark.parametrize("damage, said", [
    ({}, "tune.json has no 'races'"),
    ([], "tune.json is [], not an object"),
    ({**GOOD, "races": [{**RACE, "recommendation": [{**RACE["recommendation"][0], "sizes": None}]}]},
     "races[0].recommendation[0].sizes is null, not a list"),
    ({**GOOD, "races": [{k: v for k, v in RACE.items() if k != "arms"}]}, "races[0] has no 'arms'"),
    ({**GOOD, "tuned": [{"name": "plain-tuned", "base": "plain", "settings": {"UCX_X": 5}, "paths": []}]},
     "tuned[0].settings.UCX_X is 5, not a string"),
    ({**GOOD, "tuned": [{"name": "plain-tuned", "base": "plain", "settings": {"BAD=NAME": "x"}, "paths": []}]},
     "tuned[0].settings: 'BAD=NAME' is no environment variable name"),
    ({**GOOD, "tuned": [{"name": "plain-tuned", "base": "plain", "settings": {"UCX_X": "1"}, "paths": []},
                        {"name": "plain-tuned", "base": "plain", "settings": {"UCX_X": "2"}, "paths": []}]},
     "tuned[1]: a second tuned configuration named 'plain-tuned' (each name once)"),
])
def test_a_damaged_or_edited_tune_json_is_refused_naming_it(fake_home, capsys, damage, said):
    cfg = _config(fake_home, PLAIN)
    search = fake_home / "search"
    search.mkdir()
    (search / "tune.json").write_text(json.dumps(damage))
    for args in (["tune", "--verify", str(search), str(fake_home)],
                 ["plan", "--config", str(cfg), "--no-detect", "--quick", "--tuned", str(search)],
                 ["run", "--config", str(cfg), "--no-detect", "--quick", "--tuned", str(search), "--results",
                  str(fake_home / "results")]):
        assert main(args) == 2
        err = capsys.readouterr().err
        (line,) = err.strip().splitlines()[-1:]
        assert f"error: {search / 'tune.json'}: {said}" in line and "Traceback" not in err, err
    assert not (fake_home / "results").exists()


def test_tuned_with_resume_is_refused(fake_home, capsys):
    assert main(["run", "--resume", str(fake_home), "--tuned", str(fake_home)]) == 2
    assert "--tuned cannot change a campaign already planned" in capsys.readouterr().err


# -------------------------------------------------------------------------------------------------- odd input
def test_a_declared_engine_that_does_not_exist_is_one_refusal(fake_home, capsys):
    cfg = _config(fake_home, PLAIN.replace('engine = "ENGINE"', 'engine = "/nonexistent/gmb-bench"'))
    assert _tune_main(cfg, fake_home / "results", "--budget", "10") == 2
    err = capsys.readouterr().err
    assert "gmb tune: error: nothing to search: plain: its declared engine /nonexistent/gmb-bench does not exist " \
           "(engine = ... in its libraries file): correct that path, or remove the engine line for gmb to build one " \
           "(gmb build --library plain)" in err
    assert "not searched" not in err and "run `gmb build`)" not in err


@pytest.mark.parametrize("text", ["[1, 2, 3]", '"str"', '{"gpus": 3}', '{"topology": [1]}'])
def test_a_topology_that_is_no_object_is_refused_in_one_line(fake_home, capsys, text):
    cfg = _config(fake_home, PLAIN)
    topo = fake_home / "t.json"
    topo.write_text(text)
    for args in (["tune", "--list"], ["plan", "--quick"]):
        assert main([*args, "--config", str(cfg), "--no-detect", "--topology", str(topo)]) == 2
        err = capsys.readouterr().err
        assert f"--topology {topo}: expected a JSON object with 'gpus'" in err and "Traceback" not in err
