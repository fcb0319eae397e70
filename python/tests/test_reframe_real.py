# SPDX-License-Identifier: BSD-3-Clause
"""contrib/reframe's check run by ReFrame: the example campaign in the example configuration's partitions, on the
login node (ReFrame's local scheduler) and through the local Slurm (scripts/start-local-slurm.sh), its answers read
back as performance variables from ReFrame's JSON report. Skipped, with the reason, without reframe-hpc (a test
extra), cmake and a Debian MPI, or (the Slurm partition) a running Slurm. Figures are not asserted: the performance
check may fail on a busy machine (the example references are another machine's), its variables must come out."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from realmpi import REPO, debian_library, have_debian
from test_slurm_real import slurm_up

from gmb.cli import main

CONTRIB = REPO / "contrib" / "reframe"
REFRAME = Path(sys.executable).parent / "reframe"


def reframe_missing() -> str | None:
    if not REFRAME.exists() and not shutil.which("reframe"):
        return "reframe-hpc not installed (pip install reframe-hpc; a test extra)"
    return None


def test_tables_json_holds_the_answers(capsys):
    """The document the check reads (gmb tables --json): answers with their figures, and the tables."""
    assert main(["tables", str(Path(__file__).parent / "data" / "h200-x2"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "gmb.answers/3"
    path = doc["answers"]["paths"][0]
    figure = path["figures"][0]
    assert {"library", "value", "unit", "pct_of_ceiling", "latency_us", "strategy"} <= set(figure)
    assert figure["unit"] in ("GB/s", "us") and "point" not in figure
    assert path["sentence"] and doc["answers"]["collectives"][0]["figures"][0]["unit"] == "GB/s"
    # the verdict as data beside its words
    assert set(path["ranking"]) == {"higher", "fastest", "slowest", "ratio", "leaders"} and path["verdict"]
    assert doc["tables"] and all(len(r) == len(t["columns"]) for t in doc["tables"] for r in t["rows"])


def test_every_example_reference_bounds_its_figure_and_a_4_ms_latency_fails(monkeypatch):
    """Each reference of the example check bounds its figure on the side where it goes wrong (bandwidths below,
    times above): a 4 ms latency, which passed unbounded references, fails the check."""
    sanity = pytest.importorskip("reframe.utility.sanity", reason="reframe-hpc not installed (a test extra)")
    monkeypatch.syspath_prepend(str(CONTRIB))
    import gmb_checks

    references = dict(gmb_checks.gmb_nightly.reference.items())  # "system:partition:variable" -> reference
    assert any(name.endswith("/latency") for name in references)
    for name, (value, lower, upper, unit) in references.items():
        assert (upper if unit == "us" else lower) is not None, f"{name}: no bound"
        if name.endswith("/latency"):
            with pytest.raises(sanity.SanityError):
                sanity.evaluate(sanity.assert_reference(3995.7, value, lower, upper))
            assert sanity.evaluate(sanity.assert_reference(value, value, lower, upper))


@pytest.mark.parametrize("partition", ["login", "cpu"])
def test_reframe_runs_the_campaign(partition, real_env, tmp_path, monkeypatch):
    why = reframe_missing() or (slurm_up() if partition == "cpu" else None)
    if why:
        pytest.skip(why)
    family = next((f for f in ("openmpi", "mpich") if have_debian(f)), None)
    if family is None:
        pytest.skip("needs cmake, g++ and Debian's Open MPI or MPICH")
    lib = debian_library(family)
    assert main(["build", "--library", lib.name]) == 0  # here, not in the job: a build error shows in this test
    # the job runs the harness under test (its PYTHONPATH passed on by sbatch's default --export=ALL)
    monkeypatch.setenv("PYTHONPATH", str(REPO / "python" / "src"))
    report = tmp_path / "report.json"
    cmd = [str(REFRAME) if REFRAME.exists() else "reframe", "-C", str(CONTRIB / "settings.py"),
           "-c", str(CONTRIB / "gmb_checks.py"), "--system", f"example:{partition}", "--prefix", str(tmp_path / "rfm"),
           "--report-file", str(report), "-S", f"gmb={sys.executable} -m gmb", "-S", f"libraries={lib.name}", "-r"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=1800)
    (case,) = json.loads(report.read_text())["runs"][0]["testcases"]
    assert case["result"] == "pass" or case["fail_phase"] == "performance", (p.stdout[-3000:], case["fail_reason"])
    values = {name.split(":", 2)[2]: v for name, v in case["perfvalues"].items()}
    for variable, unit in [("host/{}/bw", "GB/s"), ("host/{}/pct_of_ceiling", "%"), ("host/{}/latency", "us"),
                           ("allreduce-2-host/{}/busbw", "GB/s")]:
        value = values[variable.format(lib.name)]
        assert value[0] > 0 and value[4] == unit, (variable, value)
    assert f"P: host/{lib.name}/bw: " in p.stdout
