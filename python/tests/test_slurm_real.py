# SPDX-License-Identifier: BSD-3-Clause
"""The srun launcher against a real Slurm (scripts/start-local-slurm.sh: slurmctld + slurmd on localhost).
Skipped, with the reason, when Slurm is not up or the Debian MPIs / cmake are missing."""

import json
import shutil
import sqlite3
import subprocess
from dataclasses import replace

import pytest
from realmpi import debian_library, have_debian

from gmb.machine import families, launchers
from gmb.cli import main
from gmb.machine.mpilibs import MpiLibrary


def slurm_up() -> str | None:
    """None when an idle/mixed node accepts jobs, else why not."""
    if not shutil.which("srun") or not shutil.which("sinfo"):
        return "slurm not installed (apt-get install slurm-wlm munge; scripts/start-local-slurm.sh)"
    try:
        p = subprocess.run(["sinfo", "-h", "-o", "%T %c"], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "sinfo timed out"
    states = p.stdout.split()
    if p.returncode != 0 or not any(s.startswith(("idle", "mixed")) for s in states[::2]):
        return f"slurm is not up (sinfo: {(p.stdout + p.stderr).strip()[:200]!r}); run scripts/start-local-slurm.sh"
    if not any(c.isdigit() and int(c) >= 2 for c in states[1::2]):
        return "no Slurm node with 2 CPUs"
    return None


WHY = slurm_up()
NEED_SLURM = pytest.mark.skipif(WHY is not None, reason=WHY or "")


def test_srun_argv_pmi_plugin_per_family():
    s = launchers.get("srun")
    spec = launchers.LaunchSpec(ranks=2, program=["./e"])
    lib = MpiLibrary("m", "mpich", "4.0.2", "/usr", "/usr/bin/mpiexec.mpich", "srun")
    assert s.argv(lib, spec) == ["srun", "-n", "2", "--mpi=pmi2", "./e"]
    lib = replace(lib, family="openmpi")
    assert "--mpi=pmix" in s.argv(lib, spec)
    lib = replace(lib, launcher_args=["--mpi=pmix_v4"])  # declared: taken as given
    assert s.argv(lib, spec).count("--mpi=pmix_v4") == 1 and "--mpi=pmix" not in s.argv(lib, spec)
    lib = replace(lib, family="cray-mpich", launcher_args=[])
    assert not any(a.startswith("--mpi") for a in s.argv(lib, spec))


CAMPAIGN = """
[campaign]
name = "srun"
repetitions = 1
timeout_s = 180
[[run]]
benchmarks = ["latency", "bw"]
memory = ["host:host"]
sizes = "1:64K"
path = "host"
options = { iters = 50, warmup = 5, validate = true }
"""


@NEED_SLURM
@pytest.mark.parametrize("family", ["mpich", "openmpi"])
def test_gmb_run_with_srun(family, real_env, tmp_path, capsys):
    if not have_debian(family):
        pytest.skip(f"needs cmake and Debian's {family}")
    lib = debian_library(family)
    camp = tmp_path / "srun.toml"
    camp.write_text(CAMPAIGN)
    rc = main(["run", str(camp), "--library", lib.name, "--launcher", "srun", "--results", str(tmp_path / "r"),
               "--no-progress"])
    err = capsys.readouterr().err
    (d,) = list((tmp_path / "r").iterdir())
    db = sqlite3.connect(d / "store.sqlite")
    launches = db.execute("SELECT status, argv, log_file FROM launches").fetchall()
    assert rc == 0, (err[-2000:], launches, [(d / row[2]).read_text()[-1500:] for row in launches if row[2]])
    assert len(launches) == 2 and {r[0] for r in launches} == {"ok"}
    for _, argv, _ in launches:
        argv = json.loads(argv)
        assert argv[:3] == ["srun", "-n", "2"]
        assert f"--mpi={families.srun_mpi(family)}" in argv
    n, _ = db.execute("SELECT COUNT(*), MAX(json_extract(json, '$.time_us.median')) FROM results WHERE status='ok' AND json_extract(json, '$.time_us.median') > 0").fetchone()
    assert n >= 10
    log = (d / launches[0][2]).read_text()
    assert "srun" in log
