# SPDX-License-Identifier: BSD-3-Clause
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gmb.cli import main
from gmb.results.store_file import SCHEMA_VERSION

CAMPAIGN = """
[campaign]
name = "e2e"
repetitions = 2
timeout_s = 20
seed = 3
[[run]]
benchmarks = ["peaks"]
libraries = ["fakempi-a"]
[[run]]
benchmarks = ["latency", "bw"]
memory = ["host:host"]
sizes = "1:64K"
options = { iters = 10, validate = true }
"""


def run_gmb(*args):
    return main([str(a) for a in args])


def test_run_campaign_end_to_end(fake_setup, tmp_path, capsys, monkeypatch):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    rc = run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                 "--no-build")
    out = capsys.readouterr()
    assert rc == 0, out.err
    (outdir,) = list((tmp_path / "res").iterdir())
    assert outdir.name.startswith("e2e-")
    raw = sorted(p.name for p in (outdir / "raw").iterdir())
    assert len(raw) == 2 + 2 * 2 * 2  # peaks x2 reps + (2 benches x 2 libs x 2 reps)
    assert len(list((outdir / "logs").iterdir())) == len(raw)
    db = sqlite3.connect(outdir / "store.sqlite")
    assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert {r[0] for r in db.execute("SELECT status FROM launches")} == {"ok"}
    libs = {r[0] for r in db.execute("SELECT DISTINCT library FROM results")}
    assert libs == {"fakempi-a", "fakempi-b"}
    assert db.execute("SELECT COUNT(DISTINCT repetition) FROM results WHERE benchmark='latency'").fetchone()[0] == 2
    assert (outdir / "report.html").is_file() and "data:image/png;base64," in (outdir / "report.html").read_text()
    plan = json.loads((outdir / "plan.json").read_text())
    assert plan["seed"] == 3 and len(plan["launches"]) == len(raw)
    assert "ETA" in out.err  # progress bar

    # compare the two libraries from the one result set; B is slower by construction (its launches read as run on
    # a quiet host: a busy one, as CI's can be, leaves every point without a verdict)
    monkeypatch.setattr("gmb.results.points.busy_launch", lambda load: False)
    capsys.readouterr()
    rc = run_gmb("compare", outdir, outdir, "--a-library", "fakempi-a", "--b-library", "fakempi-b")
    text = capsys.readouterr().out
    assert rc == 0 and "B/A" in text and "B worse (q " in text
    tol = tmp_path / "tol.toml"
    tol.write_text("[default]\nmax_regression_pct = 5\n")
    assert run_gmb("compare", outdir, outdir, "--a-library", "fakempi-a", "--b-library", "fakempi-b",
                   "--reference", tol) == 1

    # resume of a finished campaign does nothing and rewrites nothing
    before = {p: p.stat().st_mtime_ns for p in (outdir / "raw").iterdir()}
    rc = run_gmb("run", "--resume", outdir, "--config", fake_setup["config"], "--no-detect", "--no-report")
    assert rc == 0
    assert {p: p.stat().st_mtime_ns for p in (outdir / "raw").iterdir()} == before


def test_timeout_is_recorded_and_campaign_goes_on(fake_setup, tmp_path, monkeypatch, capsys):
    c = tmp_path / "c.toml"
    # The hung launch costs the whole timeout; the others (a fraction of a second each) must end well within it on
    # a busy machine too.
    c.write_text(CAMPAIGN.replace("timeout_s = 20", "timeout_s = 10").replace("repetitions = 2", "repetitions = 1"))
    monkeypatch.setenv("FAKE_HANG", "bw")
    rc = run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                 "--no-build", "--library", "fakempi-a", "--no-report")
    assert rc == 1
    (outdir,) = list((tmp_path / "res").iterdir())
    db = sqlite3.connect(outdir / "store.sqlite")
    st = dict(db.execute("SELECT benchmark, status FROM launches"))
    assert st == {"peaks": "ok", "latency": "ok", "bw": "timeout"}
    log = (outdir / "logs").glob("*bw*.log")
    assert "timeout" in next(log).read_text()


def test_resume_redoes_only_unfinished(fake_setup, tmp_path, monkeypatch, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN.replace("repetitions = 2", "repetitions = 1"))
    monkeypatch.setenv("FAKE_FAIL", "bw")
    run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res", "--no-build",
            "--library", "fakempi-a", "--no-report")
    (outdir,) = list((tmp_path / "res").iterdir())
    db = sqlite3.connect(outdir / "store.sqlite")
    # simulate an interruption in the middle of the latency launch
    db.execute("UPDATE launches SET status='running' WHERE benchmark='latency'")
    db.commit()
    lat_raw = next((outdir / "raw").glob("*latency*.jsonl"))
    monkeypatch.delenv("FAKE_FAIL")
    log = tmp_path / "mpirun.log"
    monkeypatch.setenv("FAKE_MPIRUN_LOG", str(log))
    assert run_gmb("run", "--resume", outdir, "--config", fake_setup["config"], "--no-detect", "--no-report") == 0
    launched = log.read_text().splitlines()
    assert len(launched) == 1 and " latency " in launched[0]  # failed bw counts as finished
    assert lat_raw.with_name(lat_raw.name + ".interrupted-1").exists()  # partial output kept, not overwritten
    assert dict(db.execute("SELECT benchmark, status FROM launches"))["latency"] == "ok"


def test_report_cli_and_no_overwrite(ompi_dir, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert run_gmb("report", ompi_dir, "-o", out, "--csv", tmp_path / "csv") == 0
    assert out.is_file() and (tmp_path / "csv" / "fraction_of_peak.csv").is_file()
    size = out.stat().st_size
    capsys.readouterr()
    assert run_gmb("report", ompi_dir, "-o", out) == 2
    err = capsys.readouterr().err
    assert "exists; not overwriting" in err and "--force" in err and out.stat().st_size == size


@pytest.mark.parametrize("args,msg", [
    (["report", "/nonexistent/dir"], "no such file"),
    (["compare", "/nonexistent/a", "/nonexistent/b"], "no such file"),
    (["run", "/nonexistent/c.toml", "--no-detect"], "no such campaign file"),
    (["libs", "--config", "/nonexistent/libs.toml"], "no such config file"),
    (["run", "--resume", "/tmp", "--no-detect"], "no plan.json"),
])
def test_bad_input_clear_message(args, msg, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2 and msg in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_bad_campaign_via_cli(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text("[[run]]\nbenchmarks=['bw']\nmemory=['hostonly']\n")
    rc = run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                 "--no-build")
    assert rc == 2 and "send:recv" in capsys.readouterr().err
    assert not (tmp_path / "res").exists()


def test_unknown_subcommand_usage_exit():
    with pytest.raises(SystemExit) as e:
        main(["frobnicate"])
    assert e.value.code == 2


def test_slurm_script(tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    out = tmp_path / "job.sbatch"
    assert run_gmb("slurm", c, "-o", out, "--nodes", "1,2,4", "--ranks-per-node", "4", "--gpus-per-node", "4",
                   "--no-engine-check") == 0  # fakempi-a is no library here: nothing to build (test_slurm.py)
    text = out.read_text()
    assert "#SBATCH --nodes=4" in text and "#SBATCH --gpus-per-node=4" in text
    assert "--launcher srun --nodes 1,2,4 --ranks-per-node 4" in text and text.count(" run ") == 1
    assert run_gmb("slurm", c, "-o", out) == 2  # no overwrite


def test_console_script_installed():
    p = subprocess.run([sys.executable, "-m", "gmb", "--version"], capture_output=True, text=True)
    assert p.returncode == 0 and "gmb" in p.stdout


# ------------------------------------------------------------------ bad input: one clear line, exit 2, nothing made
def _bad(rc, capsys, *needles):
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err, err
    for n in needles:
        assert n in err, err
    return err


def _nothing_made(tmp_path, log=None):
    assert not (tmp_path / "res").exists()
    if log is not None:
        assert not log.exists() or log.read_text() == ""


@pytest.mark.parametrize("cmd", ["run", "plan"])
@pytest.mark.parametrize("body,needles", [
    ('[[run]]\nbenchmarks = ["latency", "bww"]\nmemory = ["host:host"]\n',
     ["[[run]] #1: unknown benchmark 'bww'", "did you mean 'bw'", "known: latency, bw"]),
    ('[campaign]\nlibraries = ["fakempi-a", "fakempi-c"]\n[[run]]\nbenchmarks = ["latency"]\n',
     ["unknown library 'fakempi-c'", "found or declared: fakempi-a, fakempi-b"]),
    ('[[run]]\nbenchmarks = ["latency"]\n[[run]]\nbenchmarks = ["bw"]\nlibraries = ["ghost"]\n',
     ["[[run]] #2 libraries: unknown library 'ghost'"]),
])
def test_unknown_benchmark_or_library_is_an_error(cmd, body, needles, fake_setup, tmp_path, monkeypatch, capsys):
    """A typo in a campaign stops it before anything runs (it used to print "skipping" and run the rest, exit 0)."""
    c = tmp_path / "c.toml"
    c.write_text(body)
    log = tmp_path / "mpirun.log"
    monkeypatch.setenv("FAKE_MPIRUN_LOG", str(log))
    extra = ["--results", tmp_path / "res", "--no-build"] if cmd == "run" else []
    rc = run_gmb(cmd, c, "--config", fake_setup["config"], "--no-detect", *extra)
    err = _bad(rc, capsys, f"gmb {cmd}: error: {c}:", *needles)
    assert len(err.strip().splitlines()) == 1
    _nothing_made(tmp_path, log)


def test_benchmark_one_engine_lacks_is_still_a_skip(fake_setup, tmp_path, capsys):
    """'nbc' is listed by one engine (fakempi-b's) and not by the other (an older build): skipped with the reason for
    that one; a library left out by --library is a skip too, not an error."""
    cfg = fake_setup["config"]
    cfg.write_text(cfg.read_text().replace('engine = "', 'env = { FAKE_WITHOUT = "nbc" }\nengine = "', 1))
    c = tmp_path / "c.toml"
    c.write_text('[campaign]\nrepetitions = 1\n[[run]]\nbenchmarks = ["latency", "nbc"]\nmemory = ["host:host"]\n'
                 'sizes = "1:64"\nlibraries = ["fakempi-a", "fakempi-b"]\n')
    rc = run_gmb("run", c, "--config", cfg, "--no-detect", "--results", tmp_path / "res", "--no-build",
                 "--no-report", "--no-progress")
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "skipping fakempi-a: nbc: engine does not list this benchmark" in err
    assert "skipping fakempi-b" not in err
    c.write_text(c.read_text().replace('["latency", "nbc"]', '["latency"]'))
    rc = run_gmb("run", c, "--config", cfg, "--no-detect", "--results", tmp_path / "res", "--no-build",
                 "--no-report", "--no-progress", "--library", "fakempi-a")
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "skipping fakempi-b: block 1: library not found or not selected" in err
    # the run ends with its answers, then the results directory as the last line
    assert "Answers" in out and "host" in out.split("Answers", 1)[1]
    assert out.strip().splitlines()[-1].startswith(str(tmp_path / "res"))


@pytest.mark.parametrize("body,needles", [
    ('[campaign]\nrepetitions = "abc"\n[[run]]\nbenchmarks = ["bw"]\n', ['repetitions must be an integer >= 1',
                                                                        '"abc"']),
    ('[[run]]\nbenchmarks = ["bw"]\nranks = ["two"]\n', ['[[run]] #1: ranks must be an integer >= 1', '"two"']),
    ('[[run]]\nbenchmarks = ["bw"]\noptions = "x"\n', ["[[run]] #1: options must be a table", 'got a string']),
    ('run = 5\n', ["run must be [[run]] tables"]),
    ('[run]\nbenchmarks = ["bw"]\n', ["[run] must be written [[run]]"]),
    ('[campaign]\ntimeout_s = "long"\n[[run]]\nbenchmarks = ["bw"]\n', ["timeout_s must be a number of seconds > 0"]),
    ('[campaign]\nlibraries = 3\n[[run]]\nbenchmarks = ["bw"]\n', ["libraries must be a string or a list"]),
    ('[[run]]\nbenchmarks = [1]\n', ["benchmarks must be a string or a list of non-empty strings"]),
    ('[[run]]\nbenchmarks = ["bw"]\nenv = ["A=1"]\n', ["env must be a table"]),
    ('[[run]]\nbenchmarks = ["bw"]\ngpus = [-1]\n', ["gpus must be an integer >= 0"]),
])
def test_campaign_values_of_the_wrong_type(body, needles, fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text(body)
    rc = run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                 "--no-build")
    err = _bad(rc, capsys, f"gmb run: error: {c}:", *needles)
    assert len(err.strip().splitlines()) == 1
    _nothing_made(tmp_path)


@pytest.mark.parametrize("entry,needles", [
    ('[library]\nname = "x"\nlauncher_path = "/usr/bin/mpirun"\n', ["[library] must be written [[library]]"]),
    ('[[library]]\nname = "x"\nlauncher_path = "/usr/bin/mpirun"\nenv = "A=1"\n',
     ["library 'x': env must be a table", "'A=1'"]),
    ('[[library]]\nname = "x"\nlauncher_path = "/usr/bin/mpirun"\nlauncher = "qsub"\n',
     ["library 'x': unknown launcher 'qsub'", "accepted: mpiexec, mpirun, srun"]),
    ('[[library]]\nname = 5\nlauncher_path = "/usr/bin/mpirun"\n', ["name must be a non-empty string"]),
    ('[[library]]\nname = "x"\nlauncher_path = "/usr/bin/mpirun"\nenv = { A = [1] }\n', ["env.A must be a string"]),
])
def test_libraries_config_values_of_the_wrong_type(entry, needles, tmp_path, monkeypatch, capsys):
    cfg = tmp_path / "libs.toml"
    cfg.write_text(entry)
    monkeypatch.chdir(tmp_path)
    for cmd in (["libs"], ["run", "--results", str(tmp_path / "res"), "--no-build"]):
        rc = main([*cmd, "--config", str(cfg), "--no-detect"])
        _bad(rc, capsys, f"gmb {cmd[0]}: error: {cfg}", *needles)
    _nothing_made(tmp_path)


def test_unknown_launcher_rejected_before_anything(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    for cmd in ("run", "plan"):
        rc = run_gmb(cmd, c, "--config", fake_setup["config"], "--no-detect", "--launcher", "bogus",
                     *(["--results", tmp_path / "res", "--no-build"] if cmd == "run" else []))
        _bad(rc, capsys, f"gmb {cmd}: error: --launcher: unknown launcher 'bogus' (accepted: mpiexec, mpirun, srun)")
    _nothing_made(tmp_path)


@pytest.mark.parametrize("args,needle", [
    (["--repetitions", "0"], "--repetitions: must be an integer >= 1 (got '0')"),
    (["--repetitions", "-2"], "--repetitions: must be an integer >= 1 (got '-2')"),
    (["--timeout", "0"], "--timeout: must be a number of seconds > 0"),
    (["--timeout", "-5"], "--timeout: must be a number of seconds > 0"),
    (["--timeout", "inf"], "--timeout: must be a number of seconds > 0 (got 'inf')"),
    (["--timeout", "nan"], "--timeout: must be a number of seconds > 0 (got 'nan')"),
    (["--nodes", "0"], "--nodes: must be node counts, integers >= 1, comma-separated"),
    (["--ranks-per-node", "0"], "--ranks-per-node: must be an integer >= 1"),
])
def test_bad_numbers_on_the_command_line(args, needle, fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    with pytest.raises(SystemExit) as e:
        run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                "--no-build", *args)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "gmb run: error: argument " + needle in err and "Traceback" not in err
    _nothing_made(tmp_path)


@pytest.mark.parametrize("nodes,needle", [("1,x", "got '1,x'"), ("0", "got '0'"), ("2,,4", "got '2,,4'")])
def test_slurm_bad_node_counts(nodes, needle, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    out = tmp_path / "job.sbatch"
    with pytest.raises(SystemExit) as e:
        run_gmb("slurm", c, "-o", out, "--nodes", nodes)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "gmb slurm: error: argument --nodes: must be node counts, integers >= 1" in err and needle in err
    assert not out.exists()


def _finished_run(fake_setup, tmp_path):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN.replace("repetitions = 2", "repetitions = 1"))
    assert run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                   "--no-build", "--no-report", "--no-progress", "--library", "fakempi-a") == 0
    (outdir,) = list((tmp_path / "res").iterdir())
    return c, outdir


def test_resume_with_a_campaign_file_is_an_error(fake_setup, tmp_path, capsys):
    c, outdir = _finished_run(fake_setup, tmp_path)
    capsys.readouterr()
    before = sorted(p.name for p in outdir.rglob("*"))
    rc = run_gmb("run", c, "--resume", outdir, "--config", fake_setup["config"], "--no-detect")
    _bad(rc, capsys, f"the campaign comes from {outdir}")
    rc = run_gmb("run", "--resume", outdir, "--repetitions", "5", "--config", fake_setup["config"], "--no-detect")
    _bad(rc, capsys, "--repetitions cannot change a campaign already planned")
    assert sorted(p.name for p in outdir.rglob("*")) == before


def _interrupted_run(fake_setup, tmp_path):
    """A finished campaign whose latency launch is marked as still running (an interruption)."""
    _, outdir = _finished_run(fake_setup, tmp_path)
    db = sqlite3.connect(outdir / "store.sqlite")
    db.execute("UPDATE launches SET status='running' WHERE benchmark='latency'")
    db.commit()
    return outdir, db


def test_resume_where_the_engine_is_gone(fake_setup, tmp_path, monkeypatch, capsys):
    """A campaign resumed on a fresh node (or after the cache was cleared): the engine is built again; with
    --no-build, or for a declared engine gmb does not build, a clear error and nothing in the results touched."""
    from gmb.engine import build

    outdir, db = _interrupted_run(fake_setup, tmp_path)
    engine = fake_setup["bindir"] / "gmb-bench-a"
    moved = tmp_path / "elsewhere" / "gmb-bench"
    moved.parent.mkdir()
    engine.rename(moved)
    capsys.readouterr()
    before = {p: p.stat().st_mtime_ns for p in outdir.rglob("*") if p.suffix != ".sqlite"}
    rc = run_gmb("run", "--resume", outdir, "--config", fake_setup["config"], "--no-detect", "--no-build")
    _bad(rc, capsys, "cannot resume with --no-build", str(engine), "leave out --no-build")
    rc = run_gmb("run", "--resume", outdir, "--config", fake_setup["config"], "--no-detect")
    _bad(rc, capsys, "cannot resume", "gmb does not build it")
    assert {p: p.stat().st_mtime_ns for p in outdir.rglob("*") if p.suffix != ".sqlite"} == before

    # the library without its declared engine: gmb finds it one (no installed gmb-bench: built from the sources)
    config = fake_setup["config"]
    config.write_text(config.read_text().replace(f'engine = "{engine}"\n', ""))
    monkeypatch.setenv("GMB_SOURCE", str(Path(__file__).resolve().parents[2]))
    monkeypatch.delenv("GMB_ENGINE", raising=False)
    built = []
    monkeypatch.setattr(build, "build_all", lambda libs, **kw: built.append([x.name for x in libs]) or
                        {x.name: moved for x in libs})
    log = tmp_path / "mpirun.log"
    monkeypatch.setenv("FAKE_MPIRUN_LOG", str(log))
    assert run_gmb("run", "--resume", outdir, "--config", fake_setup["config"], "--no-detect", "--no-report") == 0
    assert built == [["fakempi-a"]]
    assert f"engine {engine} of fakempi-a was gone: built again at {moved}" in capsys.readouterr().err
    (launched,) = log.read_text().splitlines()
    assert " latency " in launched and str(moved) in launched
    assert dict(db.execute("SELECT benchmark, status FROM launches"))["latency"] == "ok"


@pytest.mark.parametrize("damage,needle", [
    (lambda t: "{ not json", "not valid JSON"),
    (lambda t: "[]", "expected a JSON object"),
    (lambda t: t.replace('"launches": [', '"launches": [7, '), "launch #1 must be an object"),
    (lambda t: t.replace('"engines": {', '"engines": 3, "x": {'), "'engines' must be an object"),
    # every launch carries its family (its placement on several nodes) and the plan its stop_library_after
    (lambda t: t.replace('"family": ', '"kind": '), "launch #1 must be an object with the keys"),
    (lambda t: t.replace('"stop_library_after": ', '"stop_after": '), "'stop_library_after' must be an integer"),
])
def test_damaged_plan_on_resume(damage, needle, fake_setup, tmp_path, capsys):
    _, outdir = _finished_run(fake_setup, tmp_path)
    plan = outdir / "plan.json"
    plan.write_text(damage(plan.read_text()))
    capsys.readouterr()
    before = {p: p.stat().st_mtime_ns for p in outdir.rglob("*")}
    rc = run_gmb("run", "--resume", outdir, "--config", fake_setup["config"], "--no-detect")
    _bad(rc, capsys, f"{plan}: damaged", needle, "cannot resume")
    assert {p: p.stat().st_mtime_ns for p in outdir.rglob("*")} == before


@pytest.mark.parametrize("text,needle", [
    ('[default]\nmax_regression_pct = "ten"\n',
     "[default] max_regression_pct must be a number of percent >= 0 (how much worse B may be than A) (got 'ten')"),
    ('[default]\nmax_regression_pct = 5\n[[rule]]\nbenchmark = "bw"\nmax_regression_pct = "5%"\n',
     "[[rule]] #1: max_regression_pct must be a number of percent"),
    ('[[rule]]\nbenchmark = "bw"\nmax_bytes = "8K"\n', "[[rule]] #1: max_bytes must be an integer"),
    ('[rule]\nbenchmark = "bw"\n', "[rule] must be written [[rule]]"),
    ('[default\nmax_regression_pct = 5\n', "not TOML (Expected ']' at the end of a table declaration"),
    ('[default]\nmax_regression_pct = -10\n', "[default] max_regression_pct must be a number of percent >= 0 (how "
                                              "much worse B may be than A) (got -10)"),
    ('[default]\nmax_regression_pct = nan\n', "[default] max_regression_pct must be a number of percent >= 0"),
    ('[default]\nmax_regression_pct = inf\n', "[default] max_regression_pct must be a number of percent >= 0"),
    ('[[rule]]\nbenchmark = "bw"\nmax_regression_pct = -1\n', "[[rule]] #1: max_regression_pct must be a number"),
    ('[[rule]]\nbenchmark = "bw"\nmin_bytes = -1\n', "[[rule]] #1: min_bytes must be an integer >= 0 (got -1)"),
])
def test_compare_reference_of_the_wrong_type(text, needle, ompi_dir, tmp_path, capsys):
    tol = tmp_path / "tol.toml"
    tol.write_text(text)
    rc = run_gmb("compare", ompi_dir, ompi_dir, "--reference", tol)
    _bad(rc, capsys, f"gmb compare: error: {tol}: ", needle)


def test_remaining_errors_are_one_line_and_debuggable(monkeypatch, tmp_path, capsys):
    """ValueError / TypeError / KeyError / sqlite3.DatabaseError that reach main: 'gmb <cmd>: error: ...', exit 2;
    GMB_DEBUG=1 prints the traceback too (a bug is not hidden)."""
    import gmb.cli as cli

    def boom(args):
        raise KeyError("launch_id")

    monkeypatch.setattr(cli, "cmd_tables", boom)
    monkeypatch.delenv("GMB_DEBUG", raising=False)
    rc = cli.main(["tables", str(tmp_path)])
    err = _bad(rc, capsys, "gmb tables: error: KeyError: 'launch_id'", "GMB_DEBUG=1")
    assert len(err.strip().splitlines()) == 1
    monkeypatch.setenv("GMB_DEBUG", "1")
    assert cli.main(["tables", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "in boom" in err and "gmb tables: error: KeyError: 'launch_id'" in err

    def db(args):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.delenv("GMB_DEBUG")
    monkeypatch.setattr(cli, "cmd_tables", db)
    _bad(cli.main(["tables", str(tmp_path)]), capsys,
         "gmb tables: error: DatabaseError: database disk image is malformed")


def test_hostfile_with_two_hosts_adds_inter_node_blocks(fake_setup, tmp_path, monkeypatch, capsys):
    hf = tmp_path / "hosts"
    hf.write_text("# two nodes\nnode1 slots=4\nnode2 slots=4\nnode1 slots=4\n")
    monkeypatch.setenv("FAKE_MPIRUN_LOG", str(tmp_path / "mpirun.log"))
    rc = run_gmb("run", "--quick", "--hostfile", hf, "--config", fake_setup["config"], "--no-detect", "--results",
                 tmp_path / "res", "--no-build", "--no-report", "--no-progress", "--repetitions", "1")
    assert rc == 0, capsys.readouterr().err
    (outdir,) = list((tmp_path / "res").iterdir())
    rows = sqlite3.connect(outdir / "store.sqlite").execute(
        "SELECT library, benchmark, planned_path, argv FROM launches").fetchall()
    inter = [(lib, b, json.loads(argv)) for lib, b, path, argv in rows if path == "inter-node"]
    assert {(lib, b) for lib, b, _ in inter} == {(lib, b) for lib in ("fakempi-a", "fakempi-b")
                                                 for b in ("latency", "bw", "bibw")} | {("fakempi-a", "peaks")}
    for lib, _, argv in inter:  # one rank per node: Open MPI's mpirun and Hydra's mpiexec
        assert argv[1:3] in (["-np", "2"], ["-n", "2"])
        assert ("--map-by ppr:1:node" if lib == "fakempi-a" else "-ppn 1") in " ".join(argv)
    intra = [json.loads(argv) for _, b, path, argv in rows if path == "host"]
    assert intra and not any("ppr:1:node" in " ".join(a) for a in intra)
    # one host: no inter-node block; an empty hostfile is bad input
    hf.write_text("node1 slots=8\n")
    capsys.readouterr()
    assert run_gmb("run", "--quick", "--hostfile", hf, "--dry-run", "--config", fake_setup["config"],
                   "--no-detect") == 0
    out = capsys.readouterr()
    assert "inter-node" not in out.out + out.err
    hf.write_text("# nothing\n")
    _bad(run_gmb("run", "--quick", "--hostfile", hf, "--config", fake_setup["config"], "--no-detect", "--results",
                 tmp_path / "res2", "--no-build"), capsys, "no host in it")
    assert not (tmp_path / "res2").exists()


def test_slurm_script_is_one_run_over_the_node_counts(tmp_path):
    """The batch script runs one `gmb run` over every node count (one results directory) and exits with its
    status."""
    from gmb.run import slurm
    from gmb.campaign import spec

    c = spec.load_campaign(Path(__file__).parents[2] / "campaigns" / "scaling.toml")
    fake = tmp_path / "gmb"
    fake.write_text('#!/bin/bash\necho "$@" >> "$GMB_FAKE_LOG"\nexit 1\n')
    fake.chmod(0o755)
    script = tmp_path / "job.sbatch"
    script.write_text(slurm.batch_script("campaigns/scaling.toml", c, [1, 2, 4], 4, 4, gmb=str(fake)))
    log = tmp_path / "calls"
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True,
                       env={**os.environ, "GMB_FAKE_LOG": str(log)})
    (call,) = log.read_text().splitlines()
    assert "--nodes 1,2,4 --ranks-per-node 4" in call and p.returncode == 1
    fake.write_text("#!/bin/bash\nexit 0\n")
    assert subprocess.run(["bash", str(script)], capture_output=True).returncode == 0
