# SPDX-License-Identifier: BSD-3-Clause
"""reference/crosscheck.py's verdicts, with stand-ins for gmb-bench, the reference program and the launcher (the
real programs run under ctest, tests/mpi/crosscheck.cmake): without --bound a row is judged by both programs running,
validating and giving a time, whatever the ratio of their times; --bound judges the ratio."""

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "reference" / "crosscheck.py"

# argv: [-n, N, program, ...] -> program ...
LAUNCHER = "#!/bin/sh\nshift 2\nexec \"$@\"\n"
# gmb-bench BENCH ... --sizes S,S --out FILE ...: a context line and one validated result per size, each FAKE_GMB_US
# long; FAKE_GMB_WRONG: those sizes fail validation.
GMB = """
import json, os, sys
a = sys.argv[1:]
sizes = [int(s) for s in a[a.index("--sizes") + 1].split(",")]
wrong = {int(s) for s in os.environ.get("FAKE_GMB_WRONG", "").split(",") if s}
with open(a[a.index("--out") + 1], "x") as f:
    f.write(json.dumps({"type": "context"}) + "\\n")
    for s in sizes:
        r = {"type": "result", "bytes": s, "status": "ok", "time_us": {"median": float(os.environ["FAKE_GMB_US"])},
             "validation": "failed" if s in wrong else "passed"}
        f.write(json.dumps(r) + "\\n")
"""
# reference [--loop] BENCH A B ITERS WARMUP WINDOW SIZE...: "size us GB/s ok" per size, FAKE_REF_US long, without the
# sizes in FAKE_REF_SKIP.
REFERENCE = """
import os, sys
a = [x for x in sys.argv[1:] if x != "--loop"]
skip = {int(s) for s in os.environ.get("FAKE_REF_SKIP", "").split(",") if s}
for s in (int(x) for x in a[6:]):
    if s not in skip:
        print(f"{s} {float(os.environ['FAKE_REF_US']):.2f} 1.00 ok")
"""


@pytest.fixture
def programs(tmp_path):
    made = {}
    for name, text in (("mpirun", LAUNCHER), ("gmb-bench", f"#!{sys.executable}\n{GMB}"),
                       ("gmb-reference", f"#!{sys.executable}\n{REFERENCE}")):
        made[name] = tmp_path / name
        made[name].write_text(text)
        made[name].chmod(0o755)
    return made


def crosscheck(programs, *args, **env):
    argv = [sys.executable, str(SCRIPT), "--gmb", str(programs["gmb-bench"]), "--reference",
            str(programs["gmb-reference"]), "--launcher", str(programs["mpirun"]), "--benchmarks", "latency,bcast",
            "--sizes", "1K,64K,1M", "--launches", "2", *args]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                       env={"PATH": "/usr/bin:/bin", "FAKE_GMB_US": "100", "FAKE_REF_US": "100", **env})
    rows = [line.split("|") for line in p.stdout.splitlines() if line.startswith("| default |")]
    return p.returncode, {(r[2].strip(), r[4].strip()): r[11].split("(")[0].strip() for r in rows}, p.stdout + p.stderr


def test_without_a_bound_any_ratio_passes_when_both_ran_and_validated(programs):
    rc, verdicts, out = crosscheck(programs, FAKE_GMB_US="1060")  # gmb 10.6 times the reference
    assert rc == 0, out
    assert verdicts == {(b, s): "ok" for b in ("latency", "bcast") for s in ("1K", "64K", "1M")}, out
    assert "no bound: every row must run and validate" in out and "6 of 6 rows ok" in out


def test_a_bound_judges_the_ratio_from_its_smallest_size(programs):
    rc, verdicts, out = crosscheck(programs, "--bound", "0.95:1.05", FAKE_GMB_US="1060")
    assert rc == 1, out
    assert {v for (_, s), v in verdicts.items() if s != "1K"} == {"OUTSIDE"} and \
        {v for (_, s), v in verdicts.items() if s == "1K"} == {"-"}, out  # below --from 64K: shown, not judged
    rc, verdicts, out = crosscheck(programs, "--bound", "0.95:1.05", FAKE_GMB_US="101")
    assert rc == 0 and set(verdicts.values()) == {"ok", "-"}, out


@pytest.mark.parametrize("env, size", [({"FAKE_REF_SKIP": str(64 << 10)}, "64K"),
                                       ({"FAKE_GMB_WRONG": str(1 << 20)}, "1M")])
def test_a_missing_or_wrong_size_fails_without_a_bound(programs, env, size):
    rc, verdicts, out = crosscheck(programs, **env)
    assert rc == 1, out
    assert {row for row, v in verdicts.items() if v == "failed"} == {("latency", size), ("bcast", size)}, out
