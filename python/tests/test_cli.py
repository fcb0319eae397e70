import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gmb.cli import main

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


def test_run_campaign_end_to_end(fake_setup, tmp_path, capsys):
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
    assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "1"
    assert {r[0] for r in db.execute("SELECT status FROM launches")} == {"ok"}
    libs = {r[0] for r in db.execute("SELECT DISTINCT library FROM results")}
    assert libs == {"fakempi-a", "fakempi-b"}
    assert db.execute("SELECT COUNT(DISTINCT repetition) FROM results WHERE benchmark='latency'").fetchone()[0] == 2
    assert (outdir / "report.html").is_file() and "data:image/png;base64," in (outdir / "report.html").read_text()
    plan = json.loads((outdir / "plan.json").read_text())
    assert plan["seed"] == 3 and len(plan["launches"]) == len(raw)
    assert "ETA" in out.err  # progress bar

    # compare the two libraries from the one result set; B is slower by construction
    capsys.readouterr()
    rc = run_gmb("compare", outdir, outdir, "--a-library", "fakempi-a", "--b-library", "fakempi-b")
    text = capsys.readouterr().out
    assert rc == 0 and "B/A" in text and "yes, worse" in text
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
    c.write_text(CAMPAIGN.replace("timeout_s = 20", "timeout_s = 2").replace("repetitions = 2", "repetitions = 1"))
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
    assert "exists; not overwriting" in err and out.stat().st_size == size


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
    assert run_gmb("slurm", c, "-o", out, "--nodes", "1,2,4", "--ranks-per-node", "4", "--gpus-per-node", "4") == 0
    text = out.read_text()
    assert "#SBATCH --nodes=4" in text and "#SBATCH --gpus-per-node=4" in text
    assert "for N in 1 2 4" in text and "--launcher srun --nodes \"$N\"" in text
    assert run_gmb("slurm", c, "-o", out) == 2  # no overwrite


def test_console_script_installed():
    p = subprocess.run([sys.executable, "-m", "gmb", "--version"], capture_output=True, text=True)
    assert p.returncode == 0 and "gmb" in p.stdout
