# SPDX-License-Identifier: BSD-3-Clause
"""`gmb slurm`: the site's #SBATCH options as given (values that could break the script refused), the setup block
before anything runs, engines built before the job (the job runs `gmb run --no-build`), and the script run by bash
with a fake gmb."""

import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from gmb.engine import build
from gmb.engine import engines
from gmb.run import slurm
from gmb.campaign import spec
from gmb.cli import main

CAMPAIGN = """
[campaign]
name = "sl"
[[run]]
benchmarks = ["latency"]
libraries = ["fakempi-a"]
memory = ["host:host"]
sizes = "1:8"
"""

SITE = ["--partition", "gpu,debug", "--account", "proj-123", "--qos", "high_prio", "--reservation", "maint.1",
        "--constraint", "[rack1|rack2]&a100*2", "--time", "1-02:00:00"]


@pytest.fixture
def camp(tmp_path):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    return c


def gmb_slurm(camp, out, *more):
    return main(["slurm", str(camp), "-o", str(out), *map(str, more)])


def bash_n(path: Path):
    p = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_site_options_exactly_as_given(camp, tmp_path, fake_setup, capsys):
    out = tmp_path / "job.sbatch"
    rc = gmb_slurm(camp, out, "--config", fake_setup["config"], "--no-detect", "--nodes", "1,2", "--exclusive",
                   *SITE)
    assert rc == 0, capsys.readouterr().err
    text = out.read_text()
    sbatch = [ln for ln in text.splitlines() if ln.startswith("#SBATCH")]
    for opt, value in zip(SITE[::2], SITE[1::2]):
        assert sbatch.count(f"#SBATCH {opt}={value}") == 1, (opt, sbatch)
    assert sbatch.count("#SBATCH --exclusive") == 1 and "#SBATCH --nodes=2" in sbatch
    # the header is one block at the top: sbatch stops reading #SBATCH lines at the first command
    assert text.splitlines()[1:len(sbatch) + 1] == sbatch
    bash_n(out)


@pytest.mark.parametrize("value", ["user", "mcs", "topo"])
def test_exclusive_with_a_value(value, tmp_path):
    c = spec.load_campaign(Path(__file__).parents[2] / "campaigns" / "scaling.toml")
    text = slurm.batch_script("s.toml", c, [1], 1, 0, exclusive=value)
    assert f"#SBATCH --exclusive={value}\n" in text


@pytest.mark.parametrize("opt,value,needle", [
    ("--partition", "gpu\n#SBATCH --account=other", "'\\n'"),
    ("--partition", "gpu debug", "' '"),
    ("--account", "a;rm -rf ~", "';'"),
    ("--qos", "$(reboot)", "'$'"),
    ("--reservation", "r`id`", "'`'"),
    ("--qos", "\"normal\"", "'\"'"),
    ("--constraint", "a100 # x", "'#'"),
    ("--account", "", "is empty"),
    ("--time", "1 hour", "d-h:min:s"),
    ("--time", "01:00:00\nreboot", "d-h:min:s"),
    ("--exclusive=all", None, "=user, =mcs, =topo"),
])
def test_bad_values_refused(opt, value, needle, camp, tmp_path, fake_setup, capsys):
    out = tmp_path / "job.sbatch"
    rc = gmb_slurm(camp, out, "--config", fake_setup["config"], "--no-detect", opt, *([] if value is None else [value]))
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "gmb slurm: error:" in err and needle in err and "Traceback" not in err, err
    assert not out.exists()


def test_setup_lines_in_order_before_anything_runs(camp, tmp_path, fake_setup):
    setup_file = tmp_path / "site.sh"
    setup_file.write_text("module purge\nif [ -d /opt/x ]; then\n  export X=1\nfi\n")
    out = tmp_path / "job.sbatch"
    assert gmb_slurm(camp, out, "--config", fake_setup["config"], "--no-detect",
                     "--setup", "module load cuda openmpi", "--setup-file", setup_file,
                     "--setup", "source /sw/venv/bin/activate") == 0
    lines = out.read_text().splitlines()
    want = ["module load cuda openmpi", "module purge", "if [ -d /opt/x ]; then", "  export X=1", "fi",
            "source /sw/venv/bin/activate"]
    at = [lines.index(w) for w in want]
    assert at == sorted(at) and at == list(range(at[0], at[0] + len(want)))
    first_run = next(i for i, ln in enumerate(lines) if " run " in ln and not ln.startswith("#"))
    last_sbatch = max(i for i, ln in enumerate(lines) if ln.startswith("#SBATCH"))
    assert last_sbatch < at[0] and at[-1] < first_run
    bash_n(out)


@pytest.mark.parametrize("args,needle", [
    (["--setup", "echo 'unclosed"], "not complete shell"),
    (["--setup", "if true; then"], "not complete shell"),
    (["--setup", "module load a\nreboot"], "control character"),
    (["--setup-file", "/nonexistent/site.sh"], "--setup-file /nonexistent/site.sh"),
])
def test_bad_setup_refused(args, needle, camp, tmp_path, fake_setup, capsys):
    out = tmp_path / "job.sbatch"
    rc = gmb_slurm(camp, out, "--config", fake_setup["config"], "--no-detect", *args)
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and "Traceback" not in err, err
    assert not out.exists()


def test_engines_built_before_the_job(camp, tmp_path, fake_setup, monkeypatch, capsys):
    """The campaign's libraries only (fakempi-a), with the build options; the job never builds."""
    calls = []
    real = engines.choose

    def recording(libs, do_build, build_options=None, **kw):
        calls.append(([lib.name for lib in libs], do_build, build_options))
        return real(libs, do_build, build_options, **kw)
    monkeypatch.setattr(engines, "choose", recording)
    monkeypatch.delenv("GMB_ENABLE_CUDA", raising=False)
    out = tmp_path / "job.sbatch"
    assert gmb_slurm(camp, out, "--config", fake_setup["config"], "--no-detect", "--gpus-per-node", "4",
                     "-j", "3") == 0
    assert [(names, do_build) for names, do_build, _ in calls] == [(["fakempi-a"], True)]
    kw = calls[0][2]
    assert kw["cuda"] == "AUTO" and kw["jobs"] == 3  # for the GPU nodes: not this node's driver
    text = out.read_text()
    runs = [ln for ln in text.splitlines() if re.search(r"\brun\b", ln) and "cmd=(" in ln]
    assert runs and all(ln.rstrip(")").split()[-1] == "--no-build" or "--no-build" in ln.split() for ln in runs)
    assert f"--config {fake_setup['config']}" in runs[0] and "--no-detect" in runs[0]
    assert f"fakempi-a: {fake_setup['bindir'] / 'gmb-bench-a'} (declared" in text  # recorded
    assert f"export GMB_CACHE={Path(os.environ['GMB_CACHE']).resolve()}" in text
    bash_n(out)


def test_failed_build_writes_nothing(camp, tmp_path, fake_setup, monkeypatch, capsys):
    monkeypatch.setattr(engines, "choose", lambda libs, *a, **kw: {
        lib.name: engines.EngineChoice(None, "built", "", error=build.BuildError(f"{lib.name}: boom")) for lib in libs})
    out = tmp_path / "job.sbatch"
    assert gmb_slurm(camp, out, "--config", fake_setup["config"], "--no-detect") == 1
    err = capsys.readouterr().err
    assert "fakempi-a: boom" in err and "no script written" in err and not out.exists()


def test_no_build_checks_engines(camp, tmp_path, fake_setup, monkeypatch, capsys):
    monkeypatch.setattr(build, "build_all", lambda *a, **k: pytest.fail("--no-build built"))
    monkeypatch.delenv("GMB_ENGINE", raising=False)
    out = tmp_path / "job.sbatch"
    assert gmb_slurm(camp, out, "--config", fake_setup["config"], "--no-detect", "--no-build") == 0
    assert "found on" in out.read_text()
    out.unlink()
    (fake_setup["bindir"] / "gmb-bench-a").unlink()
    rc = gmb_slurm(camp, out, "--config", fake_setup["config"], "--no-detect", "--no-build")
    err = capsys.readouterr().err
    assert rc == 2 and "no engine for fakempi-a" in err and "--no-engine-check" in err and not out.exists()
    assert gmb_slurm(camp, out, "--config", fake_setup["config"], "--no-detect", "--no-engine-check") == 0
    assert "not looked for (--no-engine-check)" in out.read_text()
    bash_n(out)


def test_the_job_reads_the_campaign_and_config_wherever_it_is_submitted(camp, tmp_path, fake_setup, monkeypatch):
    """sbatch runs the script in the directory it is submitted from: the paths given relative to this one are
    written absolute."""
    monkeypatch.chdir(camp.parent)
    out = tmp_path / "job.sbatch"
    assert gmb_slurm(camp.name, out, "--config", fake_setup["config"].name, "--no-detect") == 0
    (cmd,) = [ln for ln in out.read_text().splitlines() if ln.startswith("cmd=(")]
    assert f"gmb run {camp} --launcher srun" in cmd and f"--config {fake_setup['config']} --no-detect" in cmd


def test_unknown_campaign_library_refused(tmp_path, fake_setup, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN.replace("fakempi-a", "fakempi-x"))
    rc = gmb_slurm(c, tmp_path / "job.sbatch", "--config", fake_setup["config"], "--no-detect")
    assert rc == 2 and "unknown library 'fakempi-x'" in capsys.readouterr().err


def test_script_runs_setup_then_records_and_runs_gmb(tmp_path):
    """bash runs it: the setup first (it puts the fake gmb on PATH), one gmb run over every node count (one results
    directory), its command line printed, its exit status the job's; a failing setup line stops the job before any
    run."""
    c = spec.load_campaign(Path(__file__).parents[2] / "campaigns" / "scaling.toml")
    bindir = tmp_path / "sw"
    bindir.mkdir()
    fake = bindir / "gmb"
    fake.write_text('#!/bin/bash\necho "$SETUP_DONE $*" >> "$GMB_FAKE_LOG"\nexit 1\n')
    fake.chmod(0o755)
    log = tmp_path / "calls"
    script = tmp_path / "job.sbatch"
    setup = [f"export PATH={bindir}:$PATH", "export SETUP_DONE=yes"]
    script.write_text(slurm.batch_script("my camp.toml", c, [2, 1], 2, 0, setup=setup, qos="q",
                                         run_args=["--library", "a b"], exports={"GMB_CACHE": str(tmp_path / "c")}))
    env = {k: v for k, v in os.environ.items() if k != "SLURM_JOB_ID"}
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True,
                       env={**env, "GMB_FAKE_LOG": str(log), "PATH": "/usr/bin:/bin"})
    (call,) = log.read_text().splitlines()
    assert call.startswith("yes run my camp.toml --launcher srun --nodes 1,2 --ranks-per-node 2")
    assert call.endswith("--no-build --library a b")
    (recorded,) = [ln for ln in p.stdout.splitlines() if ln.startswith("gmb: job ")]
    assert "node counts 1,2: gmb run my\\ camp.toml --launcher srun --nodes 1\\,2" in recorded
    assert p.returncode == 1
    # a failing setup line: the job stops, saying which
    script.unlink()
    script.write_text(slurm.batch_script("s.toml", c, [1], 1, 0, setup=["false"], gmb=str(fake)))
    log.unlink()
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env={**env, "GMB_FAKE_LOG": str(log)})
    assert p.returncode != 0 and "setup line failed" in p.stderr and "false" in p.stderr and not log.exists()
    # gmb not on PATH in the job: said, exit 2
    script.unlink()
    script.write_text(slurm.batch_script("s.toml", c, [1], 1, 0, gmb_hint="--setup 'source /v/bin/activate'"))
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 2 and "gmb not found in the job (--setup 'source /v/bin/activate')" in p.stderr


def test_campaign_name_and_path_cannot_break_out(tmp_path):
    c = spec.load_campaign(Path(__file__).parents[2] / "campaigns" / "scaling.toml")
    c = replace(c, name="x\nreboot")
    text = slurm.batch_script("a\nb.toml", c, [1], 1, 0)
    assert "#SBATCH --job-name=gmb-x_reboot" in text and "# campaign: a\\x0ab.toml;" in text
    # in the command only inside single quotes (a newline in a quoted word is the word's)
    assert text.count("\nreboot") == 1 and "--name 'x\nreboot' --no-build" in text
    assert text.count("\nb.toml") == 1 and " 'a\nb.toml' --launcher" in text
    path = tmp_path / "s.sbatch"
    path.write_text(text)
    bash_n(path)


def test_nic_reaches_the_jobs_gmb_run_and_a_bad_one_is_refused(camp, tmp_path, fake_setup, capsys):
    out = tmp_path / "job.sbatch"
    assert gmb_slurm(camp, out, "--config", fake_setup["config"], "--no-detect", "--no-build", "--nic", "nearest") == 0
    (run,) = [ln for ln in out.read_text().splitlines() if "cmd=(" in ln]
    assert "--nic nearest" in run
    bash_n(out)
    with pytest.raises(SystemExit) as exc:
        gmb_slurm(camp, tmp_path / "other.sbatch", "--no-detect", "--nic", "near,")
    assert exc.value.code == 2 and not (tmp_path / "other.sbatch").exists()


def test_the_job_runs_with_this_environment_where_it_is_submitted(camp, tmp_path, fake_setup, monkeypatch):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "activate").write_text("")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    out = tmp_path / "job.sbatch"
    assert gmb_slurm(camp, out, "--config", fake_setup["config"], "--no-detect", "--setup", "module load x") == 0
    lines = out.read_text().splitlines()
    assert not any(line.startswith("cd ") for line in lines)  # Slurm's working directory: where sbatch runs
    assert "# results: results/ and gmb-JOBID.out in the directory sbatch runs in (Slurm's working directory; " \
           "sbatch --chdir DIR for another)" in lines
    at = [lines.index(w) for w in ("module load x", f"source {venv}/bin/activate")]
    assert at == sorted(at)  # the site's lines, then this gmb's environment
    bash_n(out)
    again = tmp_path / "again.sbatch"  # a setup that activates an environment itself is left as it is
    assert gmb_slurm(camp, again, "--config", fake_setup["config"], "--no-detect",
                     "--setup", "source /sw/v/bin/activate") == 0
    assert f"source {venv}/bin/activate" not in again.read_text()


def test_device_blocks_the_engines_cannot_run_are_named_before_the_job(tmp_path, fake_setup, monkeypatch, capsys):
    """An engine without device memory (built without CUDA): the job's plan will skip the campaign's device blocks;
    `gmb slurm` says which, and how to say that the compute nodes have GPUs. An engine with CUDA: nothing to say."""
    scaling = Path(__file__).parents[2] / "campaigns" / "scaling.toml"
    assert gmb_slurm(scaling, tmp_path / "job.sbatch", "--config", fake_setup["config"], "--no-detect",
                     "--no-build", "--nodes", "1,2") == 0
    said = capsys.readouterr().err
    assert ("the job will skip fakempi-a: coll on device memory (block 1): memory kind device unavailable: this "
            "gmb-bench was built without CUDA") in said
    assert "bw device:device" in said and "(if the compute nodes have GPUs: --gpus-per-node G)" in said
    monkeypatch.setenv("FAKE_CUDA", "1")
    assert gmb_slurm(scaling, tmp_path / "gpu.sbatch", "--config", fake_setup["config"], "--no-detect",
                     "--no-build", "--nodes", "1,2") == 0
    assert "will skip" not in capsys.readouterr().err
