# SPDX-License-Identifier: BSD-3-Clause
"""gmb compare says when the machine itself changed between two result sets (the engine's kernel-launch
calibration, which no library setting moves): on the recorded H100 A/A pair it did, by 0.85x; a set compared with
itself, a CPU run without the calibration and too few launches say nothing."""

import json

import pytest
from conftest import DATA

from gmb.report.machine_change import machine_change, machine_change_text, kernel_launch_us
from gmb.results.model import Results
from gmb.results.stored_rows import Context

RECORDED = json.loads((DATA / "h100-aa-2026-12-07" / "kernel-launch.json").read_text())


def results_of(launches, blocks_per_launch=1, status="measured"):
    """A result set whose contexts carry each engine launch's calibration, each launch's blocks a context apiece."""
    contexts = [Context(f"{run}-block{k}", None, "lib", None, None,
                        {"calibration": {"kernel_launch": {"status": status, "per_rank_us": per_rank}},
                         "plan": {"launch_run_id": run}})
                for run, per_rank in launches for k in range(blocks_per_launch)]
    return Results([], contexts, [], [])


def test_the_recorded_h100_runs_minutes_apart_differ_by_the_machine():
    a, b = results_of(RECORDED["runs"]["first"], blocks_per_launch=4), results_of(RECORDED["runs"]["second"])
    assert len(kernel_launch_us(a)) == 40  # once per engine launch, however many blocks it ran
    m = machine_change(a, b)
    assert m is not None and m.a_launches == m.b_launches == 40
    assert m.ratio.high < 0.9 and 10 < m.a_us < 11.5 and 8.5 < m.b_us < 9.5
    text = machine_change_text(m)
    assert "the machine itself changed between A and B" in text and "over 40 and 40 engine launches" in text


def test_nothing_is_said_where_the_probe_did_not_move_or_was_not_measured():
    first = results_of(RECORDED["runs"]["first"])
    assert machine_change(first, results_of(RECORDED["runs"]["first"])) is None
    assert machine_change(first, results_of([])) is None  # a CPU run: no calibration
    assert machine_change(first, results_of(RECORDED["runs"]["second"][:2])) is None  # too few launches
    assert machine_change(first, results_of(RECORDED["runs"]["second"], status="failed")) is None
    # a steady machine: a 2 % shift is within what the calibration itself moves
    steady = [[run, [v * 1.02 for v in per_rank]] for run, per_rank in RECORDED["runs"]["first"]]
    assert machine_change(first, results_of(steady)) is None


@pytest.mark.parametrize("bad", [[], [None], ["x"], [0.0, -1.0]])
def test_unusable_values_are_left_out(bad):
    assert kernel_launch_us(results_of([["run", bad]])) == []


def test_gmb_compare_says_it_beside_its_verdicts(tmp_path, capsys):
    """Two result sets of one library, the second on a machine whose kernel launch took 0.8x as long: the verdicts
    as ever, and the line that says the machine changed."""
    import synth
    from gmb.cli import main

    def run(name, launch_us):
        recs = []
        for k in range(4):
            ctx = synth.context(f"{name}{k}", "latency", cuda=True)
            ctx["calibration"] = {"kernel_launch": {"status": "measured", "method": "synthetic",
                                                    "per_rank_us": [launch_us * (1 + 0.01 * k)] * 2}}
            recs += [ctx, *synth.pt2pt_results(f"{name}{k}", "latency", [8, 64], seed=k)]
        synth.write_jsonl(tmp_path / f"{name}.jsonl", recs)
        return tmp_path / f"{name}.jsonl"

    a, b = run("a", 10.8), run("b", 8.8)
    assert main(["compare", str(a), str(b)]) == 0
    err = capsys.readouterr().err
    assert "the machine itself changed between A and B" in err and "over 4 and 4 engine launches" in err
    assert main(["compare", str(a), str(a)]) == 0
    assert "machine itself changed" not in capsys.readouterr().err
