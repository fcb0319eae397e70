# SPDX-License-Identifier: BSD-3-Clause
"""NIC pinning in a campaign: `nic` in [campaign] (every block's default) or in a [[run]] block, and `gmb run --nic`,
checked before anything runs and given to the engine as --nic; a point measured with pinning is another point than
one without. (The engine's choice itself: tests/unit/test_nic_pinning.cpp and the ctest mpi.nic_* runs.)"""

import json
import tomllib

import pytest
from fake_engine import describe, description
from test_cli import run_gmb

from gmb.campaign import checks
from gmb.campaign.plan import engine_args
from gmb.campaign.spec import CampaignError, parse_campaign
from gmb.engine.description import EngineDescription
from gmb.results import run_conditions
from gmb.results.model import Results
from gmb.results.points import combine
from gmb.results.store import open_results

CAMPAIGN = """
[campaign]
name = "nic"
nic = "nearest"
[[run]]
benchmarks = ["latency"]
[[run]]
benchmarks = ["bw"]
nic = ["mlx5_0", "mlx5_1"]
[[run]]
benchmarks = ["bibw"]
nic = "none"
"""


def test_campaign_nic_is_every_blocks_default_and_a_block_may_say_otherwise():
    c = parse_campaign(tomllib.loads(CAMPAIGN))
    assert [b.nic for b in c.blocks] == ["nearest", "mlx5_0,mlx5_1", None]
    args = [engine_args(b.benchmarks[0], b, "", "") for b in c.blocks]
    assert args[0][-2:] == ["--nic", "nearest"] and args[1][-2:] == ["--nic", "mlx5_0,mlx5_1"]
    assert "--nic" not in args[2]
    # the campaign written back (results/campaign.toml) plans the same launches
    again = parse_campaign(tomllib.loads(c.to_toml()))
    assert [b.nic for b in again.blocks] == [b.nic for b in c.blocks]


@pytest.mark.parametrize("value", ["3", "[]", '""', '["eth0,eth1"]', '["eth0", "nearest"]', '"eth 0"', "true"])
def test_bad_nic_values_are_refused_with_what_is_accepted(value):
    with pytest.raises(CampaignError, match=r"\[\[run\]\] #1: nic must be \"nearest\", \"none\", a network interface"):
        parse_campaign(tomllib.loads(f'[[run]]\nbenchmarks = ["bw"]\nnic = {value}\n'))
    with pytest.raises(CampaignError, match=r"\[campaign\]: nic must be"):
        parse_campaign(tomllib.loads(f'[campaign]\nnic = {value}\n[[run]]\nbenchmarks = ["bw"]\n'))


def test_nic_is_a_block_key_not_an_option():
    with pytest.raises(CampaignError, match="options.nic: write nic = ... in the block"):
        parse_campaign(tomllib.loads('[[run]]\nbenchmarks = ["bw"]\noptions = { nic = "nearest" }\n'))


def test_an_engine_without_nic_is_refused_before_anything_runs():
    c = parse_campaign(tomllib.loads(CAMPAIGN))
    checks.check_against_engines(c, {"a": describe()})  # the engine of this tree takes --nic
    old = description()
    old["options"] = [o for o in old["options"] if o["names"] != ["--nic"]]
    with pytest.raises(CampaignError, match=r"\[\[run\]\] #1: nic = \"nearest\": the engine has no --nic"):
        checks.check_against_engines(c, {"a": EngineDescription(old, source="an old engine")})


def test_pinning_is_part_of_a_points_configuration():
    def configuration(nic):
        ctx = {"options": {"common": {"batch": 0, **({"nic": nic} if nic else {})}, "benchmark": {"window": 64}}}
        return run_conditions.configuration(ctx, {"transport": "mpi"})
    assert configuration("nearest")["options"] == {"nic": "nearest", "window": 64}
    assert configuration("none") == configuration(None)  # none, or an engine before --nic: the library's choice
    assert configuration("eth0,eth1") != configuration("nearest")


def test_run_nic_reaches_the_engine_and_keeps_pinned_points_apart(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text('[campaign]\nname = "nic"\nrepetitions = 1\nlibraries = ["fakempi-a"]\n'
                 '[[run]]\nbenchmarks = ["bw"]\nmemory = ["host:host"]\nsizes = "1K"\n'
                 '[[run]]\nbenchmarks = ["bw"]\nmemory = ["host:host"]\nsizes = "1K"\nnic = "nearest"\n')
    common = ("--config", fake_setup["config"], "--no-detect", "--no-build", "--no-progress", "--no-report")
    assert run_gmb("run", c, *common, "--results", tmp_path / "res") == 0, capsys.readouterr().err
    (outdir,) = (tmp_path / "res").iterdir()
    plan = json.loads((outdir / "plan.json").read_text())
    assert sorted(x["engine_args"][-2:] == ["--nic", "nearest"] for x in plan["launches"]) == [False, True]
    names = sorted({p.library for p in combine(Results.load(open_results(outdir)).ok("bw"))})
    assert names == ["fakempi-a (nic not given)", "fakempi-a (nic=nearest)"]
    # --nic on the command line is every block's, "none" included
    assert run_gmb("run", c, *common, "--results", tmp_path / "res2", "--nic", "eth0,eth1") == 0
    (outdir,) = (tmp_path / "res2").iterdir()
    plan = json.loads((outdir / "plan.json").read_text())
    assert all(x["engine_args"][-2:] == ["--nic", "eth0,eth1"] for x in plan["launches"])
    assert run_gmb("plan", c, *common[:3], "--nic", "none") == 0
    out = capsys.readouterr().out
    assert "bw --sizes 1K" in out and "--nic" not in out


def test_run_refuses_a_bad_nic(fake_setup, capsys):
    with pytest.raises(SystemExit) as exit_:
        run_gmb("plan", "--config", fake_setup["config"], "--nic", "eth0,,eth1")
    assert exit_.value.code == 2
    assert "--nic: nic must be \"nearest\", \"none\"" in capsys.readouterr().err
