# SPDX-License-Identifier: BSD-3-Clause
"""LAMMPS (Debian's `lammps` package) under Debian's Open MPI: profiled, its profile's counts checked against what
LAMMPS reports of the run, priced from a store measured for it, and run under three configurations (pml ob1 over
shared memory with and without its single-copy mechanism, and over TCP) by `gmb app`.

The counts: a Lennard-Jones melt on 2 ranks decomposes into a 2 x 1 x 1 processor grid with one swap each way along
x (the cutoff is far below half the box), so each rank sends, through LAMMPS' brick communication, 4 messages a step
(forward and reverse, each way), one more per neighbour-list build (the atoms that left, exchange) and 4 in the
set-up; and calls MPI_Sendrecv 3 times per build and in the set-up (exchange's count and the borders' two). The
steps and builds are LAMMPS' own figures ("for N steps", "Neighbor list builds = B")."""

import json
import re
import shutil
from pathlib import Path

import pytest
from realmpi import debian_library, skip_unless_debian

from gmb.cli import main

LMP = shutil.which("lmp")
MELT = """units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 8 0 8 0 8
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 3.0 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every ${every} delay 0 check no
fix 1 all nve
thermo 50
run ${steps}
"""


@skip_unless_debian("openmpi")
@pytest.mark.skipif(LMP is None, reason="needs LAMMPS (Debian: apt-get install lammps)")
def test_lammps_profiled_priced_and_run_under_three_configurations(real_env, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    lib = debian_library("openmpi")
    cfg = tmp_path / "libs.toml"
    cfg.write_text("".join(f'[[library]]\nname = "{name}"\nprefix = "/usr"\nlauncher_path = "{lib.launcher_path}"\n'
                           f'launcher_args = {json.dumps(args)}\n\n' for name, args in (
                               ("ompi-vader", ["--mca", "pml", "ob1", "--mca", "btl", "vader,self"]),
                               ("ompi-nocma", ["--mca", "pml", "ob1", "--mca", "btl", "vader,self", "--mca",
                                               "btl_vader_single_copy_mechanism", "none"]),
                               ("ompi-tcp", ["--mca", "pml", "ob1", "--mca", "btl", "tcp,self"]))))
    melt = tmp_path / "in.melt"
    melt.write_text(MELT)
    common = ["--config", str(cfg), "--no-detect", "--results", str(tmp_path / "results")]
    profiles = {}
    for steps, every in ((40, 20), (60, 7)):
        out = tmp_path / f"profile-{steps}"
        rc = main(["profile", *common, "--library", "ompi-vader", "--out", str(out), "--", lib.launcher_path,
                   "--mca", "pml", "ob1", "--mca", "btl", "vader,self", "-np", "2", LMP, "-in", str(melt), "-log",
                   "none", "-var", "steps", str(steps), "-var", "every", str(every)])
        said = capsys.readouterr()
        assert rc == 0, said.err
        output = (out / "output.log").read_text()
        m = re.search(r"Loop time of \S+ on (\d+) procs for (\d+) steps", output)
        builds = int(re.search(r"Neighbor list builds = (\d+)", output).group(1))
        assert m and (int(m.group(1)), int(m.group(2))) == (2, steps)
        profile = json.loads((out / "profile.json").read_text())
        assert profile["ranks"] == 2 and profile["missing_ranks"] == [] and "Open MPI" in profile["mpi_library"]
        for rank in (0, 1):
            calls = {}
            for row in profile["rows"]:
                if row["rank"] == rank:
                    calls[row["call"]] = calls.get(row["call"], 0) + row["count"]
                    assert row["memory"] == "host" and (row["comm_size"] or row["path"] == "host")
            assert calls["MPI_Send"] == 4 * steps + builds + 1 + 4, (rank, calls, builds)
            assert calls["MPI_Irecv"] == calls["MPI_Send"]
            assert calls["MPI_Sendrecv"] == 3 * (builds + 1), (rank, calls, builds)
        assert "gmb profile: MPI_Send " in said.err and "profiler's own bookkeeping" in said.err
        profiles[steps] = out
    # the figures it needs, measured on both configurations; the prediction names the calls that dominate
    assert main(["run", *common, "--for-profile", str(profiles[60]), "--repetitions", "2", "--no-progress",
                 "--no-report"]) == 0
    (store,) = (tmp_path / "results").glob("for-profile-*")
    capsys.readouterr()
    assert main(["predict", "--json", str(profiles[60]), str(store)]) == 0
    preds = {p["configuration"]: p for p in json.loads(capsys.readouterr().out)}
    assert set(preds) == {"ompi-vader", "ompi-nocma", "ompi-tcp"}
    for p in preds.values():
        calls = [d["calls"] for d in p["dominant"] if not d["calls"].startswith(("waiting", "receiving"))]
        assert p["complete"] and p["predicted_s"] > 0 and calls[0].startswith("MPI_Send host")
        # the profile's waits carried (its own configuration's figures told them from its transfers)
        assert p["waits_from"] == "ompi-vader" and p["predicted_s"] >= p["own_calls_s"] > 0
    # the application under all three, two runs each, interleaved: each run's figure and MPI time recorded
    assert main(["app", *common, "--np", "2", "--launches", "2", "--figure", r"Loop time of ([0-9.eE+-]+)",
                 "--predict", str(profiles[60]), str(store), "--", LMP, "-in", str(melt), "-log", "none", "-var",
                 "steps", "60", "-var", "every", "7"]) == 0
    (appdir,) = (tmp_path / "results").glob("app-lmp-*")
    runs = [json.loads(line) for line in (appdir / "launches.jsonl").read_text().splitlines()]
    assert sorted((r["configuration"], r["round"]) for r in runs) == [
        (name, k) for name in ("ompi-nocma", "ompi-tcp", "ompi-vader") for k in (1, 2)]
    assert all(r["figure"] > 0 and r["mpi_s"] > 0 and (Path(r["directory"]) / "profile.json").is_file() for r in runs)
    summary = json.loads((appdir / "app.json").read_text())
    assert {r["configuration"] for r in summary["configurations"] if r["predicted_s"]} == set(preds)
    assert len(summary["pairs"]) == 3
    assert all(sum(r["mpi_breakdown_s"].values()) > 0 for r in summary["configurations"])
    html = (appdir / "report.html").read_text()
    assert "<h2>Your application</h2>" in html and "fig-profile" in html and "The prediction" in html
