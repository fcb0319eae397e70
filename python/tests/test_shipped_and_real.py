# SPDX-License-Identifier: BSD-3-Clause
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from fake_engine import describe

from gmb.campaign.plan import plan
from gmb.campaign.spec import load_campaign
from gmb.cli import main
from gmb.machine.mpilibs import MpiLibrary
from gmb.results.records import read_records

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["gpu-paper", "scaling"])
def test_shipped_campaigns_parse_and_plan(name):
    c = load_campaign(REPO / "campaigns" / f"{name}.toml")
    lib = MpiLibrary("l", "openmpi", "5", "/x", "/x/bin/mpirun", "mpirun")
    launches, _ = plan(c, [lib], {"l": describe(cuda=True)})
    assert launches and all(x.library == "l" for x in launches)
    assert len({x.launch_id for x in launches}) == len(launches)


ENGINE = REPO / "build" / "ompi" / "gmb-bench"


@pytest.mark.skipif(not (ENGINE.exists() and shutil.which("mpirun.openmpi")),
                    reason="real engine build/ompi/gmb-bench with Open MPI not present")
def test_real_engine_quick_run(tmp_path, capsys):
    cfg = tmp_path / "libs.toml"
    cfg.write_text(f'[[library]]\nname = "openmpi"\nlauncher_path = "/usr/bin/mpirun.openmpi"\nengine = "{ENGINE}"\n')
    camp = tmp_path / "c.toml"
    camp.write_text('[campaign]\nname="real"\nrepetitions=1\ntimeout_s=120\n[[run]]\nbenchmarks=["latency"]\n'
                    'memory=["host:host"]\nsizes="1:1K"\npath="host"\noptions={iters=50, warmup=5, validate=true}\n')
    rc = main(["run", str(camp), "--config", str(cfg), "--no-detect", "--no-build", "--results", str(tmp_path / "r"),
               "--no-progress"])
    assert rc == 0, capsys.readouterr().err
    (d,) = list((tmp_path / "r").iterdir())
    (raw,) = list((d / "raw").glob("*.jsonl"))
    rf = read_records(raw, validate=True)  # the engine's output satisfies the shared schema
    assert rf.contexts and rf.results
    db = sqlite3.connect(d / "store.sqlite")
    assert db.execute("SELECT COUNT(*) FROM results WHERE status='ok' AND json_extract(json, '$.time_us.median') > 0").fetchone()[0] >= 10
    assert db.execute("SELECT DISTINCT path_class FROM results").fetchall() == [("host",)]


def test_every_source_file_names_its_license():
    """Sites package gmb under its LICENSE (BSD-3-Clause): every source file says so (SPDX)."""
    import subprocess

    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    sources = [f for f in files if not f.startswith("python/tests/data/") and
               (f.endswith((".cpp", ".hpp", ".cu", ".h", ".py", ".sh", ".cmake", ".cpp.in")) or
                Path(f).name == "CMakeLists.txt")]
    assert len(sources) > 100
    missing = [f for f in sources if "SPDX-License-Identifier: BSD-3-Clause" not in (REPO / f).read_text()[:400]]
    assert not missing, missing
    assert "BSD 3-Clause" in (REPO / "LICENSE").read_text() or "Redistribution and use" in (REPO / "LICENSE").read_text()
