# SPDX-License-Identifier: BSD-3-Clause
"""Setting sweeps in a campaign: `settings` in a [[run]] block, a list of setting sets, each over the block's env and
run as the whole block again; points measured under different sets stay apart, named by the settings that differ. An
OMPI_MCA_ setting the library's launcher arguments give otherwise would not apply: skipped with the reason."""

import json
import tomllib
from dataclasses import replace

import pytest
from fake_engine import describe, description
from test_cli import run_gmb
from test_nccl import nccl_setup  # noqa: F401 (a fixture)

from gmb.campaign.environments import outranked
from gmb.campaign.plan import plan
from gmb.campaign.spec import Block, Campaign, CampaignError, parse_campaign, setting_sets
from gmb.engine.description import DescriptionError, EngineDescription
from gmb.machine import families
from gmb.machine.launchers import mca_env
from gmb.machine.mpilibs import MpiLibrary
from gmb.results.model import Results
from gmb.results.points import combine
from gmb.results.store import open_results

DESC = describe()
SWEEP = """
[campaign]
name = "sweep"
repetitions = 2
[[run]]
benchmarks = ["latency", "bw"]
memory = ["host:host"]
env = { UCX_TLS = "sm,self" }
settings = [{}, { UCX_RNDV_SCHEME = "get_zcopy" }, { UCX_RNDV_SCHEME = "put_zcopy", UCX_RNDV_THRESH = 8192 }]
"""


def lib(name="a", launcher_args=()):
    return MpiLibrary(name=name, family="openmpi", version="5", prefix="/x", launcher_path="/x/bin/mpirun",
                      launcher="mpirun", launcher_args=list(launcher_args))


def block_settings(text: str):
    return parse_campaign(tomllib.loads(f'[[run]]\nbenchmarks = ["bw"]\n{text}\n')).blocks[0].settings


def test_settings_are_parsed_as_strings_and_absent_means_none():
    assert parse_campaign(tomllib.loads(SWEEP)).blocks[0].settings == [
        {}, {"UCX_RNDV_SCHEME": "get_zcopy"}, {"UCX_RNDV_SCHEME": "put_zcopy", "UCX_RNDV_THRESH": "8192"}]
    assert block_settings("settings = [{ X = 1.5 }]") == [{"X": "1.5"}]
    assert block_settings("") is None
    # what other code (gmb tune) hands to Block(..., settings=...)
    assert setting_sets([{"NCCL_ALGO": "Ring"}, {"NCCL_PROTO": 2}], "tune") == [{"NCCL_ALGO": "Ring"},
                                                                              {"NCCL_PROTO": "2"}]


@pytest.mark.parametrize("text, message", [
    ("settings = []", r"\[\[run\]\] #1: settings must be a non-empty list of tables of environment variables, e.g. "
                      r"settings = \[\{\}, \{ UCX_RNDV_SCHEME = \"get_zcopy\" \}\] \(got a list: \[\]\)"),
    ("settings = { X = \"1\" }", r"#1: settings must be a non-empty list of tables .* \(got a table"),
    ("settings = \"X=1\"", r"#1: settings must be a non-empty list .* \(got a string"),
    ("settings = [{}, \"X=1\"]", r"#1: settings #2 must be a table, e.g. .* \(got a string: \"X=1\"\)"),
    ("settings = [{ \"1X\" = \"1\" }]", r"#1: settings #1: \"1X\" is not an environment variable name"),
    ("settings = [{ \"UCX TLS\" = \"sm\" }]", r"settings #1: \"UCX TLS\" is not an environment variable name"),
    ("settings = [{ X = true }]", r"#1: settings #1: X must be a string or a number, as the library spells it "
                                  r"\(e.g. \"y\", \"1\", \"true\"\) \(got a boolean\)"),
    ("settings = [{ X = [1] }]", r"settings #1: X must be a string or a number.*\(got a list\)"),
    ("settings = [{ X = { Y = 1 } }]", r"settings #1: X must be a string or a number.*\(got a table\)"),
    ("settings = [{ X = \"1\" }, {}, { X = 1 }]", r"#1: settings #1 and #3 are the same set over the block's env "
                                                  r"\(\{\"X\": \"1\"\}\): list each set once"),
    ("env = { X = \"1\" }\nsettings = [{}, { X = \"1\" }]", r"settings #1 and #2 are the same set over the"),
])
def test_bad_settings_are_refused_naming_the_block_and_set(text, message):
    with pytest.raises(CampaignError, match=message):
        block_settings(text)


def test_settings_written_back_plan_the_same_campaign():
    c = parse_campaign(tomllib.loads(SWEEP))
    again = parse_campaign(tomllib.loads(c.to_toml()))
    assert again == c
    assert "settings = [{}, { UCX_RNDV_SCHEME = \"get_zcopy\" }, " in c.to_toml()


def test_each_set_is_the_whole_block_again_with_its_settings_over_env():
    c = parse_campaign(tomllib.loads(SWEEP))
    launches, skipped = plan(c, [lib()], {"a": DESC})
    assert not skipped
    assert len(launches) == 2 * 3 * 2  # benchmarks x sets x repetitions
    by_id = {x.launch_id: x for x in launches}
    assert len(by_id) == len(launches)
    assert by_id["b1.a.bw.host_host.na.n2.s1.r1"].env == {"UCX_TLS": "sm,self"}
    assert by_id["b1.a.bw.host_host.na.n2.s2.r2"].env == {"UCX_TLS": "sm,self", "UCX_RNDV_SCHEME": "get_zcopy"}
    assert by_id["b1.a.latency.host_host.na.n2.s3.r1"].env == {"UCX_TLS": "sm,self", "UCX_RNDV_SCHEME": "put_zcopy",
                                                              "UCX_RNDV_THRESH": "8192"}
    # a set wins over the block's env; gpus still give CUDA_VISIBLE_DEVICES
    c = Campaign("s", [Block(["bw"], env={"UCX_TLS": "sm"}, gpus=[0], settings=[{"UCX_TLS": "tcp"}])], repetitions=1)
    (x,), _ = plan(c, [lib()], {"a": describe(cuda=True)})
    assert x.env == {"UCX_TLS": "tcp", "CUDA_VISIBLE_DEVICES": "0"} and x.launch_id == "b1.a.bw.na.na.n2.s1.r1"
    # without settings the launch ids are as they were
    c = Campaign("s", [Block(["bw"], env={"UCX_TLS": "sm"})], repetitions=1)
    assert [x.launch_id for x in plan(c, [lib()], {"a": DESC})[0]] == ["b1.a.bw.na.na.n2.r1"]


def test_an_mca_setting_the_launcher_arguments_outrank_is_skipped_with_the_reason():
    c = Campaign("s", [Block(["bw"], settings=[{}, {"OMPI_MCA_pml": "ob1"}, {"OMPI_MCA_pml": "ucx"}])],
                 repetitions=1, order="sequential")
    ucx = lib("ucx", ["--mca", "pml", "ucx"])
    launches, skipped = plan(c, [ucx, lib("plain")], {"ucx": DESC, "plain": DESC})
    assert sorted(x.launch_id for x in launches) == ["b1.plain.bw.na.na.n2.s1.r1", "b1.plain.bw.na.na.n2.s2.r1",
                                                    "b1.plain.bw.na.na.n2.s3.r1", "b1.ucx.bw.na.na.n2.s1.r1",
                                                    "b1.ucx.bw.na.na.n2.s3.r1"]
    assert skipped == [("ucx", "block 1 settings #2", "OMPI_MCA_pml=ob1 is outranked by the library's launcher "
                                                      "arguments (--mca pml ucx): declare a library configuration "
                                                      "without it")]
    # the block's env too, every benchmark of the block at once
    c = Campaign("s", [Block(["bw", "latency"], env={"OMPI_MCA_pml": "ob1"})], repetitions=1)
    assert plan(c, [ucx], {"ucx": DESC}) == ([], [("ucx", "block 1", skipped[0][2])])


def test_a_set_whose_results_would_merge_with_another_sets_is_skipped_with_the_reason():
    nccl = replace(lib("nccl"), transport="nccl")
    c = Campaign("s", [Block(["bw"], memory=["device:device"], settings=[{}, {"NCCL_ALGO": "Ring"},
                                                                         {"MY_KNOB": "1"}])], repetitions=1)
    aware = replace(lib(), cuda_aware=True)
    launches, skipped = plan(c, [aware, nccl], {"a": describe(cuda=True), "nccl": describe(cuda=True, nccl="2.21")})
    assert sorted(x.launch_id for x in launches) == ["b1.a.bw.device_device.na.n2.s1.r1",
                                                    "b1.nccl.bw.device_device.na.n2.s1.r1",
                                                    "b1.nccl.bw.device_device.na.n2.s2.r1"]
    assert sorted(skipped) == [
        ("a", "block 1 settings #2", "its results would be taken for those of settings #1: NCCL_ALGO is not among "
                                     "the settings a's results keep"),
        ("a", "block 1 settings #3", "its results would be taken for those of settings #1: MY_KNOB is not among the "
                                     "settings a's results keep"),
        ("nccl", "block 1 settings #3", "its results would be taken for those of settings #1: MY_KNOB is not among "
                                        "the settings nccl's results keep")]

    # a set giving the library's own value measures what the library's defaults do
    c = Campaign("s", [Block(["bw"], settings=[{}, {"UCX_TLS": "sm"}])], repetitions=1)
    launches, skipped = plan(c, [replace(lib(), env={"UCX_TLS": "sm"})], {"a": DESC})
    assert skipped == [("a", "block 1 settings #2", "its results would be taken for those of settings #1: a's own "
                                                    "env sets UCX_TLS=sm")]


def test_outranked_reads_every_mca_flag_of_the_launcher_arguments():
    args = ["--bind-to", "none", "-mca", "pml", "ob1", "--gmca", "btl", "self,sm", "-gmca", "coll", "^hcoll"]
    assert mca_env(args) == {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,sm", "OMPI_MCA_coll": "^hcoll"}
    assert outranked({"OMPI_MCA_pml": "ob1", "UCX_TLS": "sm"}, args) is None  # the same value applies
    assert outranked({"OMPI_MCA_pml": "ucx", "OMPI_MCA_btl": "tcp"}, args).startswith(
        "OMPI_MCA_pml=ucx, OMPI_MCA_btl=tcp are outranked by the library's launcher arguments (--mca pml ob1 --mca "
        "btl self,sm)")


def test_run_stores_each_set_as_its_own_point_named_by_its_settings(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text('[campaign]\nname = "sweep"\nrepetitions = 2\nlibraries = ["fakempi-a"]\n'
                 '[[run]]\nbenchmarks = ["bw"]\nmemory = ["host:host"]\n'
                 'env = { UCX_TLS = "sm,self" }\n'
                 'settings = [{}, { UCX_RNDV_SCHEME = "get_zcopy" }, { UCX_RNDV_SCHEME = "put_zcopy" }]\n')
    common = ("--config", fake_setup["config"], "--no-detect", "--no-build", "--no-progress")
    assert run_gmb("plan", c, *common[:3]) == 0
    out = capsys.readouterr().out
    assert "b1.fakempi-a.bw.host_host.na.n2.s2.r1" in out and "'UCX_RNDV_SCHEME': 'get_zcopy'" in out
    assert run_gmb("run", c, *common, "--results", tmp_path / "res") == 0, capsys.readouterr().err
    (outdir,) = (tmp_path / "res").iterdir()
    plan_file = json.loads((outdir / "plan.json").read_text())
    assert len(plan_file["launches"]) == 3 * 2
    points = combine(Results.load(open_results(outdir)).ok("bw"))
    assert {p.library for p in points} == {"fakempi-a [UCX_RNDV_SCHEME unset]",
                                           "fakempi-a [UCX_RNDV_SCHEME=get_zcopy]",
                                           "fakempi-a [UCX_RNDV_SCHEME=put_zcopy]"}
    assert all(p.reps == 2 for p in points)  # each point of both repetitions of its set
    capsys.readouterr()
    assert run_gmb("tables", outdir) == 0
    tables = capsys.readouterr().out
    assert all(f"fakempi-a [UCX_RNDV_SCHEME{x}]" in tables for x in (" unset", "=get_zcopy", "=put_zcopy"))
    html = (outdir / "report.html").read_text()
    assert "UCX_RNDV_SCHEME=get_zcopy" in html and "UCX_RNDV_SCHEME=put_zcopy" in html


def test_the_engine_records_every_prefix_the_harness_treats_as_a_setting():
    # the fake's description is the real engine's (test_engine_description_real compares them)
    prefixes = DESC.environment_prefixes
    assert all(p.startswith(prefixes) for p in families.setting_prefixes()), prefixes
    assert {"PSM2_", "HCOLL_"} <= set(prefixes)
    DESC.check_records_settings()


def test_an_engine_whose_records_would_not_keep_a_setting_is_refused():
    short = description()
    short["environment_prefixes"] = [p for p in short["environment_prefixes"] if p not in ("PSM2_", "HCOLL_")]
    with pytest.raises(DescriptionError, match=r"says its records keep no PSM2_\*, HCOLL_\* variables, which this gmb "
                                               r"treats as settings .* rebuild it"):
        EngineDescription(short, source="engine x").check_records_settings()
    del short["environment_prefixes"]
    with pytest.raises(DescriptionError, match="does not say which environment variables its records keep"):
        EngineDescription(short, source="engine x").check_records_settings()
    # a description stored with older results is still read
    assert EngineDescription(short).environment_prefixes is None


def _probe(prefix: str) -> str:
    """A variable of ``prefix`` that no launcher or image sets."""
    return f"{prefix}GMB_SWEEP_PROBE"


def test_a_sweep_over_a_variable_of_every_setting_prefix_gives_a_point_per_value(nccl_setup, tmp_path, capsys):
    # The NCCL library's results keep every setting (NCCL_ ones only where NCCL moves the data), so a set per prefix
    # is a point of its own; an MPI library's keep all but NCCL_.
    prefixes = families.setting_prefixes()
    sets = [{}, *({_probe(p): "1"} for p in prefixes)]
    c = Campaign("s", [Block(["bw"], memory=["device:device"], settings=sets)], repetitions=1)
    aware = replace(lib(), cuda_aware=True)
    launches, skipped = plan(c, [aware], {"a": describe(cuda=True)})
    assert skipped == [("a", f"block 1 settings #{prefixes.index('NCCL_') + 2}",
                        f"its results would be taken for those of settings #1: {_probe('NCCL_')} is not among the "
                        f"settings a's results keep")]
    assert len(launches) == len(prefixes)

    text = "\n".join("{ " + ", ".join(f'{k} = "{v}"' for k, v in s.items()) + " }" for s in sets)
    campaign = tmp_path / "c.toml"
    campaign.write_text('[campaign]\nname = "every-prefix"\nrepetitions = 1\nlibraries = ["nccl"]\n'
                        '[[run]]\nbenchmarks = ["bw"]\nmemory = ["device:device"]\ngpus = [0, 1]\n'
                        f'settings = [{", ".join(text.splitlines())}]\n')
    assert run_gmb("run", campaign, "--config", nccl_setup["config"], "--no-detect", "--no-build", "--no-progress",
                   "--no-report", "--results", tmp_path / "res") == 0, capsys.readouterr().err
    (outdir,) = (tmp_path / "res").iterdir()
    points = combine(Results.load(open_results(outdir)).ok("bw"))
    by_size = {}
    for p in points:
        by_size.setdefault(p.bytes, set()).add(p.library)
    for names in by_size.values():
        assert len(names) == len(sets), names  # one point per set: none merged with another
        for prefix in prefixes:
            assert sum(f"{_probe(prefix)}=1" in n for n in names) == 1, (prefix, names)
    assert all(p.reps == 1 for p in points)
