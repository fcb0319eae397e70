# SPDX-License-Identifier: BSD-3-Clause
"""Faults done for real: gmb killed (SIGTERM, SIGKILL) in the middle of a launch and resumed, two resumes of one
results directory at once, two campaigns on one node, the same records ingested twice, a full file system (a
200 KiB tmpfs where this machine lets us mount one, else ENOSPC raised where the write happens), bad campaign input.
Each test asserts what a user relies on: no duplicated or contaminated rows, nothing truncated left behind, a
message that names what happened, and the documented exit status. docs/reliability.md lists the cases."""

import errno
import gc
import json
import os
import re
import shlex
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_engine import describe
from realmpi import debian_library, have_debian
import synth

from gmb import outputs
from gmb.campaign.checks import check_against_engines
from gmb.campaign.spec import Block, Campaign, CampaignError
from gmb.run import leftovers, locks, node_campaigns
from gmb.cli import main
from gmb.results.store import Store

DATA = Path(__file__).parent / "data"

CAMPAIGN = """
[campaign]
name = "rel"
repetitions = 2
order = "sequential"
libraries = ["fakempi-a"]
timeout_s = 600

[[run]]
benchmarks = ["bw"]
memory = ["host:host"]
"""


def _as_from_a_terminal():
    """SIGINT handled by default and not blocked, as for a command typed at a terminal (the test process may have
    either otherwise, and a child inherits both)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _as_in_the_background_of_a_script():
    """SIGINT ignored, as a shell starts a script's background job (`gmb run ... &`); Python keeps it ignored."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _gmb(fake_setup, *args, env=None, wait=True, config=True, start=_as_from_a_terminal, cwd=None):
    """`python -m gmb ARGS` as its own process (so that it can be killed), with the fake libraries (``config``),
    in ``cwd`` (None: this one)."""
    argv = [sys.executable, "-m", "gmb", *map(str, args), "--no-progress"]
    if config:
        argv += ["--config", str(fake_setup["config"]), "--no-detect"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONFAULTHANDLER": "1", **(env or {})}, start_new_session=True,
                            preexec_fn=start, cwd=cwd)
    if wait:
        out, err = proc.communicate(timeout=WAIT_S)
        return proc.returncode, out, err
    return proc


def _signal_state(pid: int) -> str:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return "no /proc status"
    return ", ".join(x for x in lines if x.startswith(("SigBlk", "SigIgn", "SigCgt", "SigPnd", "ShdPnd")))


# How long the helpers below wait for gmb to get somewhere: long enough for a busy machine, so that only a hang
# ends the wait (each returns as soon as what it waits for is there).
WAIT_S = 600


def _results_dir(parent: Path, timeout_s: float = WAIT_S) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        dirs = [d for d in parent.glob("*") if (d / "plan.json").is_file()] if parent.is_dir() else []
        if dirs:
            return dirs[0]
        time.sleep(0.05)
    raise AssertionError(f"no results directory under {parent}")


def _running_launch(outdir: Path, timeout_s: float = WAIT_S) -> dict:
    """The launch the lock says is running, once its engine is up (its record file named on a command line)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            launch = json.loads((outdir / locks.LOCK_NAME).read_text() or "{}").get("launch")
        except (OSError, ValueError):
            launch = None
        if launch and any(leftovers.names_record_file(p, launch["record_file"])
                          for p in leftovers.session_members(launch["session"])):
            return launch
        time.sleep(0.05)
    raise AssertionError(f"no launch running in {outdir}")


def _rows(outdir: Path, sql: str):
    db = sqlite3.connect(outdir / "store.sqlite")
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def _check_complete(outdir: Path, launches: int = 2):
    """Every launch once, ok, with its own figures once: no row of an earlier, killed attempt."""
    assert _rows(outdir, "SELECT status, COUNT(*) FROM launches GROUP BY status") == [("ok", launches)]
    per_launch = _rows(outdir, "SELECT launch_id, COUNT(DISTINCT run_id), COUNT(*) FROM results GROUP BY launch_id")
    assert len(per_launch) == launches
    assert {runs for _, runs, _ in per_launch} == {1}
    dup = _rows(outdir, "SELECT run_id, bytes, COUNT(*) FROM results GROUP BY run_id, bytes HAVING COUNT(*) > 1")
    assert dup == []


@pytest.fixture
def campaign_file(fake_setup):
    f = fake_setup["tmp"] / "rel.toml"
    f.write_text(CAMPAIGN)
    return f


@pytest.fixture
def node_dir(tmp_path, monkeypatch):
    d = tmp_path / "node"
    monkeypatch.setenv("GMB_NODE_LOCK_DIR", str(d))
    return d


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_ends_the_launch_and_resume_completes(fake_setup, campaign_file, node_dir, sig):
    res = fake_setup["tmp"] / "res"
    proc = _gmb(fake_setup, "run", campaign_file, "--results", res, env={"FAKE_HANG": "bw"}, wait=False)
    outdir = _results_dir(res)
    launch = _running_launch(outdir)
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # PYTHONFAULTHANDLER: where gmb was stuck, every thread's stack
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"gmb still runs {WAIT_S} s after {sig.name} ({_signal_state(proc.pid)}):\n{err}") from None
    assert proc.returncode == 128 + sig, err
    assert f"gmb run --resume {outdir}" in err
    assert leftovers.session_members(launch["session"]) == []  # the engine did not outlive gmb
    assert _rows(outdir, "SELECT status, reason FROM launches WHERE launch_id = '%s'" % launch["id"]) == \
        [("interrupted", f"gmb was stopped ({signal.Signals(sig).name})")]
    assert json.loads((outdir / locks.LOCK_NAME).read_text() or "{}") == {}  # released, nothing left to stop
    rc, _, err = _gmb(fake_setup, "run", "--resume", outdir)
    assert rc == 0, err
    _check_complete(outdir)


@pytest.mark.parametrize("results", ["absolute", "relative"])
def test_kill_9_leaves_the_launch_running_and_resume_stops_it_first(fake_setup, campaign_file, node_dir, results):
    """The orphans are found whether --results was absolute or relative (their command line then names the record
    file relative to where the killed gmb ran), and the resume is given the directory as the user would."""
    res = fake_setup["tmp"] / "res"
    given = res if results == "absolute" else Path("res")
    proc = _gmb(fake_setup, "run", campaign_file, "--results", given, env={"FAKE_HANG": "bw"}, wait=False,
                cwd=fake_setup["tmp"])
    outdir = _results_dir(res)
    launch = _running_launch(outdir)
    proc.kill()
    proc.communicate(timeout=30)
    orphans = leftovers.session_members(launch["session"])
    assert orphans  # SIGKILL cannot be forwarded: the engine runs on, as an orphan
    rc, _, err = _gmb(fake_setup, "run", "--resume", given / outdir.name, cwd=fake_setup["tmp"])
    assert rc == 0, err
    assert f"died while running launch {launch['id']}; stopped its {len(orphans)} leftover" in err
    assert leftovers.session_members(launch["session"]) == []
    _check_complete(outdir)
    assert len(list((outdir / "logs").glob("*.interrupted-1"))) == 1  # the killed attempt's log, kept aside


def test_two_resumes_at_once_the_second_is_refused(fake_setup, campaign_file, node_dir):
    res = fake_setup["tmp"] / "res"
    first = _gmb(fake_setup, "run", campaign_file, "--results", res, env={"FAKE_HANG": "bw"}, wait=False)
    outdir = _results_dir(res)
    _running_launch(outdir)
    rc, _, err = _gmb(fake_setup, "run", "--resume", outdir)  # the run that made the directory still runs
    assert rc == 2 and f"in use by another gmb (pid {first.pid} on host" in err and "gmb run since" in err
    first.terminate()
    first.communicate(timeout=WAIT_S)
    a = _gmb(fake_setup, "run", "--resume", outdir, env={"FAKE_HANG": "bw"}, wait=False)
    launch = _running_launch(outdir)
    rc, _, err = _gmb(fake_setup, "run", "--resume", outdir)
    assert rc == 2
    assert f"in use by another gmb (pid {a.pid} on host" in err and f"running launch {launch['id']}" in err
    a.terminate()
    a.communicate(timeout=WAIT_S)
    assert not list(outdir.rglob("*.interrupted-2"))  # the refused resume set nothing aside
    rc, _, err = _gmb(fake_setup, "run", "--resume", outdir)
    assert rc == 0, err
    _check_complete(outdir)


def test_an_unfinished_launch_is_rerun_without_its_earlier_rows(fake_setup, campaign_file, node_dir):
    """A launch left "running" with figures stored (an older gmb killed between the two writes) is run again on
    resume, and only the rerun's figures remain."""
    res = fake_setup["tmp"] / "res"
    rc, _, err = _gmb(fake_setup, "run", campaign_file, "--results", res)
    assert rc == 0, err
    outdir = _results_dir(res)
    victim, old_run = _rows(outdir, "SELECT launch_id, run_id FROM results LIMIT 1")[0]
    db = sqlite3.connect(outdir / "store.sqlite")
    db.execute("UPDATE launches SET status = 'running' WHERE launch_id = ?", (victim,))
    db.commit()
    db.close()
    rc, _, err = _gmb(fake_setup, "run", "--resume", outdir)
    assert rc == 0, err
    _check_complete(outdir)
    assert _rows(outdir, f"SELECT COUNT(*) FROM results WHERE run_id = '{old_run}'") == [(0,)]


def test_a_resume_whose_store_is_gone_is_refused(fake_setup, campaign_file, node_dir, capsys):
    """store.sqlite deleted after launches wrote their records: the resume cannot tell which finished; it refuses
    (exit 2), names the store and what to do, and neither measures again nor sets a record file aside."""
    assert main(["run", str(campaign_file), "--results", str(fake_setup["tmp"] / "res"), "--config",
                 str(fake_setup["config"]), "--no-detect", "--no-progress", "--no-report"]) == 0
    outdir = _results_dir(fake_setup["tmp"] / "res")
    (outdir / "store.sqlite").unlink()
    before = sorted(p.name for p in (outdir / "raw").iterdir())
    capsys.readouterr()
    assert main(["run", "--resume", str(outdir), "--config", str(fake_setup["config"]), "--no-detect",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"cannot resume {outdir}: its store {outdir / 'store.sqlite'} is gone" in err and \
        f"gmb report {outdir / 'raw'}" in err, err
    assert sorted(p.name for p in (outdir / "raw").iterdir()) == before and not (outdir / "store.sqlite").exists()
    assert main(["tables", str(outdir / "raw")]) == 0  # what the message says still works


def test_a_second_campaign_on_the_node_is_warned(fake_setup, campaign_file, node_dir):
    first = _gmb(fake_setup, "run", campaign_file, "--results", fake_setup["tmp"] / "r1", env={"FAKE_HANG": "bw"},
                 wait=False)
    _running_launch(_results_dir(fake_setup["tmp"] / "r1"))
    try:
        rc, _, err = _gmb(fake_setup, "run", campaign_file, "--results", fake_setup["tmp"] / "r2")
    finally:
        first.terminate()
        first.communicate(timeout=WAIT_S)
    assert rc == 0, err
    assert f"another gmb campaign runs on this node (pid {first.pid} since" in err
    outdir = _results_dir(fake_setup["tmp"] / "r2")
    assert json.loads(_rows(outdir, "SELECT value FROM meta WHERE key='concurrent_campaigns'")[0][0])[0]["pid"] == \
        first.pid
    assert list(node_dir.glob("*.json")) == []  # both entries gone with their campaigns
    assert f"Another campaign ran on this node at the same time</b> (pid {first.pid} since" in \
        (outdir / "report.html").read_text()


def test_ingest_twice_stores_each_point_once(tmp_path, capsys):
    files = sorted((DATA / "h200-ob1").glob("*.jsonl"))[:3]
    db = tmp_path / "s.sqlite"
    assert main(["ingest", str(db), *map(str, files)]) == 0
    first = capsys.readouterr().out
    n = int(first.split()[0])
    assert n > 0
    assert main(["ingest", str(db), *map(str, files)]) == 0
    assert f"0 result records into {db}; {n} already there" in capsys.readouterr().out
    with Store(db, create=False) as st:
        assert len(st.rows("SELECT * FROM results")) == n
        assert len(st.rows("SELECT DISTINCT run_id FROM contexts")) == len(st.rows("SELECT * FROM contexts"))


# --------------------------------------------------------------------------- a full file system
@pytest.fixture
def full_fs(tmp_path):
    """A directory on a 200 KiB tmpfs, or (no permission to mount) an ordinary one: the tests then make the
    writes fail with ENOSPC where they happen."""
    d = tmp_path / "small"
    d.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(d)],
                             capture_output=True).returncode == 0 if os.geteuid() == 0 else False
    yield d, mounted
    if mounted:
        subprocess.run(["umount", "-l", str(d)], check=False)


def _fill_after(monkeypatch, limit_bytes: int):
    """Without a small file system: os.write fails with ENOSPC once ``limit_bytes`` went through it, and SQLite
    stores may not grow past ``limit_bytes`` either (its own "database or disk is full")."""
    written = {"n": 0}
    real_write = os.write

    def write(fd, data):
        if written["n"] + len(data) > limit_bytes:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written["n"] += len(data)
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    real_connect = sqlite3.connect

    def connect(*a, **kw):
        db = real_connect(*a, **kw)
        db.execute(f"PRAGMA max_page_count = {max(8, limit_bytes // 4096)}")
        return db

    monkeypatch.setattr(sqlite3, "connect", connect)


def test_report_on_a_full_disk_leaves_nothing(full_fs, monkeypatch, capsys):
    d, mounted = full_fs
    if not mounted:
        _fill_after(monkeypatch, 200 << 10)
    out = d / "report.html"
    rc = main(["report", str(DATA / "h200-x2"), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 1
    assert f"cannot write {out}: no space left on device; nothing was written there" in err
    assert "Traceback" not in err
    assert list(d.iterdir()) == []  # no truncated report, no temporary file
    monkeypatch.undo()
    if mounted:  # room again: the same command now works (nothing stale refuses it)
        subprocess.run(["mount", "-o", "remount,size=4m", str(d)], check=True)
        assert main(["report", str(DATA / "h200-x2"), "-o", str(out)]) == 0
        assert out.read_text().rstrip().endswith("</html>")


def test_ingest_on_a_full_disk_stores_nothing_of_it(full_fs, monkeypatch, capsys):
    d, mounted = full_fs
    db = d / "s.sqlite"
    small = DATA / "sample-bw-device.jsonl"
    assert main(["ingest", str(db), str(small)]) == 0
    with Store(db, create=False) as st:
        before = st.rows("SELECT COUNT(*) AS n FROM results")[0]["n"]
    capsys.readouterr()
    if not mounted:
        _fill_after(monkeypatch, db.stat().st_size + (16 << 10))
    else:
        (d / "filler").write_bytes(b"\0" * ((200 << 10) - db.stat().st_size - (24 << 10)))
    files = sorted(str(f) for f in (DATA / "h200-x2").glob("*.jsonl"))
    rc = main(["ingest", str(db), *files])
    err = capsys.readouterr().err
    monkeypatch.undo()
    assert rc == 1, err
    assert f"{db}: cannot store the records of" in err and "disk full; nothing of it was stored" in err
    with Store(db, create=False) as st:
        assert st.rows("SELECT COUNT(*) AS n FROM results")[0]["n"] == before  # all or nothing
        assert st.rows("PRAGMA integrity_check")[0]["integrity_check"] == "ok"


def test_run_on_a_full_disk_says_which_path(fake_setup, campaign_file, node_dir, full_fs, monkeypatch, capsys):
    d, mounted = full_fs
    if not mounted:
        _fill_after(monkeypatch, 48 << 10)
    else:
        (d / "filler").write_bytes(b"\0" * (150 << 10))
    monkeypatch.chdir(fake_setup["tmp"])
    rc = main(["run", str(campaign_file), "--results", str(d / "res"), "--config", str(fake_setup["config"]),
               "--no-detect", "--no-progress", "--repetitions", "20"])
    err = capsys.readouterr().err
    monkeypatch.undo()
    assert rc == 1, err
    assert str(d / "res") in err and ("disk full" in err or "no space left on device" in err), err
    assert "Traceback" not in err and "OperationalError" not in err


# --------------------------------------------------------------------------- input refused before anything exists
BLOCK = """
[campaign]
name = "rel"
repetitions = 1
libraries = ["fakempi-a"]
%s
[[run]]
benchmarks = %s
"""


@pytest.mark.parametrize("head, block, message", [
    ("", '["bw"]\nsizes = "8:1"', "sizes '8:1': MIN is greater than MAX"),
    ("", '["bw"]\nsizes = "1:8:2"', "a range is MIN:MAX, sizes doubling from MIN (a step is not accepted"),
    ("", '["bw"]\nsizes = "8,1,8"', "sizes '8,1,8': 8 bytes is listed twice"),
    ("", '["bw"]\nsizes = "8K,8192"', "sizes '8K,8192': 8192 bytes is listed twice"),
    ("", '["latency", "bw"]\nsizes = "0,8"',
     "[[run]] #1: sizes = \"0,8\": bw measures a bandwidth, and a bandwidth of 0-byte messages is not defined; "
     "latency measures 0 B (give bw sizes from 1 B, in a block of its own where latency keeps 0 B)"),
    ("", '["mbw"]\nranks = [2]\nsizes = "0:8"', "mbw measures a bandwidth, and a bandwidth of 0-byte messages"),
    ("", '["bw"]\noptions = { iters = 0 }', "options.iters = 0: must be a whole number from 1 to 2147483647"),
    ("", '["bw"]\noptions = { warmup = -1 }', "options.warmup = -1: must be a whole number from 0 to 2147483647"),
    ("", '["bw"]\nranks = [3]', "bw with ranks = 3: bw runs on exactly 2 ranks"),
    ("", '["bw"]\nmemory = ["host:gpu"]', "memory \"host:gpu\": unknown memory kind 'gpu' (accepted, as SEND:RECV: "),
    ("", '["bw"]\noptions = { frobnicate = 1 }',
     "[[run]] #1: options.frobnicate: bw has no option --frobnicate (its options: "),
    ("", '["bw"]\noptions = { windw = 8 }', "bw has no option --windw; did you mean 'window'?"),
    ("", '["bw"]\noptions = { validate = 1 }',
     "options.validate = 1: --validate takes no value (true gives it, false leaves it out)"),
    ("", '["bw"]\noptions = { window = true }', "options.window = true: --window takes a value (W)"),
    ("", '["bw"]\noptions = { strategy = "staged" }',
     "options.strategy = \"staged\": not a value --strategy accepts; did you mean 'staged-pinned'? (accepted: direct, "),
    ("", '["peaks"]\noptions = { network-tools = "gmb-tcp,bogus" }',
     "options.network-tools = \"gmb-tcp,bogus\": 'bogus' is not a value --network-tools accepts (accepted: auto, "
     "gmb-tcp, iperf3, ucx_perftest, ib_write_bw, fi_pingpong, or a comma-separated list of them)"),
    ("", '["peaks"]\noptions = { network-tools = "iperf" }', "did you mean 'iperf3'?"),
    ("", '["coll"]\noperations = ["bogusop"]',
     "[[run]] #1: operations: unknown operation 'bogusop' (accepted: bcast, reduce, allreduce, "),
    ("", '["coll"]\noperations = ["alreduce"]', "did you mean 'allreduce'?"),
    ("", '["bw"]\noperations = ["allreduce"]', "operations: none of bw takes an operation"),
    ("", '["bw"]\nstrategies = ["bogus"]',
     "[[run]] #1: strategies: unknown strategy 'bogus' for bw (accepted: direct, staged-pageable, staged-pinned, "
     "pipelined, pipelined-gpu)"),
    ("", '["bw"]\nstrategies = ["staged-pined"]', "did you mean 'staged-pinned'?"),
    ("", '["coll"]\nstrategies = ["direct"]', "strategies: coll takes no --strategy"),
    ("timeout_s = inf", '["bw"]', "timeout_s must be a number of seconds > 0 and finite (got inf)"),
    ("timeout_s = nan", '["bw"]', "timeout_s must be a number of seconds > 0 and finite (got nan)"),
])
def test_bad_campaign_is_refused_before_a_results_directory_exists(fake_setup, node_dir, capsys, head, block,
                                                                   message):
    """What the engine would refuse, checked against its description (its own lists of memory kinds, rank bounds,
    options, operations, strategies: none kept in the harness), sizes the engine would refuse or measure twice, a
    timeout that is not a finite number: exit 2, no results directory."""
    f = fake_setup["tmp"] / "bad.toml"
    f.write_text(BLOCK % (head, block))
    res = fake_setup["tmp"] / "res"
    rc = main(["run", str(f), "--results", str(res), "--config", str(fake_setup["config"]), "--no-detect"])
    err = capsys.readouterr().err
    assert rc == 2 and message in err, err
    assert not res.exists()


@pytest.fixture
def no_allocation(monkeypatch):
    """Outside any Slurm allocation, as a login shell is."""
    for name in ("SLURM_JOB_ID", "SLURM_JOB_NUM_NODES", "SLURM_NNODES"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("args, message", [
    (["plan", "--quick", "--nodes", "2"], "--nodes 2: launches on 2 nodes need hosts to run on, and there are none "
                                          "but this one: give a hostfile (--hostfile FILE"),
    (["run", "--quick", "--nodes", "2", "--dry-run"], "or run inside a Slurm allocation (salloc, sbatch"),
    (["tune", "--nodes", "2", "--list"], "--nodes 2: launches on 2 nodes need hosts to run on"),
    (["run", "--quick", "--dry-run", "--nodes", "3", "--hostfile", "HF2"],
     "--nodes 3: the hostfile HF2 names 2 host(s) (nodea, nodeb); at most --nodes 2 here"),
    (["run", "--quick", "--dry-run", "--nodes", "2", "--ranks-per-node", "4", "--hostfile", "HF2"],
     "--ranks-per-node 4: more ranks per node than the hostfile gives nodea (slots=2), nodeb (slots=2)"),
    (["run", "--quick", "--dry-run", "--hostfile", "GARBAGE"],
     "--hostfile GARBAGE: not a hostfile: line 1: 'is' is no NAME=VALUE (a line is 'HOST slots=N' or 'HOST:N')"),
    (["run", "--quick", "--dry-run", "--hostfile", "HF2", "--nic", "lo"],
     "nic lo: lo is a loopback interface, which cannot reach another host, and launch "),
])
def test_plans_that_cannot_run_here_are_refused(fake_setup, node_dir, no_allocation, capsys, args, message):
    """Several nodes without anything to place them on (no hostfile, no Slurm allocation), more nodes than the
    hostfile's hosts, more ranks per node than its slots, a hostfile that is none, a loopback card for launches
    between hosts: refused at plan time by run, plan and tune alike (exit 2), saying what was asked and what there
    is; nothing made."""
    hf2 = fake_setup["tmp"] / "hf2"
    hf2.write_text("nodea slots=2\nnodeb slots=2\n")
    garbage = fake_setup["tmp"] / "garbage"
    garbage.write_bytes(b"this is not a hostfile\n\x00\x01garbage slots=x\n")
    paths = {"HF2": str(hf2), "GARBAGE": str(garbage)}
    args = [paths.get(a, a) for a in args]
    res = fake_setup["tmp"] / "res"
    rc = main([*args, "--config", str(fake_setup["config"]), "--no-detect"] + (["--results", str(res)]
                                                                              if args[0] != "plan" else []))
    err = capsys.readouterr().err
    assert rc == 2 and "".join(paths.get(w, w) for w in re.split(r"(HF2|GARBAGE)", message)) in err, err
    assert not res.exists()


def test_nodes_of_a_slurm_allocation_are_what_there_is(fake_setup, node_dir, monkeypatch, capsys):
    monkeypatch.setenv("SLURM_JOB_ID", "77")
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "2")
    args = ["--config", str(fake_setup["config"]), "--no-detect"]
    assert main(["plan", "--quick", "--nodes", "3", *args]) == 2
    assert "--nodes 3: the Slurm allocation (job 77) has 2 node(s); at most --nodes 2 here" in capsys.readouterr().err
    assert main(["plan", "--quick", "--nodes", "2", *args]) == 0


def test_a_run_in_a_deleted_directory_or_with_too_long_a_results_path_is_refused(fake_setup, campaign_file,
                                                                                 node_dir, capsys, monkeypatch):
    """The launchers cannot start in a deleted directory; a results directory whose files the OS or SQLite could not
    open: refused before anything is made, saying which limit."""
    args = ["--config", str(fake_setup["config"]), "--no-detect", "--no-progress"]
    gone = fake_setup["tmp"] / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert main(["run", str(campaign_file), "--results", str(fake_setup["tmp"] / "res"), *args]) == 2
    assert "the current directory was deleted: the launchers start every process in it" in capsys.readouterr().err
    monkeypatch.chdir(fake_setup["tmp"])
    deep = fake_setup["tmp"] / "/".join(["d" * 99] * 39)
    assert main(["run", str(campaign_file), "--results", str(deep), *args]) == 2
    assert "too long a path for the results directory: its store's journal would be store.sqlite-journal at a " \
           "path of " in capsys.readouterr().err
    wide = fake_setup["tmp"] / ("w" * 300)
    assert main(["run", str(campaign_file), "--results", str(wide), *args]) == 2
    err = capsys.readouterr().err
    assert "a name in it would be 300 bytes" in err and "(NAME_MAX)" in err, err
    assert [p.name for p in fake_setup["tmp"].iterdir() if p.is_dir()] == ["bin"]  # nothing made


def test_latency_keeps_zero_bytes_where_bandwidth_refuses_them():
    """0 B is refused for the benchmarks the engine describes as bandwidths only: latency measures it."""
    check_against_engines(Campaign("c", [Block(["latency", "mlat", "coll"], sizes="0:8")]), {"a": describe()})
    for bench in ("bw", "bibw", "mbw", "rma_bw", "part_bw"):
        with pytest.raises(CampaignError, match=f"{bench} measures a bandwidth"):
            check_against_engines(Campaign("c", [Block([bench], sizes="0:8")]), {"a": describe()})


def test_results_that_is_a_file_is_refused(fake_setup, campaign_file, node_dir, capsys):
    f = fake_setup["tmp"] / "afile"
    f.write_text("keep me")
    rc = main(["run", str(campaign_file), "--results", str(f), "--config", str(fake_setup["config"]), "--no-detect"])
    assert rc == 2
    assert f"--results {f}: exists and is not a directory" in capsys.readouterr().err
    assert f.read_text() == "keep me"


def test_compare_of_a_mixed_result_set_names_the_options(tmp_path, capsys):
    both = tmp_path / "both.jsonl"
    synth.write_jsonl(both, [synth.context("a", "bw", "Open MPI v5.0.7"),
                             *synth.pt2pt_results("a", "bw", [1024, 4096], "host", "host", "host"),
                             synth.context("b", "bw", "MPICH Version: 4.0.2"),
                             *synth.pt2pt_results("b", "bw", [1024, 4096], "host", "host", "host", scale=1.3)])
    # one library chosen, the other set holding several: which of them is meant is not known
    assert main(["compare", str(both), str(both), "--a-library", "openmpi-5.0.7"]) == 2
    err = capsys.readouterr().err
    assert "result set B holds several libraries" in err and "choose one with --b-library (e.g. --a-library" in err
    assert main(["compare", str(both), str(both), "--a-library", "openmpi-5.0.7", "--b-library", "mpich-4.0.2"]) == 0


def test_compare_with_no_common_point_is_not_a_regression(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    synth.write_jsonl(a, [synth.context("a", "bw", "Open MPI v5.0.7"),
                          *synth.pt2pt_results("a", "bw", [1024], "host", "host", "host")])
    synth.write_jsonl(b, [synth.context("b", "latency", "Open MPI v5.0.7"),
                          *synth.pt2pt_results("b", "latency", [8], "host", "host", "host")])
    assert main(["compare", str(a), str(b)]) == 2
    assert "no point is present in both result sets" in capsys.readouterr().err


def test_write_new_never_overwrites_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "x.csv"
    outputs.write_new(p, "a,b\n")
    with pytest.raises(FileExistsError):
        outputs.write_new(p, "other\n")
    assert p.read_text() == "a,b\n"
    assert [f.name for f in tmp_path.iterdir()] == ["x.csv"]


# --------------------------------------------------------------------------- the real thing: mpirun and its ranks
def _real_campaign(tmp_path, name: str, repetitions: int, body: str) -> tuple[Path, str, dict]:
    """A campaign file for Debian's Open MPI, its library name, and the environment a `gmb` process runs with."""
    lib = debian_library("openmpi").name
    camp = tmp_path / f"{name}.toml"
    camp.write_text(f"""
[campaign]
name = "{name}"
repetitions = {repetitions}
order = "sequential"
libraries = ["{lib}"]
stop_library_after = 0
[[run]]
{body}
""")
    return camp, lib, {**os.environ, "HOME": str(tmp_path / "home")}


# A launch that times samples for SECONDS on any machine, fast or busy (a fixed iteration count would take minutes
# on a busy one): a precision no run reaches (+-0.0001 %), so the time cap ends it, the iteration cap out of reach.
# The tests stop it within moments of its start; a run that is not stopped ends at the cap.
LONG_LATENCY = """benchmarks = ["latency"]
memory = ["host:host"]
sizes = "4M"
options = { precision = 0.000001, max-seconds = %d, iters-large = 2000000000, warmup-large = 1 }"""


@pytest.mark.skipif(not have_debian("openmpi"), reason="needs cmake, g++ and Debian's Open MPI")
def test_real_mpirun_orphans_are_stopped_before_the_rerun(real_env, tmp_path, node_dir):
    """gmb killed with SIGKILL while Open MPI's mpirun runs two ranks: mpirun and the ranks live on; the resume
    stops all of them (they would share the cores with the rerun) and the launch's figures come from the rerun."""
    # half a minute of timed samples: the orphans still run when the resume, after detecting the libraries and
    # checking the engine (seconds on a busy machine), looks for them
    camp, lib, env = _real_campaign(tmp_path, "orphans", 1, LONG_LATENCY % 30)
    argv = [sys.executable, "-m", "gmb", "run", str(camp), "--results", str(tmp_path / "res"), "--library", lib,
            "--no-progress", "--no-report"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    outdir = _results_dir(tmp_path / "res")
    launch = _running_launch(outdir)

    def ranks():
        return [p for p in leftovers.session_members(launch["session"])
                if Path(leftovers.command_line(p).split(" ")[0]).name == "gmb-bench"]

    deadline = time.monotonic() + WAIT_S
    while len(ranks()) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.kill()
    proc.communicate(timeout=30)
    orphans = leftovers.session_members(launch["session"])
    assert len(ranks()) >= 2, ([leftovers.command_line(p) for p in orphans],
                               [f.read_text()[-3000:] for f in (outdir / "logs").glob("*")])
    done = subprocess.run([sys.executable, "-m", "gmb", "run", "--resume", str(outdir), "--library", lib,
                           "--no-progress", "--no-report"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "leftover process(es)" in done.stderr
    assert all(not Path(f"/proc/{p}").exists() for p in orphans)
    _check_complete(outdir, launches=1)


@pytest.mark.skipif(not have_debian("openmpi"), reason="needs cmake, g++ and Debian's Open MPI")
def test_real_ranks_that_outlive_a_killed_launcher_are_stopped(real_env, tmp_path, node_dir):
    """mpirun killed with SIGKILL mid-launch: the launch fails with a reason, no rank of it outlives it (the next
    launch would share its cores), and the campaign goes on to the next launch."""
    camp, lib, env = _real_campaign(tmp_path, "launcher", 2, LONG_LATENCY % 15)
    proc = subprocess.Popen([sys.executable, "-m", "gmb", "run", str(camp), "--results", str(tmp_path / "res"),
                             "--library", lib, "--no-progress", "--no-report"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    outdir = _results_dir(tmp_path / "res")
    launch = _running_launch(outdir)
    deadline = time.monotonic() + WAIT_S
    while len(leftovers.session_members(launch["session"])) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    ranks = [p for p in leftovers.session_members(launch["session"]) if p != launch["session"]]
    os.kill(launch["session"], signal.SIGKILL)  # the launcher, the session's leader
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, err
    assert all(not Path(f"/proc/{p}").exists() for p in ranks)
    rows = dict(_rows(outdir, "SELECT launch_id, status FROM launches"))
    assert rows[launch["id"]] == "failed" and sorted(rows.values()) == ["failed", "ok"]
    log = (outdir / "logs" / f"{launch['id']}.log").read_text()
    # Open MPI 4.1's ranks outlive a killed mpirun for a while, or notice its death and end on their own first (the
    # race goes either way; test_processes_that_outlive_their_launcher_are_stopped_and_logged has no race)
    assert ranks and "gmb: killed" not in log


def test_processes_that_outlive_their_launcher_are_stopped_and_logged(tmp_path):
    """A launcher that dies leaving a process of its session running: the launch's end stops it and the log names
    it."""
    from gmb.run import execute

    log = tmp_path / "x.log"
    pid_file = tmp_path / "child"
    status, rc, _ = execute._execute(["sh", "-c", f"sleep 300 & echo $! > {pid_file}; kill -9 $$"], None, log, 60)
    child = int(pid_file.read_text())
    assert status == "failed" and rc == -9
    assert "process(es) of the launch outlived its launcher" in log.read_text()
    stat = Path(f"/proc/{child}/stat")
    assert not stat.exists() or stat.read_text().split(")")[-1].split()[0] == "Z"  # gone, or dead and not reaped yet


def test_ingest_into_a_store_another_process_writes_waits_then_says_so(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    Store(db).close()
    other = sqlite3.connect(db)
    other.execute("BEGIN IMMEDIATE")  # another gmb in the middle of its transaction
    try:
        rc = main(["ingest", str(db), str(DATA / "sample-bw-device.jsonl")])
    finally:
        other.rollback()
        other.close()
    assert rc == 2
    assert "another process is writing to the store (still locked after 5 s); nothing of it was stored" in \
        capsys.readouterr().err
    assert main(["ingest", str(db), str(DATA / "sample-bw-device.jsonl")]) == 0


@pytest.mark.skipif(not have_debian("openmpi"), reason="needs cmake, g++ and Debian's Open MPI")
def test_real_sizes_past_the_count_limit_are_stored_unsupported(real_env, tmp_path, node_dir):
    """A sweep to 4 GiB: the engine measures 1 KiB and refuses 4 GiB before allocating it; the campaign stores both,
    the refusal with its reason, and the launch counts as unsupported (not failed)."""
    camp, lib, env = _real_campaign(tmp_path, "big", 1, """benchmarks = ["bw", "latency"]
memory = ["host:host"]
sizes = "1K,2G,4G"
options = { iters = 20, warmup = 2, iters-large = 2, warmup-large = 0 }""")
    done = subprocess.run([sys.executable, "-m", "gmb", "run", str(camp), "--results", str(tmp_path / "res"),
                           "--library", lib, "--no-progress", "--no-report"], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    outdir = _results_dir(tmp_path / "res")
    assert sorted(_rows(outdir, "SELECT status FROM launches")) == [("unsupported",), ("unsupported",)]
    rows = _rows(outdir, "SELECT benchmark, bytes, status, reason FROM results ORDER BY benchmark, bytes")
    assert [(b, n, st) for b, n, st, _ in rows] == [
        ("bw", 1024, "ok"), ("bw", 2 << 30, "unsupported"), ("bw", 4 << 30, "unsupported"),
        ("latency", 1024, "ok"), ("latency", 2 << 30, "unsupported"), ("latency", 4 << 30, "unsupported")]
    assert all("exceeds the 2 GiB - 1 byte per-call count of MPI-3 calls" in r for *_, r in rows if r)


# --------------------------------------------------------------------------- the fault trial of 2026-11-26
def test_deleting_the_lock_file_does_not_let_a_second_gmb_in(fake_setup, campaign_file, node_dir):
    """The results directory itself is locked: with gmb.lock deleted under a running campaign, a resume is still
    refused (it would run the same launches beside it), naming the holder, and runs nothing."""
    res = fake_setup["tmp"] / "res"
    first = _gmb(fake_setup, "run", campaign_file, "--results", res, env={"FAKE_HANG": "bw"}, wait=False)
    outdir = _results_dir(res)
    _running_launch(outdir)
    (outdir / locks.LOCK_NAME).unlink()
    logs = sorted(p.name for p in (outdir / "logs").iterdir())
    rc, _, err = _gmb(fake_setup, "run", "--resume", outdir)
    assert rc == 2 and "is in use by another gmb" in err and f"pid {first.pid}" in err, err
    assert sorted(p.name for p in (outdir / "logs").iterdir()) == logs  # nothing run, nothing set aside
    with pytest.MonkeyPatch.context() as mp:  # the directory lock alone, without the node's registry
        mp.setenv("GMB_NODE_LOCK_DIR", str(fake_setup["tmp"] / "elsewhere"))
        with pytest.raises(locks.ResultsBusy, match="is in use by another gmb"):
            locks.ResultsLock(outdir, "test").acquire()
    first.terminate()
    first.communicate(timeout=60)
    rc, _, err = _gmb(fake_setup, "run", "--resume", outdir)
    assert rc == 0, err
    _check_complete(outdir)


def test_a_campaign_of_this_node_in_the_same_results_directory_is_refused(fake_setup, campaign_file, node_dir,
                                                                         capsys):
    """Whatever lock it holds (an older gmb's, one on a file system that cannot lock directories), a campaign of
    this node that names the same results directory refuses a second one: exit 2, nothing run."""
    rc = main(["run", str(campaign_file), "--results", str(fake_setup["tmp"] / "res"), "--config",
               str(fake_setup["config"]), "--no-detect", "--no-progress", "--no-report"])
    assert rc == 0, capsys.readouterr().err
    outdir = _results_dir(fake_setup["tmp"] / "res")
    before = _rows(outdir, "SELECT * FROM launches")
    other = node_campaigns.NodeCampaigns(outdir)
    other.join()  # a campaign of this node in that directory (this process stands for it)
    try:
        rc = main(["run", "--resume", str(outdir), "--config", str(fake_setup["config"]), "--no-detect"])
    finally:
        other.leave()
    assert rc == 2
    assert f"{outdir} is in use by another gmb (pid {os.getpid()} on host {socket.gethostname()}, a campaign of " \
           f"this node since" in capsys.readouterr().err
    assert _rows(outdir, "SELECT * FROM launches") == before


def _no_directory_locks(monkeypatch):
    """A file system that cannot lock a directory (NFS): flock of a directory fails with EBADF."""
    real = locks.fcntl.flock

    def flock(fd, how):
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        return real(fd, how)

    monkeypatch.setattr(locks.fcntl, "flock", flock)


def test_a_lock_file_deleted_under_its_holder(tmp_path, monkeypatch):
    """Holding the directory, the holder makes gmb.lock again (a successor must read who held it); where only the file
    can be locked, the holder stops before its next launch, since a second gmb may hold a new file."""
    lock = locks.ResultsLock(tmp_path, "gmb run")
    lock.acquire()
    (tmp_path / locks.LOCK_NAME).unlink()
    lock.keep()
    assert json.loads((tmp_path / locks.LOCK_NAME).read_text())["pid"] == os.getpid()
    assert locks.held(tmp_path)
    lock.release()
    assert not locks.held(tmp_path)

    _no_directory_locks(monkeypatch)
    lock = locks.ResultsLock(tmp_path, "gmb run")
    lock.acquire()
    assert locks.held(tmp_path)  # seen from the file's lock
    with pytest.raises(locks.ResultsBusy):
        locks.ResultsLock(tmp_path, "gmb run").acquire()
    (tmp_path / locks.LOCK_NAME).unlink()
    with pytest.raises(locks.ResultsLockLost, match="was removed or replaced while this gmb held it"):
        lock.keep()
    lock.release()


def test_leftovers_are_launches_of_results_directories_no_gmb_holds(tmp_path):
    """A process naming a record file of a results directory is a leftover only while no gmb holds that directory:
    neither its directory lock nor its gmb.lock (held alone by a gmb that locks the file only, an older one)."""
    (tmp_path / "raw").mkdir()
    (tmp_path / "plan.json").write_text("{}")
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "--out",
                             str(tmp_path / "raw" / "x.jsonl")])
    try:
        deadline = time.monotonic() + 30
        while "--out" not in leftovers.command_line(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        here = str(tmp_path.resolve())

        def found(live):
            return [x["pids"] for x in leftovers.leftover_launches(live) if x["results"] == here]

        assert found(set()) == [[proc.pid]]
        assert found({here}) == []  # a live campaign of this node runs there
        fd = os.open(tmp_path / locks.LOCK_NAME, os.O_RDWR | os.O_CREAT)
        try:
            locks.fcntl.flock(fd, locks.fcntl.LOCK_EX)
            assert locks.held(tmp_path) and found(set()) == []
            with pytest.raises(locks.ResultsBusy):
                locks.ResultsLock(tmp_path, "gmb run").acquire()
        finally:
            os.close(fd)
    finally:
        proc.kill()
        proc.wait()


def _coll_records(path: Path, op_bytes_zero: bool = False) -> Path:
    recs = [synth.context("z", "coll", "Open MPI v4.1.4"), *synth.coll_results("z", ["allreduce"], [4, 1024], 2)]
    if op_bytes_zero:  # 3 bytes of float: no whole element, as an engine before the fix recorded it
        recs[1]["bytes"], recs[1]["dtype"] = 3, "float"
        recs[1].setdefault("metrics", {})["op_bytes"] = 0
    return synth.write_jsonl(path, recs)


def test_a_result_that_moved_no_data_is_not_stored_as_a_figure(tmp_path, capsys):
    f = _coll_records(tmp_path / "z.jsonl", op_bytes_zero=True)
    db = tmp_path / "s.sqlite"
    assert main(["ingest", str(db), str(f)]) == 0
    err = capsys.readouterr().err
    assert f"note: {f}: 1 ok result(s) moved no data (metrics.op_bytes 0" in err and "stored as unsupported" in err
    with Store(db, create=False) as st:
        rows = st.rows("SELECT bytes, status, reason FROM results ORDER BY bytes")
    assert [(b, s) for b, s, _ in [tuple(r.values()) for r in rows]] == [(3, "unsupported"), (1024, "ok")]
    assert rows[0]["reason"] == ("the operation moved no data (3 B of float makes no whole element per block: "
                                 "metrics.op_bytes 0), so its figures measure no transfer")


@pytest.mark.parametrize("change, message", [
    (lambda r: r.update(bytes="lots"), 'bytes must be an integer >= 0 and < 2^63 (got "lots")'),
    (lambda r: r.update(bytes=10 ** 30), "bytes must be an integer >= 0 and < 2^63 (got 1" + "0" * 30 + ")"),
    (lambda r: r["time_us"].update(median=-5.0), "time_us.median must be >= 0 (got -5.0)"),
    (lambda r: r["time_us"].update(median=0), "time_us.median must be > 0 (got 0)"),
    (lambda r: r["time_us"].update(min=100, median=1.0), "time_us.min must be <= time_us.max (got min 100, max "),
    (lambda r: r["time_us"].update(median=1000.0), "time_us.median must lie within [min, max] (got median 1000.0"),
    (lambda r: r.update(bandwidth_GBps={**r["time_us"], "p5": -1.0}), "bandwidth_GBps.p5 must be >= 0 (got -1.0)"),
    (lambda r: r.update(status="great"), 'status must be one of ok, unsupported, failed, skipped (got "great")'),
    (lambda r: r.pop("time_us"), "an ok result without its headline statistic time_us"),
    (lambda r: r["time_us"].update(median="fast"), "time_us must be an object of finite numbers"),
    (lambda r: r.update(memory=["host"]), "memory must be an object of memory kinds"),
    (lambda r: r.pop("run_id"), "no run_id (a non-empty string)"),
])
def test_ingest_refuses_a_record_that_cannot_make_a_row(tmp_path, capsys, change, message):
    """With or without --validate: the file and line, what is wrong; nothing of the files given is stored."""
    good = synth.write_jsonl(tmp_path / "good.jsonl", [synth.context("g", "latency", "Open MPI v4.1.4"),
                                                       *synth.pt2pt_results("g", "latency", [8], "host", "host",
                                                                            "host")])
    recs = [synth.context("b", "latency", "Open MPI v4.1.4"),
            *synth.pt2pt_results("b", "latency", [8, 64], "host", "host", "host")]
    change(recs[2])
    bad = synth.write_jsonl(tmp_path / "bad.jsonl", recs)
    db = tmp_path / "s.sqlite"
    assert main(["ingest", str(db), str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3: a result record that cannot be stored: {message}" in err, err
    assert "Traceback" not in err and not db.exists()


def test_record_files_are_split_at_newlines_only(tmp_path, capsys):
    """A record may hold U+2028, U+0085 or U+001C-1E in a string as they are (JSON allows it): they do not end its
    line; a file of such characters is no record file, not an empty one."""
    odd = tmp_path / "odd.jsonl"
    recs = [synth.context("u", "latency", env={"GMB_ODD": "a\u2028b\u0085c\x1cd\x1de\x1ef"}),
            *synth.pt2pt_results("u", "latency", [8, 64], "host", "host", "host")]
    odd.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs))
    db = tmp_path / "s.sqlite"
    assert main(["ingest", str(db), str(odd)]) == 0
    assert capsys.readouterr().out.startswith("2 result records into")
    seps = tmp_path / "seps.jsonl"
    seps.write_bytes(b"\x1c" * 100)
    assert main(["ingest", str(db), str(seps)]) == 2
    assert f"{seps}:1: not JSON" in capsys.readouterr().err


def test_results_without_their_context_are_refused_unless_the_store_holds_it(tmp_path, capsys):
    """A result line alone does not say what measured it: stored only under the context of its run, from the same
    file or the store; else refused with file and line, nothing stored."""
    ctx = synth.write_jsonl(tmp_path / "ctx.jsonl", [synth.context("r", "latency", "MPICH Version: 4.0.2"),
                                                     *synth.pt2pt_results("r", "latency", [8])])
    alone = synth.write_jsonl(tmp_path / "alone.jsonl", synth.pt2pt_results("r", "latency", [64, 128]))
    stranger = synth.write_jsonl(tmp_path / "stranger.jsonl", synth.pt2pt_results("x", "latency", [8]))
    db = tmp_path / "s.sqlite"
    assert main(["ingest", str(db), str(stranger)]) == 2
    err = capsys.readouterr().err
    assert f"{stranger}:1: a result of run 'x' without its context" in err and not db.exists()
    assert main(["ingest", str(db), str(ctx), str(alone)]) == 0  # its context first: the run is known
    with Store(db, create=False) as st:
        assert {r["library"] for r in st.rows("SELECT library FROM results")} == {"mpich-4.0.2"}
    assert main(["ingest", str(db), str(stranger), "--library", "mpich-4.0.2"]) == 2  # a name does not make one
    assert "a result of run 'x' without its context" in capsys.readouterr().err


def test_ingest_into_a_directory_that_does_not_exist(tmp_path, capsys):
    f = synth.write_jsonl(tmp_path / "f.jsonl", [synth.context("a", "latency"),
                                                 *synth.pt2pt_results("a", "latency", [8])])
    db = tmp_path / "nonexistent" / "dir" / "s.sqlite"
    assert main(["ingest", str(db), str(f)]) == 2
    assert f"{db}: the directory {db.parent} does not exist" in capsys.readouterr().err
    assert not (tmp_path / "nonexistent").exists()


def test_validation_names_the_schema_file_and_the_field(tmp_path, capsys, monkeypatch):
    recs = [synth.context("v", "latency"), *synth.pt2pt_results("v", "latency", [8])]
    recs[1]["benchmark"] = 12345
    f = synth.write_jsonl(tmp_path / "v.jsonl", recs)
    db = tmp_path / "s.sqlite"
    assert main(["ingest", str(db), str(f), "--validate"]) == 2
    err = capsys.readouterr().err
    assert f"{f}:2: schema violation at benchmark: 12345 is not of type 'string'" in err and len(err) < 300, err
    for text, message in (("{nope", "not a JSON schema, not JSON (Expecting property name"),
                          ("[1, 2]", "not a JSON schema ([1, 2] is not of type")):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        monkeypatch.setenv("GMB_SCHEMA", str(bad))
        assert main(["ingest", str(db), str(f), "--validate"]) == 2
        assert f"GMB_SCHEMA={bad}: {message}" in capsys.readouterr().err
    assert not db.exists()


def _damaged_copy(tmp_path: Path, name: str, sql: str) -> Path:
    """A store of the recorded H200 results with one change made behind gmb's back."""
    good = tmp_path / "good.sqlite"
    if not good.exists():
        assert main(["ingest", str(good), *map(str, sorted((DATA / "h200-x2").glob("*.jsonl")))]) == 0
    copy = tmp_path / f"{name}.sqlite"
    copy.write_bytes(good.read_bytes())
    db = sqlite3.connect(copy)
    db.executescript(sql)
    db.close()
    return copy


@pytest.mark.parametrize("sql, said", [
    ("UPDATE results SET json = json_set(json, '$.bandwidth_GBps.median', NULL) WHERE id IN (SELECT id FROM results "
     "WHERE status = 'ok' AND benchmark = 'bw' LIMIT 5)",
     "5 row(s) cannot be read (results.json: bandwidth_GBps.median null in an ok result"),
    ("UPDATE results SET bytes = 'lots' WHERE id = 3", "1 row(s) cannot be read (results.bytes not an integer: 1)"),
    ("UPDATE results SET json = json_set(json, '$.time_us.median', 'nan') WHERE id IN (4, 5)",
     "2 row(s) cannot be read (results.json: time_us.median not a finite number: 2)"),
    ("UPDATE results SET json = json_set(json, '$.time_us.median', json('1e999')) WHERE id = 4",
     "(results.json: time_us.median not a finite number: 1)"),
    ("UPDATE results SET json = '{not json' WHERE id = 6", "(results.json not JSON: 1)"),
    ("UPDATE results SET metrics = '{not json' WHERE id = 6", "(results.metrics not JSON: 1)"),
    ("UPDATE results SET config = '[1' WHERE id = 6", "(results.config not JSON: 1)"),
    ("UPDATE contexts SET json = '{not json' WHERE rowid = 1", "(contexts.json not JSON: 1)"),
])
def test_rows_a_damaged_store_cannot_read_are_named_and_left_out(tmp_path, capsys, sql, said):
    """Rows of a store changed behind gmb's back: each reader says which store, how many rows and which column, and
    leaves them out (tables, report, compare alike); never a TypeError."""
    damaged = _damaged_copy(tmp_path, "damaged", sql)
    capsys.readouterr()
    for args in (["tables", str(damaged)], ["report", str(damaged), "-o", str(tmp_path / "r.html")],
                 ["compare", str(damaged), str(damaged), "--a-library", "openmpi-5.0.7", "--b-library",
                  "openmpi-5.0.7"]):
        assert main(args) in (0, 1)
        err = capsys.readouterr().err
        assert f"gmb {args[0]}: warning: {damaged}: " in err and said in err and "left out of every table" in err, err
        assert "Error" not in err and "Traceback" not in err
    assert "Rows of the store left out" in (tmp_path / "r.html").read_text()


def test_duplicated_rows_of_a_store_count_once(tmp_path, capsys):
    """Every result row inserted a second time: the points, their launches and intervals are those of the store
    without them, and the duplicates are said."""
    from gmb.results.model import Results
    from gmb.results.points import combine

    doubled = _damaged_copy(tmp_path, "doubled", "CREATE TEMP TABLE again AS SELECT * FROM results; UPDATE again SET "
                                                 "id = id + 1000000; INSERT INTO results SELECT * FROM again;")
    with Store(tmp_path / "good.sqlite", create=False) as good, Store(doubled, create=False) as twice:
        once, dup = Results.load(good), Results.load(twice)
        n = len(good.rows("SELECT id FROM results"))
    assert dup.left_out == [f"{doubled}: the store holds {n} duplicate row(s) of results (the same run and point "
                            f"stored more than once): each measurement counted once"]
    assert [(p.reps, p.low, p.high) for p in combine(dup.ok())] == [(p.reps, p.low, p.high) for p in combine(once.ok())]
    capsys.readouterr()
    assert main(["tables", str(doubled)]) == 0
    assert f"the store holds {n} duplicate row(s)" in capsys.readouterr().err


def test_a_journal_beside_an_intact_store_is_named(tmp_path, capsys):
    store = _damaged_copy(tmp_path, "s", "SELECT 1")
    journal = Path(f"{store}-journal")
    # SQLite takes a journal whose first byte is 0 for no journal at all (not hot): random bytes would make the
    # test fail one run in 256
    journal.write_bytes(b"\x01" + os.urandom(4095))
    capsys.readouterr()
    for args in (["tables", str(store)], ["ingest", str(store), str(DATA / "sample-bw-device.jsonl")]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert f"{store}: cannot be read as it is: beside it lies {journal}, a rollback journal" in err, err
    assert journal.exists()  # left as it is: a reader changes nothing
    subprocess.run([sys.executable, "-c", f"import sqlite3; sqlite3.connect({str(store)!r}).execute('PRAGMA "
                                          f"quick_check')"], check=True)  # what the message says to do
    assert main(["tables", str(store)]) == 0


def test_a_launch_whose_records_cannot_make_rows_fails_with_the_reason(fake_setup, campaign_file, node_dir, capsys):
    rc = main(["run", str(campaign_file), "--results", str(fake_setup["tmp"] / "res"), "--config",
               str(fake_setup["config"]), "--no-detect", "--no-progress", "--no-report"])
    assert rc == 0, capsys.readouterr().err
    # the same campaign with an engine whose records cannot be stored
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FAKE_DAMAGE", "bw:bad-bytes")
        rc = main(["run", str(campaign_file), "--results", str(fake_setup["tmp"] / "bad"), "--config",
                   str(fake_setup["config"]), "--no-detect", "--no-progress", "--no-report"])
    assert rc == 1
    outdir = _results_dir(fake_setup["tmp"] / "bad")
    rows = _rows(outdir, "SELECT status, reason FROM launches")
    assert {s for s, _ in rows} == {"failed"} and all(
        'a result record that cannot be stored: bytes must be an integer >= 0 and < 2^63 (got "lots")' in r
        for _, r in rows)
    assert _rows(outdir, "SELECT COUNT(*) FROM results") == [(0,)]


@pytest.fixture
def read_only(tmp_path):
    """(directory, freeze): a directory, and what makes it read-only: a tmpfs remounted read-only (root), else
    permissions taken away (a user's)."""
    d = tmp_path / "ro"
    d.mkdir()
    root = os.geteuid() == 0
    if root and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(d)],
                               capture_output=True).returncode != 0:
        pytest.skip("needs a read-only directory: root may not mount a tmpfs here")

    def freeze():
        gc.collect()  # stores the test opened in this process closed: a file system with files open for writing
        if root:  # cannot be made read-only
            subprocess.run(["mount", "-o", "remount,ro", str(d)], check=True)
        else:
            for p in [d, *d.rglob("*")]:
                p.chmod(0o555 if p.is_dir() else 0o444)

    yield d, freeze
    if root:
        subprocess.run(["umount", "-l", str(d)], check=False)
    else:
        for p in [d, *d.rglob("*")]:
            p.chmod(0o755)


def _write_failure(err: str, path) -> bool:
    return str(path) in err and ("read-only file system" in err or "permission denied" in err) and \
        "Traceback" not in err


def test_a_read_only_results_directory_or_store(fake_setup, campaign_file, node_dir, read_only, capsys):
    """A results directory, its parent or a store that cannot be written: the path and the cause, exit 1 (a write
    failure), no traceback, nothing changed."""
    d, freeze = read_only
    args = ["--config", str(fake_setup["config"]), "--no-detect", "--no-progress", "--no-report"]
    assert main(["run", str(campaign_file), "--results", str(d / "res"), *args]) == 0
    outdir = _results_dir(d / "res")
    db = d / "s.sqlite"
    assert main(["ingest", str(db), str(DATA / "sample-bw-device.jsonl")]) == 0
    capsys.readouterr()
    freeze()
    assert main(["run", "--resume", str(outdir), *args]) == 1
    assert _write_failure(capsys.readouterr().err, outdir / locks.LOCK_NAME)
    assert main(["run", str(campaign_file), "--results", str(d / "more"), *args]) == 1
    err = capsys.readouterr().err
    assert _write_failure(err, d / "more") and "cannot create the results directory" in err, err
    assert main(["ingest", str(db), str(DATA / "sample-bw-device.jsonl")]) == 1
    err = capsys.readouterr().err
    assert f"{db}: cannot open the store for writing: the store cannot be written (attempt to write a readonly " \
           f"database" in err and "Traceback" not in err, err


def test_every_output_is_checked_writable_before_any_is_written(tmp_path, read_only, capsys):
    """`gmb report GOOD --csv RO_DIR`: the read-only CSV directory is found before the report is written; nothing
    is written, exit 1 (a write failure), the same for -o into a read-only directory."""
    d, freeze = read_only
    good = _damaged_copy(tmp_path, "s", "SELECT 1")
    freeze()
    capsys.readouterr()
    assert main(["report", str(good), "--csv", str(d)]) == 1
    err = capsys.readouterr().err
    assert f"--csv {d}: cannot write in {d}: " in err and _write_failure(err, d) and "nothing was written" in err
    assert main(["report", str(good), "--csv", str(d / "new")]) == 1  # made there: its parent is checked
    assert f"--csv {d / 'new'}: cannot write in {d}: " in capsys.readouterr().err
    assert main(["report", str(good), "-o", str(d / "r.html"), "--csv", str(tmp_path / "csv")]) == 1
    assert f"the report {d / 'r.html'}: cannot write in {d}" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.sqlite", "ro", "s.sqlite"]


def test_a_reader_that_closes_stdout_loses_the_printout_not_the_report(fake_setup, campaign_file, node_dir):
    """`gmb run ... | head -1`: gmb's stdout closed before it writes; the campaign runs, its report is written, no
    traceback, exit 0."""
    proc = subprocess.Popen([sys.executable, "-m", "gmb", "run", str(campaign_file), "--results",
                             str(fake_setup["tmp"] / "res"), "--config", str(fake_setup["config"]), "--no-detect"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    assert (_results_dir(fake_setup["tmp"] / "res") / "report.html").is_file()


@pytest.mark.parametrize("closed", ["stdout", "stderr"])
def test_a_closed_stdout_or_stderr_loses_the_printout_not_the_run(fake_setup, campaign_file, node_dir, closed):
    """`gmb run ... >&-` and `2>&-`: the campaign runs whole, its report is written, what cannot be printed is
    dropped (no traceback), exit 0; no record file or store receives what was meant for the closed stream."""
    res = fake_setup["tmp"] / "res"
    argv = [sys.executable, "-m", "gmb", "run", str(campaign_file), "--results", str(res), "--config",
            str(fake_setup["config"]), "--no-detect", "--no-progress"]
    fd = {"stdout": 1, "stderr": 2}[closed]
    done = subprocess.run(["sh", "-c", f'exec "$@" {fd}>&-', "sh", *argv], capture_output=True, text=True,
                          timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr and "Exception" not in done.stdout + done.stderr
    outdir = _results_dir(res)
    _check_complete(outdir)
    assert (outdir / "report.html").is_file()
    said = done.stderr if closed == "stdout" else done.stdout
    assert str(outdir) in said  # the stream left open still says where the results are


def test_processes_of_a_killed_gmb_are_named_to_the_next_campaign(fake_setup, campaign_file, node_dir):
    """gmb killed with SIGKILL: its launch runs on; a campaign started in another results directory warns, naming the
    processes and how to stop them, and its store and report say so. The killed gmb ran with a relative --results
    (its processes name their record file relative to its directory), the next one elsewhere; the advice given, to
    resume that campaign, stops them."""
    first = _gmb(fake_setup, "run", campaign_file, "--results", "r1", env={"FAKE_HANG": "bw"}, wait=False,
                 cwd=fake_setup["tmp"])
    left_dir = _results_dir(fake_setup["tmp"] / "r1")
    launch = _running_launch(left_dir)
    first.kill()
    first.communicate(timeout=30)
    elsewhere = fake_setup["tmp"] / "elsewhere"
    elsewhere.mkdir()
    try:
        named = [p for p in leftovers.session_members(launch["session"])
                 if leftovers.names_record_file(p, launch["record_file"])]
        rc, _, err = _gmb(fake_setup, "run", campaign_file, "--results", fake_setup["tmp"] / "r2", cwd=elsewhere)
        assert rc == 0, err
        assert named and f"process(es) of a launch whose gmb is gone still run on this node (pids " in err
        assert all(str(p) in err for p in named) and f"results {left_dir.resolve()}" in err and "kill " in err
        (advice,) = re.findall(r"resume that campaign \((gmb run --resume \S+)\)", err)
        rc, _, err = _gmb(fake_setup, *shlex.split(advice)[1:], cwd=elsewhere)
        assert rc == 0 and f"died while running launch {launch['id']}; stopped its" in err, err
        assert leftovers.session_members(launch["session"]) == []
    finally:
        leftovers.stop_session(launch["session"])
    outdir = _results_dir(fake_setup["tmp"] / "r2")
    (noted,) = json.loads(_rows(outdir, "SELECT value FROM meta WHERE key='concurrent_campaigns'")[0][0])
    assert noted["leftover"] and noted["results"] == str(left_dir.resolve()) and set(named) <= set(noted["pids"])
    assert "processes of a launch whose gmb is gone" in (outdir / "report.html").read_text()


def test_the_resume_command_printed_is_one_that_works(fake_setup, campaign_file, node_dir, capsys):
    """Stopped by a signal, gmb prints the resume with the options that found its libraries; a resume without them
    says what to add."""
    res = fake_setup["tmp"] / "res"
    proc = _gmb(fake_setup, "run", campaign_file, "--results", res, env={"FAKE_HANG": "bw"}, wait=False)
    outdir = _results_dir(res)
    _running_launch(outdir)
    proc.terminate()
    _, err = proc.communicate(timeout=60)
    (hint,) = re.findall(r"continue with `(.*)`", err)
    argv = shlex.split(hint)
    assert argv[:4] == ["gmb", "run", "--resume", str(outdir)] and \
        argv[4:] == ["--config", str(fake_setup["config"].resolve()), "--no-detect"]
    rc = main(["run", "--resume", str(outdir), "--no-detect"])  # without the libraries file
    assert rc == 2
    err = capsys.readouterr().err
    assert f"cannot resume: libraries fakempi-a, fakempi-b not found; the campaign was run with --config " \
           f"{fake_setup['config'].resolve()} --no-detect: resume it with `{hint}`" in err
    done = subprocess.run([sys.executable, "-m", "gmb", *argv[1:], "--no-progress"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    _check_complete(outdir)


@pytest.mark.parametrize("name, ok", [("mpich", False), ("openmpi-5.0", False), ("baseline", False),
                                      ("openmpi-4.1-ucx", True)])
def test_ingest_under_a_name_gmb_does_not_know(tmp_path, capsys, name, ok):
    """Open MPI 4.1.4 records under a name that is neither found nor declared: stored only where the name says the
    records' family (and version); else refused with how to declare the name or to label anyway."""
    f = synth.write_jsonl(tmp_path / "ompi.jsonl", [synth.context("o", "bw", "Open MPI v4.1.4"),
                                                    *synth.pt2pt_results("o", "bw", [1024], "host", "host", "host")])
    db = tmp_path / "s.sqlite"
    rc = main(["ingest", str(db), str(f), "--library", name, "--no-detect"])
    err = capsys.readouterr().err
    if ok:
        assert rc == 0 and f"{name} is not a library gmb found or was declared" in err
        return
    assert rc == 2 and not db.exists()
    assert f"{name} is not a library gmb found or was declared (gmb libs), and the records say another one" in err
    assert f"{f}: its records say openmpi-4.1.4" in err and "--config FILE" in err and "--no-check" in err
    assert main(["ingest", str(db), str(f), "--library", name, "--no-check"]) == 0
    with Store(db, create=False) as st:
        assert st.libraries() == [name]


def test_sigint_stops_a_gmb_started_with_sigint_ignored(fake_setup, campaign_file, node_dir):
    """A script's background job starts with SIGINT ignored; `kill -INT` still stops gmb as documented."""
    res = fake_setup["tmp"] / "res"
    proc = _gmb(fake_setup, "run", campaign_file, "--results", res, env={"FAKE_HANG": "bw"}, wait=False,
                start=_as_in_the_background_of_a_script)
    outdir = _results_dir(res)
    launch = _running_launch(outdir)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert leftovers.session_members(launch["session"]) == []
    assert _rows(outdir, f"SELECT status FROM launches WHERE launch_id = '{launch['id']}'") == [("interrupted",)]


def test_report_outputs_are_checked_before_anything_is_written(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    out = tmp_path / "new.html"
    assert main(["report", str(DATA / "h200-x2"), "-o", str(out), "--csv", str(afile)]) == 2
    assert f"--csv {afile}: exists and is not a directory" in capsys.readouterr().err
    assert not out.exists() and afile.read_text() == "keep me"
    assert main(["tables", str(DATA / "h200-x2"), "--csv", str(afile)]) == 2
    assert capsys.readouterr().out == ""  # refused before any table is printed
    assert main(["report", str(DATA / "h200-x2"), "-o", str(tmp_path / "no" / "r.html")]) == 2
    assert f"the directory {tmp_path / 'no'} does not exist" in capsys.readouterr().err


def test_a_damaged_store_is_named(tmp_path, capsys):
    good = tmp_path / "good.sqlite"
    assert main(["ingest", str(good), *map(str, sorted((DATA / "h200-x2").glob("*.jsonl")))]) == 0
    data = bytearray(good.read_bytes())
    data[-8192:] = b"\xff" * 8192  # its last pages
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(bytes(data))
    capsys.readouterr()
    for args in (["compare", str(good), str(damaged)], ["tables", str(damaged)], ["report", str(damaged)]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert f"{damaged}: a damaged gmb store (" in err and "left untouched" in err and "Traceback" not in err, err
    assert damaged.read_bytes() == bytes(data)


def test_a_prefix_that_does_not_exist_is_said(tmp_path, capsys):
    cfg = tmp_path / "libs.toml"
    cfg.write_text('[[library]]\nname = "ghost"\nprefix = "/opt/does-not-exist"\n')
    assert main(["libs", "--config", str(cfg), "--no-detect"]) == 2
    assert "library 'ghost': prefix /opt/does-not-exist does not exist (a prefix is the directory an MPI library " \
           "is installed in, holding bin/mpirun or bin/mpiexec" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    cfg.write_text(f'[[library]]\nname = "ghost"\nprefix = "{tmp_path / "empty"}"\n')
    assert main(["libs", "--config", str(cfg), "--no-detect"]) == 2
    assert f"prefix {tmp_path / 'empty'} holds no bin/mpirun or bin/mpiexec" in capsys.readouterr().err


def test_a_record_file_cut_mid_line_says_what_it_dropped(fake_setup, campaign_file, node_dir, tmp_path, capsys):
    recs = [synth.context("c", "bw", "Open MPI v4.1.4"), *synth.pt2pt_results("c", "bw", [8, 64], "host", "host",
                                                                              "host")]
    f = synth.write_jsonl(tmp_path / "cut.jsonl", recs)
    f.write_text(f.read_text()[:-40])
    assert main(["ingest", str(tmp_path / "s.sqlite"), str(f)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("1 result records into")
    assert f"note: {f}:3: the last line is an incomplete record" in out.err and "dropped" in out.err
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FAKE_DAMAGE", "bw:cut")
        rc = main(["run", str(campaign_file), "--results", str(fake_setup["tmp"] / "res"), "--config",
                   str(fake_setup["config"]), "--no-detect", "--no-progress", "--no-report"])
    assert rc == 0, capsys.readouterr().err
    outdir = _results_dir(fake_setup["tmp"] / "res")
    for launch_id, status, reason in _rows(outdir, "SELECT launch_id, status, reason FROM launches"):
        assert status == "ok" and "the last line is an incomplete record" in reason
        assert "the last line is an incomplete record" in (outdir / "logs" / f"{launch_id}.log").read_text()


def test_plan_json_is_strict_json(fake_setup, campaign_file, node_dir, capsys):
    assert main(["run", str(campaign_file), "--results", str(fake_setup["tmp"] / "res"), "--config",
                 str(fake_setup["config"]), "--no-detect", "--no-progress", "--no-report", "--timeout", "30"]) == 0

    def refuse(name):
        raise AssertionError(f"{name} in plan.json")

    json.loads((_results_dir(fake_setup["tmp"] / "res") / "plan.json").read_text(), parse_constant=refuse)


def test_a_results_directory_is_read_through_its_store_only(fake_setup, campaign_file, node_dir, capsys):
    """A store.sqlite that is a directory (or missing) is refused, naming it: reading raw/ instead would label the
    figures otherwise without a word."""
    assert main(["run", str(campaign_file), "--results", str(fake_setup["tmp"] / "res"), "--config",
                 str(fake_setup["config"]), "--no-detect", "--no-progress", "--no-report"]) == 0
    outdir = _results_dir(fake_setup["tmp"] / "res")
    (outdir / "store.sqlite").rename(outdir / "kept.sqlite")
    (outdir / "store.sqlite").mkdir()
    capsys.readouterr()
    assert main(["tables", str(outdir)]) == 2
    assert f"{outdir / 'store.sqlite'}: is not a file; {outdir} is a results directory, read through its store" in \
        capsys.readouterr().err
    (outdir / "store.sqlite").rmdir()
    assert main(["tables", str(outdir)]) == 2
    assert f"{outdir / 'store.sqlite'}: is missing" in capsys.readouterr().err
    assert main(["tables", str(outdir / "raw")]) == 0


def test_exit_2_is_bad_input_only_when_the_engine_refused_its_arguments(tmp_path):
    """A launcher or its agent that exits 2 (a host it cannot reach) is a failed launch, not the engine's refusal."""
    from gmb.run import execute

    status, rc, reason = execute._execute(["sh", "-c", "echo 'ssh: Could not resolve hostname nohost' >&2; exit 2"],
                                          None, tmp_path / "agent.log", 60)
    assert (status, rc) == ("failed", 2) and "nohost" in reason
    status, rc, _ = execute._execute(["sh", "-c", "echo 'gmb-bench coll: error: unknown option --x' >&2; exit 2"],
                                     None, tmp_path / "engine.log", 60)
    assert (status, rc) == ("bad-input", 2)


RULE = "-" * 74
# Open MPI 4.1's words, as its mpirun printed them (a read-only TMPDIR; three ranks with ppr:1:node on one host) and
# as its TCP BTL's help text has them (a loopback card pinned between hosts)
READ_ONLY_TMP = f"""{RULE}
A call to mkdir was unable to create the desired directory:

  Directory: /tmp/ompi.vm.0
  Error:     Read-only file system

Please check to ensure you have adequate permissions to perform
the desired operation.
{RULE}
[vm:00812] [[28626,0],0] ORTE_ERROR_LOG: Error in file ../../../orte/util/session_dir.c at line 107
{RULE}
It looks like orte_init failed for some reason; your parallel process is
likely to abort.

  orte_session_dir failed
  --> Returned value Error (-1) instead of ORTE_SUCCESS
{RULE}
"""
PPR = f"""{RULE}
Your job has requested more processes than the ppr for
this topology can support:

  App: gmb-bench
  Number of procs:  3
  PPR: 1:node

Please revise the conflict and try again.
{RULE}
"""
TCP_CONNECT = f"""{RULE}
WARNING: Open MPI failed to TCP connect to a peer MPI process.  This
should not happen.

Your Open MPI job may now hang or fail.

  Local host: ftq1
  PID:        4242
  Message:    connect() to 127.0.0.1:1025 failed
  Error:      Connection refused (111)
{RULE}
"""


@pytest.mark.parametrize("output, then, reason", [
    (READ_ONLY_TMP, "exit 1", "A call to mkdir was unable to create the desired directory: Directory: /tmp/ompi.vm.0; "
                              "Error: Read-only file system"),
    (PPR, "exit 1", "Your job has requested more processes than the ppr for this topology can support: App: gmb-bench; "
                    "Number of procs: 3; PPR: 1:node"),
    (TCP_CONNECT, "sleep 300", "killed after 1 s; the log says: WARNING: Open MPI failed to TCP connect to a peer MPI "
                               "process. This should not happen. Local host: ftq1; PID: 4242; Message: connect() to "
                               "127.0.0.1:1025 failed; Error: Connection refused (111)"),
])
def test_a_launch_reason_is_the_line_that_says_what_happened(tmp_path, output, then, reason):
    """The reason stored is what the launcher said happened (with its details), not its closing advice ("Please
    revise the conflict", "Returned value Error (-1) instead of ORTE_SUCCESS") nor only "killed after N s"."""
    from gmb.run import execute

    (tmp_path / "said").write_text(output)
    status, _, why = execute._execute(["sh", "-c", f"cat {tmp_path / 'said'} >&2; {then}"], None,
                                      tmp_path / "launch.log", 1)
    assert status == ("timeout" if then.startswith("sleep") else "failed") and why == reason


def test_a_launch_that_hangs_in_mpi_finalize_is_ended_soon_and_named(tmp_path, monkeypatch):
    """The engine's "finished" line, then no exit: the launch ends FINALIZE_GRACE_S later (not at its timeout),
    as finalize-hang with the exit status the engine meant."""
    from gmb.run import execute

    monkeypatch.setattr(execute, "FINALIZE_GRACE_S", 1.0)
    t0 = time.monotonic()
    status, rc, reason = execute._execute(
        ["sh", "-c", "echo 'gmb-bench: finished (exit status 3); MPI_Finalize next' >&2; sleep 300"],
        None, tmp_path / "hang.log", 120)
    assert (status, rc) == ("finalize-hang", 3) and "MPI_Finalize did not return" in reason
    assert time.monotonic() - t0 < 60
    # an engine that exits after the line is an ordinary launch
    status, rc, _ = execute._execute(
        ["sh", "-c", "echo 'gmb-bench: finished (exit status 0); MPI_Finalize next' >&2; sleep 0.2"],
        None, tmp_path / "fine.log", 120)
    assert (status, rc) == ("ok", 0)
