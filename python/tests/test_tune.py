# SPDX-License-Identifier: BSD-3-Clause
"""`gmb tune`: the search's decisions on given figures, the knob catalogue checked against a library's own listing,
and whole searches on the fake engine (knobs that help, hurt, break the data or crash the doctor; the budget; the
configurations of one installation compared; the answer reproduced by a campaign and by `gmb run --tuned`)."""

import json
import math
import re
import sqlite3
import tomllib
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import write_fake_engine, write_fake_launcher
from fake_engine import describe

from gmb.campaign.spec import Block, load_campaign
from gmb.cli import main
from gmb.errors import UsageError
from gmb.engine.configurations import Configuration
from gmb.machine import knobs, topology
from gmb.machine.mpilibs import MpiLibrary
from gmb.machine.topology import Gpu, Topology
from gmb.options import BuildOptions, LibraryOptions, TuneOptions
from gmb.tune import confirmation, selection
from gmb.tune.catalogue import offers
from gmb.tune.races import COMBINED, DEFAULTS, Arm, ArmFigure, Race, gain, judge_failures, unmeasured
from gmb.tune import search as search_mod
from gmb.tune import tuner as tuner_mod
from gmb.tune.session import tune


# ------------------------------------------------------------------------------------------------ the search alone
def _race(arms: dict[str, dict[int, tuple]], higher=True) -> Race:
    """A race whose arms have these figures: key -> size -> (median, low, high, launches)."""
    race = Race("lib", "host", "host", Block(["bw"]), higher, "bw" if higher else "t")
    for key, figures in arms.items():
        knob = None if key in (DEFAULTS, COMBINED) else key.partition("=")[0]
        race.arms.append(Arm(key, {} if knob is None else {knob: key.partition("=")[2]}, knob,
                             figures={s: ArmFigure(*f) for s, f in figures.items()}))
    return race


def test_a_value_better_nowhere_is_cut_and_the_better_half_goes_on_as_time_allows():
    race = _race({"defaults": {8: (10, 9.8, 10.2, 1), 4096: (100, 98, 102, 1)},
                  "A=1": {8: (10.1, 9.9, 10.3, 1), 4096: (99, 97, 101, 1)},  # within the defaults' interval
                  "B=1": {8: (9, 8.8, 9.2, 1), 4096: (150, 148, 152, 1)},
                  "C=1": {8: (12, 11.8, 12.2, 1), 4096: (101, 99, 103, 1)},
                  "D=1": {8: (10.5, 10.3, 10.7, 1), 4096: (103, 101, 105, 1)},
                  "E=1": {8: (10.4, 10.2, 10.6, 1), 4096: (100, 98, 102, 1)}})
    cut = selection.cut_losers(race)
    assert [a.key for a in cut] == ["A=1"] and "no better than the defaults" in race.arm("A=1").why
    other = _race({"defaults": {8: (10, 9.8, 10.2, 1)}, "F=1": {8: (11, 10.8, 11.2, 1)},
                   "G=1": {8: (10.5, 10.3, 10.7, 1)}})
    other.path = "other"
    work = selection.plan_round([race, other], 1, 100, set())  # room for all: the better half of each
    assert {a.key for _, a in work} == {"defaults", "B=1", "C=1", "F=1"}
    assert race.arm("E=1").state == "cut" and "better half" in race.arm("E=1").why
    for r in (race, other):
        for a in r.arms:
            if a.key != "defaults" and a.state == "cut" and a.key != "A=1":
                a.state = "racing"
    work = selection.plan_round([race, other], 1, 3, set())  # room for 3 launches: the most promising race first
    assert [(r.path, a.key) for r, a in work] == [("host", "defaults"), ("host", "B=1"), ("host", "C=1")]
    assert "no time left" in other.arm("F=1").why
    assert race.defaults.state == "racing"
    # a race compared with another configuration gets its defaults launched while there is room, knobs or not
    alone = _race({"defaults": {8: (10, 9.8, 10.2, 1)}})
    assert selection.plan_round([alone], 1, 1, {id(alone)}) == [(alone, alone.defaults)]
    assert selection.plan_round([alone], 1, 1, set()) == []


def _fresh(race: Race, key: str, values: dict[int, float], spread=(0.99, 1.01, 1.0, 1.02, 0.98, 1.0)) -> None:
    """Confirmation launches of an arm: per size its value times each launch's factor (one factor per launch, for
    every size of it, and a little of its own)."""
    arm = race.arm(key)
    for size, value in values.items():
        arm.fresh[size] = {f"c{i}": value * f * (1 + 0.003 * ((i + size) % 3 - 1)) for i, f in enumerate(spread)}
        arm.fresh_figures[size] = ArmFigure(value, value * 0.98, value * 1.02, len(spread))
    if key != DEFAULTS:
        confirmation.confirm_arm(race, arm)


def test_values_ahead_after_enough_launches_are_selected_and_recommended_only_where_confirmed():
    n = selection.MIN_LAUNCHES
    race = _race({"defaults": {8: (10, 9.5, 10.5, n), 1 << 20: (100, 95, 105, n), 4 << 20: (100, 95, 105, n)},
                  "SMALL=1": {8: (20, 19, 21, n), 1 << 20: (100, 95, 105, n), 4 << 20: (99, 94, 104, n)},
                  "LARGE=1": {8: (10, 9.5, 10.5, n), 1 << 20: (150, 145, 155, n), 4 << 20: (160, 155, 165, n)},
                  "LUCKY=1": {8: (10, 9.5, 10.5, n), 1 << 20: (130, 125, 135, n), 4 << 20: (100, 95, 105, n)},
                  "EARLY=1": {8: (30, 29, 31, 1)}})  # better, but in one launch: not selected, no claim
    race.arm("EARLY=1").state = "cut"
    selected = selection.select(race)
    assert [a.key for a in selected] == ["SMALL=1", "LARGE=1", "LUCKY=1", "combined"]  # the most promising first
    assert race.arm("combined").settings == {"LARGE": "1", "LUCKY": "1", "SMALL": "1"}
    # the fresh launches: SMALL and LARGE confirmed where they help, LUCKY equal to the defaults, the combination not
    # launched (the budget ran out before it)
    _fresh(race, "defaults", {8: 10, 1 << 20: 100, 4 << 20: 100})
    _fresh(race, "SMALL=1", {8: 20, 1 << 20: 100, 4 << 20: 100})
    _fresh(race, "LARGE=1", {8: 10, 1 << 20: 150, 4 << 20: 160})
    _fresh(race, "LUCKY=1", {8: 10, 1 << 20: 100, 4 << 20: 100})
    assert confirmation.tried(race) == 5 * 3  # every value tried (the combination too) at every size
    ranges = confirmation.recommendation(race)
    assert [(r.low, r.high, r.arm) for r in ranges] == [(8, 8, "SMALL=1"), (1 << 20, 4 << 20, "LARGE=1")]
    large = ranges[1]
    assert large.gain == pytest.approx(math.sqrt(1.5 * 1.6), rel=1e-3) and large.gain_low < large.gain < large.gain_high
    assert large.span == (1 << 20, 4 << 20) and large.sizes[1][1] == pytest.approx(1.6, rel=1e-3)
    assert large.sizes[0][2].launches == 6  # the figures of the confirmation launches
    verdicts = {a.key: confirmation.verdict(race, a) for a in race.arms[1:]}
    assert verdicts == {"SMALL=1": "better", "LARGE=1": "better", "LUCKY=1": "selected, not confirmed",
                        "EARLY=1": "cut early: no claim", "combined": "selected, not confirmed"}
    assert selection.cut_saw(race, race.arm("EARLY=1")) == "looked better in 1 launch"


def test_for_a_time_lower_is_better():
    n = selection.MIN_LAUNCHES
    race = _race({"defaults": {8: (10, 9.5, 10.5, n)}, "FAST=1": {8: (5, 4.8, 5.2, n)},
                  "SLOW=1": {8: (20, 19, 21, n)}}, higher=False)
    assert gain(race, race.arm("FAST=1"), 8) == pytest.approx(2.0)
    assert [a.key for a in selection.select(race)] == ["FAST=1"]
    for key, value in (("defaults", 10), ("FAST=1", 5), ("SLOW=1", 20)):
        _fresh(race, key, {8: value})
    assert confirmation.verdict(race, race.arm("SLOW=1")) == "worse"
    (rec,) = confirmation.recommendation(race)
    assert rec.arm == "FAST=1" and rec.gain == pytest.approx(2.0, rel=1e-3) and rec.gain_low > 1


def test_no_confirmed_value_recommends_the_defaults():
    n = selection.MIN_LAUNCHES
    race = _race({"defaults": {8: (10, 9, 11, n)}, "A=1": {8: (10.5, 9.5, 11.5, n)}})
    assert [r.arm for r in confirmation.recommendation(race)] == ["defaults"]
    assert confirmation.verdict(race, race.arm("A=1")) == "cut early: no claim"
    assert selection.cut_saw(race, race.arm("A=1")) == "no difference seen in 3 launches"


def test_a_value_better_at_some_sizes_and_worse_at_others_says_both():
    n = selection.MIN_LAUNCHES
    race = _race({"defaults": {s: (10, 9.5, 10.5, n) for s in (8, 64, 1 << 20, 4 << 20)},
                  "MIX=1": {8: (7, 6.5, 7.5, n), 64: (7, 6.5, 7.5, n), 1 << 20: (14, 13, 15, n),
                            4 << 20: (14, 13, 15, n)}})
    selection.select(race)
    _fresh(race, "defaults", {8: 10, 64: 10, 1 << 20: 10, 4 << 20: 10})
    _fresh(race, "MIX=1", {8: 7, 64: 7, 1 << 20: 14, 4 << 20: 14})
    mix = race.arm("MIX=1")
    assert confirmation.verdict(race, mix) == "mixed"
    assert confirmation.proven_sizes(mix) == ([1 << 20, 4 << 20], [8, 64])
    (_, rec) = confirmation.recommendation(race)
    assert (rec.low, rec.high, rec.arm, rec.worse) == (1 << 20, 4 << 20, "MIX=1", (8, 64))
    from gmb.tune.answer import sizes_text
    assert sizes_text([8, 64], race.sizes) == "8 - 64" and sizes_text([8, 4 << 20], race.sizes) == "8, 4M"
    # in words: recommended over its span only, proven worse elsewhere, both ranges said
    from types import SimpleNamespace

    from gmb.tune import answer
    conf = SimpleNamespace(name="lib", library=SimpleNamespace(env={}, launcher_path="/x/mpirun", launcher_args=[]),
                           launcher=SimpleNamespace(setting_arguments=lambda every: []))
    entry = answer._race(race, conf, "the search ended")
    text = "\n".join(answer.answer_text({"launches": 9, "rounds": 9, "used_s": 1, "budget_s": 9, "cut_short": False,
                                         "races": [entry], "confirm_launches": 6, "comparisons": [], "tuned": []}))
    assert "8 - 64: the defaults (no value tried was confirmed better)" in text
    assert "1M - 4M: MIX=1  +40.0 % [" in text and "over 1M - 4M (confirmation launches;" in text
    assert "proven WORSE at 8 - 64" in text and "mixed: MIX=1 (better at 1M - 4M, worse at 8 - 64)" in text


# ----------------------------------------------------------------------------------------- the catalogue, filtered
OMPI_INFO = """mca:btl:vader:param:btl_vader_single_copy_mechanism:value:cma
mca:btl:vader:param:btl_vader_single_copy_mechanism:enumerator:value:1:cma
mca:btl:vader:param:btl_vader_single_copy_mechanism:enumerator:value:3:none
mca:btl:vader:param:btl_vader_eager_limit:value:4096
mca:coll:tuned:param:coll_tuned_allreduce_algorithm:value:ignore
mca:coll:tuned:param:coll_tuned_allreduce_algorithm:enumerator:value:4:ring
"""


def _tool(path: Path, text: str) -> None:
    path.write_text("#!/bin/sh\ncat <<'EOF'\n" + text + "EOF\n")
    path.chmod(0o755)


def _listed_openmpi(tmp_path, launcher_args, env=None) -> Configuration:
    """An Open MPI configuration whose ompi_info and ucx_info (beside its launcher) list a few parameters."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    _tool(bindir / "ompi_info", OMPI_INFO)
    _tool(bindir / "ucx_info", "UCX_RNDV_SCHEME=auto\nUCX_RNDV_THRESH=auto\nUCX_PROTO_ENABLE=n\n")
    lib = MpiLibrary("ompi", "openmpi", "5.0.7", str(tmp_path), str(bindir / "mpirun"), "mpirun",
                     launcher_args=launcher_args, env=env or {}, knobs={"UCX_MY_KNOB": ["1", "2"]})
    return Configuration(lib, "/bin/true", describe())


def test_the_catalogue_keeps_what_the_library_lists_with_its_defaults(tmp_path):
    got = {o.knob.name: o for o in offers(_listed_openmpi(tmp_path, ["--mca", "pml", "ob1"]))}
    single = got["OMPI_MCA_btl_vader_single_copy_mechanism"]
    assert single.offered and single.default == "cma" and single.values == ("none",)  # xpmem: not in this build
    assert got["OMPI_MCA_btl_vader_eager_limit"].values == ("16384", "65536")
    assert "does not list it" in got["OMPI_MCA_btl_sm_eager_limit"].refused
    algorithm = got["OMPI_MCA_coll_tuned_allreduce_algorithm"]
    assert algorithm.values == ("ring",)
    assert algorithm.knob.setting("ring") == {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                                              "OMPI_MCA_coll_tuned_allreduce_algorithm": "ring"}
    assert "does not run on" in got["UCX_RNDV_SCHEME"].refused  # pml ob1: UCX's knobs do nothing
    # the libraries file's own knob of UCX's: not for a configuration that does not run on UCX
    assert "belongs to ucx, which this configuration does not run on (ob1, openmpi)" in got["UCX_MY_KNOB"].refused


def test_under_pml_ucx_the_ucx_knobs_are_offered_and_a_configured_setting_is_not(tmp_path):
    conf = _listed_openmpi(tmp_path, ["--mca", "pml", "ucx"], env={"UCX_PROTO_ENABLE": "y"})
    got = {o.knob.name: o for o in offers(conf)}
    assert got["UCX_RNDV_SCHEME"].offered and got["UCX_RNDV_SCHEME"].default == "auto"
    assert "does not run on" in got["OMPI_MCA_btl_vader_eager_limit"].refused
    assert "the configuration sets it" in got["UCX_PROTO_ENABLE"].refused
    assert got["UCX_MAX_RNDV_RAILS"].refused  # not listed by this ucx_info
    assert got["UCX_MY_KNOB"].offered and "not listed" in got["UCX_MY_KNOB"].note  # the libraries file's own


def test_a_configuration_is_offered_only_the_knobs_of_the_layers_it_runs_on(tmp_path):
    """Under pml ob1 no UCX knob, whether the catalogue's, the libraries file's or the command line's; NCCL gets NCCL's
    and none of UCX's; a family whose layers are not known keeps the knobs a user adds."""
    extra = knobs.user_knobs({"UCX_TLS": ["tcp,self"], "NCCL_ALGO": ["Ring"], "OMPI_MCA_btl": ["self,tcp"]}, "--knob")
    ob1 = {o.knob.name: o for o in offers(_listed_openmpi(tmp_path, ["--mca", "pml", "ob1"]), extra)}
    assert {o.knob.layer for o in ob1.values() if o.offered and o.knob.source == "catalogue"} <= {"ob1", "openmpi"}
    assert not any(o.offered for name, o in ob1.items() if name.startswith(("UCX_", "NCCL_")))
    assert ob1["OMPI_MCA_btl"].offered
    ucx = {o.knob.name: o for o in offers(_listed_openmpi(tmp_path, ["--mca", "pml", "ucx"]), extra)}
    assert ucx["UCX_TLS"].offered and not ucx["NCCL_ALGO"].offered
    assert not any(o.offered for o in ucx.values() if o.knob.layer == "ob1")
    conf = _listed_openmpi(tmp_path, [])
    nccl = Configuration(MpiLibrary("nccl", "openmpi", "5", str(tmp_path), conf.library.launcher_path, "mpirun",
                                    transport="nccl", knobs={"UCX_MY_KNOB": ["1"]}), "/bin/true", describe())
    got = {o.knob.name: o for o in offers(nccl, extra)}
    assert got["NCCL_ALGO"].offered and not got["UCX_TLS"].offered and not got["UCX_MY_KNOB"].offered
    plain = Configuration(MpiLibrary("x", "intelmpi", "1", str(tmp_path), conf.library.launcher_path, "mpirun"),
                          "/bin/true", describe())
    assert {o.knob.name: o for o in offers(plain, extra)}["UCX_TLS"].offered


def test_an_nccl_configuration_gets_the_nccl_knobs_unlisted(tmp_path):
    conf = _listed_openmpi(tmp_path, [])
    nccl = Configuration(MpiLibrary("nccl", "openmpi", "5", str(tmp_path), conf.library.launcher_path, "mpirun",
                                    transport="nccl"), "/bin/true", describe())
    got = {o.knob.name: o for o in offers(nccl)}
    assert set(got) == {k.name for k in knobs.NCCL_KNOBS}
    assert got["NCCL_PROTO"].values == ("LL", "LL128", "Simple") and "lists no parameters" in got["NCCL_PROTO"].note


def test_knobs_a_user_declares_are_checked():
    assert knobs.check_declared({"UCX_B": ["1", 2]}, "f", ("UCX_",)) == {"UCX_B": ["1", "2"]}
    for bad in ({"1A": ["x"]}, {"UCX_A": []}, {"UCX_A": [True]}, ["UCX_A"], {"MY_KNOB": ["1"]}):
        with pytest.raises(ValueError, match="knobs"):
            knobs.check_declared(bad, "f", ("UCX_",))


# --------------------------------------------------------------------------------------- searches on the fake engine
def _config(tmp_path, body: str) -> Path:
    bindir = tmp_path / "bin"
    launcher = write_fake_launcher(bindir)
    write_fake_engine(bindir / "gmb-bench")
    cfg = tmp_path / "libs.toml"
    cfg.write_text(body.replace("LAUNCHER", str(launcher)).replace("ENGINE", str(bindir / "gmb-bench")))
    return cfg


# a library of a family without a catalogue: only the knobs declared for it are searched
KNOBS = ("UCX_FAKE_KNOB=fast@2;UCX_FAKE_KNOB=slow@0.5", "UCX_FAKE_KNOB=bad", "UCX_FAKE_KNOB=crash")
PLAIN = """
[[library]]
name = "plain"
family = "intelmpi"
version = "1"
launcher = "mpirun"
launcher_path = "LAUNCHER"
engine = "ENGINE"
knobs = { UCX_FAKE_KNOB = ["fast", "slow", "same", "bad", "crash"] }
env = { FAKE_LIBRARY_VERSION = "Intel(R) MPI Library 1 for Linux* OS", FAKE_KNOB_EFFECT = "%s", FAKE_KNOB_BREAK = "%s", FAKE_DOCTOR_CRASH = "%s" }
""" % KNOBS


@pytest.fixture
def fake_home(tmp_path, monkeypatch):
    monkeypatch.setenv("GMB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[1] / "src"))
    monkeypatch.setenv("GMB_NODE_LOCK_DIR", str(tmp_path / "node"))  # this test's campaigns are this node's
    monkeypatch.setattr(topology, "discover", lambda: Topology(gpus=[], links={}, numa_nodes={0: "0-1"}))
    return tmp_path


def _tune(tmp_path, cfg: Path, **more) -> dict:
    opts = TuneOptions(libraries=LibraryOptions(config=str(cfg), no_detect=True), build=BuildOptions(no_build=True),
                       results=str(tmp_path / "results"), seed=1, no_report=True, **more)
    assert tune(opts) == 0
    (outdir,) = (tmp_path / "results").glob("tune-*")
    return {"dir": outdir, **json.loads((outdir / "tune.json").read_text())}


def test_a_search_recommends_the_knob_that_helps_and_says_what_the_others_did(fake_home, capsys):
    cfg = _config(fake_home, PLAIN)
    got = _tune(fake_home, cfg, paths=("host",), budget=300)
    (race,) = got["races"]
    assert race["configuration"] == "plain" and race["path"] == "host"
    verdicts = {a["key"]: a for a in race["arms"]}
    fast = verdicts["UCX_FAKE_KNOB=fast"]
    assert fast["verdict"] == "better" and fast["launches"] >= 3 and fast["fresh_launches"] == confirmation.CONFIRM_LAUNCHES
    assert verdicts["UCX_FAKE_KNOB=slow"]["verdict"] in ("worse", "cut early: no claim")
    same = verdicts["UCX_FAKE_KNOB=same"]
    assert same["verdict"] in ("cut early: no claim", "selected, not confirmed")
    assert verdicts["UCX_FAKE_KNOB=bad"]["verdict"] == "broken" and "received data differ" in verdicts["UCX_FAKE_KNOB=bad"]["why"]
    assert verdicts["UCX_FAKE_KNOB=crash"]["verdict"] == "broken" and "doctor" in verdicts["UCX_FAKE_KNOB=crash"]["why"]
    (rec,) = [r for r in race["recommendation"] if r["arm"] != "defaults"]
    assert rec["arm"] == "UCX_FAKE_KNOB=fast" and rec["settings"] == {"UCX_FAKE_KNOB": "fast"}
    # its gain from the confirmation launches alone (2x), with its interval, over the sizes it was confirmed at
    assert rec["gain"] == pytest.approx(2.0, rel=0.05) and 1 < rec["gain_low"] < rec["gain"] < rec["gain_high"]
    assert rec["span"] == [race["sizes"][0], race["sizes"][-1]] and rec["worse_sizes"] == []
    assert all(s["gain"] > 1.5 and s["arm"][3] == confirmation.CONFIRM_LAUNCHES for s in rec["sizes"])
    assert "-x UCX_FAKE_KNOB=fast" in rec["command"] and "UCX_FAKE_KNOB=fast" in rec["export"]
    assert got["tuned"] == [{"name": "plain-tuned", "base": "plain", "settings": {"UCX_FAKE_KNOB": "fast"},
                             "paths": ["host"]}]
    out = capsys.readouterr().out
    assert "UCX_FAKE_KNOB=fast  +" in out and "broken: UCX_FAKE_KNOB=bad" in out
    assert "cut early: no claim: UCX_FAKE_KNOB=same (" in out or "selected, not confirmed: UCX_FAKE_KNOB=same" in out
    # the store is a results directory: its records, and the answer in its meta for the report
    assert main(["tables", str(got["dir"])]) == 0
    # its report opens with the recommendation, never with a claim between the values it cut
    from gmb.report.html import build_html
    from gmb.results.model import Results
    from gmb.results.store import Store
    html = build_html(Results.load(Store(got["dir"] / "store.sqlite")), "gmb tune")
    first = html[html.index('<section id="answers">'):html.index("</section>")]
    assert "UCX_FAKE_KNOB=fast" in first and "UCX_FAKE_KNOB=same" not in first
    assert not re.search(r"fastest|within one launch|moves \d|\dx ", first)
    # the campaign that reproduces it: the defaults and the recommended settings, each its own point
    check = load_campaign(got["dir"] / "tune.toml")
    assert [b.settings for b in check.blocks] == [[{}, {"UCX_FAKE_KNOB": "fast"}]] and check.repetitions == confirmation.CONFIRM_LAUNCHES
    assert main(["plan", "--config", str(cfg), "--no-detect", str(got["dir"] / "tune.toml")]) == 0
    # measured again by a plain gmb run of it, with the libraries as the search ran them: the search's figures agree
    libs = got["dir"] / "tune-libraries.toml"
    assert main(["run", "--config", str(libs), "--no-detect", str(got["dir"] / "tune.toml"), "--results",
                 str(fake_home / "check"), "--no-progress", "--no-report"]) == 0
    (check_dir,) = (fake_home / "check").iterdir()
    capsys.readouterr()
    assert main(["tune", "--verify", str(got["dir"]), str(check_dir)]) == 0
    verified = capsys.readouterr().out
    # the figures agree (at most one size of 17 said to differ: each size's test is 95 % over all of them together)
    assert "agrees" in verified and verified.count("DIFFERS") <= 1 and "does NOT" not in verified
    assert re.search(r"the gain holds \(\+(9[5-9]|10[0-5]) %\)", verified)
    # gmb run --tuned: the recommended configuration beside the others
    assert main(["plan", "--config", str(cfg), "--no-detect", "--quick", "--tuned", str(got["dir"])]) == 0
    planned = capsys.readouterr().out
    assert ".plain-tuned." in planned and "UCX_FAKE_KNOB" not in planned.split(".plain.")[0]


def _budget_runs_out(monkeypatch, when):
    """The budget runs out as soon as ``when(tuner)`` holds (whatever the launches took)."""
    monkeypatch.setattr(tuner_mod.Tuner, "left", lambda self: 0.0 if when(self) else 1e6)


EIGHT = PLAIN.replace('["fast", "slow", "same", "bad", "crash"]',
                      '["fast", "slow", "same", "s1", "s2", "s3", "s4", "s5"]')


def test_the_budget_stops_the_search_and_values_it_left_unlaunched_are_not_measured(fake_home, monkeypatch, capsys):
    cfg = _config(fake_home, EIGHT)
    _budget_runs_out(monkeypatch, lambda t: len(t.owner) >= 2 and any(a.key == "defaults" for _, a in t.owner.values()))
    got = _tune(fake_home, cfg, paths=("host",), budget=300)
    assert got["cut_short"] and got["launches"] < 9
    (race,) = got["races"]
    assert all(r["arm"] == "defaults" for r in race["recommendation"])  # nothing proven in that time
    unlaunched = [a for a in race["arms"] if a["launches"] == 0]
    assert unlaunched and all(a["verdict"] == "not measured" and a["why"] == "the budget ran out before its first "
                              "launch" for a in unlaunched)
    assert not any(a["verdict"].startswith("cut early") and a["launches"] == 0 for a in race["arms"])
    out = capsys.readouterr().out
    assert "not measured: " in out and "(the budget ran out before its first launch)" in out


def test_a_value_the_budget_left_unconfirmed_is_selected_not_confirmed_and_not_recommended(fake_home, monkeypatch,
                                                                                           capsys):
    cfg = _config(fake_home, PLAIN)
    _budget_runs_out(monkeypatch, lambda t: any(arm.selected for _, arm in t.owner.values()))  # once selected
    got = _tune(fake_home, cfg, paths=("host",), budget=300)
    (race,) = got["races"]
    fast = next(a for a in race["arms"] if a["key"] == "UCX_FAKE_KNOB=fast")
    assert fast["verdict"] == "selected, not confirmed" and fast["fresh_launches"] == 0
    assert fast["why"] == "the budget ran out before its confirmation" and got["cut_short"]
    assert [r["arm"] for r in race["recommendation"]] == ["defaults"] and got["tuned"] == []
    out = capsys.readouterr().out
    assert "selected, not confirmed: UCX_FAKE_KNOB=fast (the budget ran out before its confirmation)" in out
    assert "the defaults (no value tried was confirmed better)" in out


def test_a_budget_that_measures_nothing_says_so_and_fails(fake_home, monkeypatch, capsys):
    cfg = _config(fake_home, EIGHT)
    opts = TuneOptions(libraries=LibraryOptions(config=str(cfg), no_detect=True), build=BuildOptions(no_build=True),
                       results=str(fake_home / "results"), paths=("host",), budget=0.001, no_report=True)
    with pytest.raises(UsageError, match=r"--budget 0.001: too little to measure even the defaults of the 1 race\(s\) "
                                         r"once .*: give --budget 5 or more"):
        tune(opts)
    assert not (fake_home / "results").exists()
    _budget_runs_out(monkeypatch, lambda t: True)  # a budget that ran out before the first launch all the same
    assert tune(replace(opts, budget=300)) == 1
    (outdir,) = (fake_home / "results").iterdir()
    answer = json.loads((outdir / "tune.json").read_text())
    (race,) = answer["races"]
    assert race["unanswered"] == "not measured: the budget ran out before its defaults were measured"
    assert {a["verdict"] for a in race["arms"][1:]} == {"not measured"} and answer["races_measured"] == 0
    out, err = capsys.readouterr()
    assert "host (bw bandwidth, GB/s): not measured: the budget ran out before its defaults were measured" in out
    assert "nothing was compared: no race's defaults were measured" in err and "measure it again" not in err


def test_values_beside_defaults_never_measured_are_not_measured_never_cut():
    race = _race({"defaults": {}, "A=1": {8: (10, 9, 11, 1)}, "B=1": {}})
    assert selection.cut_losers(race) == [] and race.arm("A=1").state == "racing"
    unmeasured(race, "the budget ran out")
    assert [(a.state, a.why) for a in race.arms[1:]] == [
        ("unmeasured", "the budget ran out before the defaults were measured"),
        ("unmeasured", "the budget ran out before its first launch")]
    assert {confirmation.verdict(race, a) for a in race.arms[1:]} == {"not measured"}
    from gmb.tune.answer import unanswered
    assert unanswered(race, "gmb tune was stopped by SIGTERM") == \
        "not measured: gmb tune was stopped by SIGTERM before its defaults were measured"


def test_a_failed_launch_breaks_a_value_only_where_the_defaults_ran():
    race = _race({"defaults": {8: (10, 9, 11, 1)}, "A=1": {}})
    race.arm("A=1").state, race.arm("A=1").why = "failed", "its launch failed: no such host"
    judge_failures(race)
    assert race.arm("A=1").state == "broken" and confirmation.verdict(race, race.arm("A=1")) == "broken"
    race = _race({"defaults": {}, "A=1": {}, "B=1": {}})
    for key in ("A=1", "B=1"):
        race.arm(key).state, race.arm(key).why = "failed", "its launch failed: no such host"
    judge_failures(race)  # the defaults not launched yet: no verdict
    assert race.arm("A=1").state == "failed"
    race.note = "a launch with the defaults failed: no such host"
    judge_failures(race)
    assert race.arm("A=1").state == "unmeasured" and race.arm("A=1").why == \
        "its launch failed: no such host, as a launch of the defaults did: no verdict on the setting"
    assert confirmation.verdict(race, race.arm("B=1")) == "not measured"


def test_a_tuned_directory_that_is_not_one_is_refused(fake_home, capsys):
    cfg = _config(fake_home, PLAIN)
    assert main(["plan", "--config", str(cfg), "--no-detect", "--quick", "--tuned", str(fake_home)]) == 2
    assert "no tune.json" in capsys.readouterr().err
    assert main(["tune", "--config", str(cfg), "--no-detect", "--topology", "x.json"]) == 2
    assert main(["tune", "--config", str(cfg), "--no-detect", "--no-build", "--paths", "host,nvlnk"]) == 2
    assert "--paths: nvlnk is no path here (paths here: collective allreduce, host" in capsys.readouterr().err


# two configurations of one installation (fake pml ob1 and ucx: ucx 2x faster), NCCL over the first
PML_ENTRY = """
[[library]]
name = "x-{pml}"
family = "intelmpi"
version = "1"
prefix = "/opt/x"
launcher = "mpirun"
launcher_path = "LAUNCHER"
engine = "ENGINE"
cuda_aware = true
launcher_args = ["--mca", "pml", "{pml}"]
env = {{ FAKE_LIBRARY_VERSION = "Intel(R) MPI Library 1 for Linux* OS", FAKE_CUDA = "1", FAKE_NCCL = "2.28.3", {more} }}
"""
TWO_PMLS = (PML_ENTRY.format(pml="ob1", more='FAKE_KNOB_EFFECT = "NCCL_PROTO=LL@3"')
            + PML_ENTRY.format(pml="ucx", more='FAKE_SCALE = "0.5"'))


def test_on_a_gpu_node_the_configurations_are_compared_and_nccl_searched(fake_home, monkeypatch, capsys):
    two = Topology(gpus=[Gpu(i, "NVIDIA H200") for i in range(2)], links={(0, 1): "NV18", (1, 0): "NV18"},
                   numa_nodes={0: "0-1"})
    monkeypatch.setattr(topology, "discover", lambda: two)
    cfg = _config(fake_home, TWO_PMLS)
    got = _tune(fake_home, cfg, paths=("nvlink", "collective"), budget=600)
    races = {(r["configuration"], r["path"]) for r in got["races"]}
    assert races == {(c, p) for c in ("x-ob1", "x-ucx", "nccl") for p in ("nvlink", "collective allreduce")}
    nvlink = [c for c in got["comparisons"] if c["path"] == "nvlink"]
    for c in nvlink:  # the fake NCCL is 10x faster than the MPIs, x-ucx 2x faster than x-ob1
        assert [r["configuration"] for r in c["ranking"]] == ["nccl", "x-ucx", "x-ob1"]
        assert c["ranking"][0]["ahead_of"] == ["x-ucx", "x-ob1"] and c["ranking"][1]["ahead_of"] == ["x-ob1"]
        assert c["ranking"][2]["behind"] == pytest.approx(2 * c["ranking"][1]["behind"], rel=0.1)
    # one engine launch measured both paths of a configuration and its settings (a bundle of their launches)
    rows = sqlite3.connect(got["dir"] / "store.sqlite").execute("SELECT benchmark, argv FROM launches").fetchall()
    by_engine_launch = {}
    for bench, argv in rows:
        by_engine_launch.setdefault(argv, set()).add(bench)
    assert len(by_engine_launch) < len(rows) and any(len(b) > 1 for b in by_engine_launch.values())
    assert all('"plan"' in argv for argv in by_engine_launch)
    plans = list((got["dir"] / "raw").glob("*.plan"))  # each engine launch its own plan, none set aside
    assert len(plans) == len(by_engine_launch) and not list((got["dir"] / "raw").glob("*.interrupted-*"))
    (nccl,) = [r for r in got["races"] if r["configuration"] == "nccl" and r["path"].startswith("collective")]
    assert {r["arm"] for r in nccl["recommendation"]} == {"NCCL_PROTO=LL"}
    assert "NCCL_PROTO=LL" in nccl["recommendation"][0]["command"]
    # the claims measured again by a plain gmb run: the configurations' order holds, and NCCL_PROTO's gain
    libs = got["dir"] / "tune-libraries.toml"
    assert main(["run", "--config", str(libs), "--no-detect", str(got["dir"] / "tune.toml"), "--results",
                 str(fake_home / "check"), "--no-progress", "--no-report"]) == 0
    capsys.readouterr()
    assert main(["tune", "--verify", str(got["dir"]), str(next((fake_home / "check").iterdir()))]) == 0
    verified = capsys.readouterr().out
    assert "nvlink at 65536 B: x-ucx ahead of x-ob1" in verified and "does NOT" not in verified
    assert "NCCL_PROTO=LL" in verified and re.search(r"the gain holds \(\+(19[5-9]|20[0-5]) %\)", verified)
    # NCCL's recommended protocol as a configuration of its own in a generated campaign
    assert main(["plan", "--config", str(cfg), "--no-detect", "--quick", "--tuned", str(got["dir"])]) == 0
    planned = capsys.readouterr().out
    assert ".nccl-tuned.coll-allreduce" in planned and ".nccl-tuned.bw.device_device" in planned
    # the libraries as the search ran them, NCCL by its via library
    from gmb.machine.libraries import load_config
    declared = {lib.name: lib for lib in load_config(got["dir"] / "tune-libraries.toml")}
    assert set(declared) == {"x-ob1", "x-ucx", "nccl"}
    assert declared["nccl"].transport == "nccl" and declared["nccl"].via == "x-ob1"
    assert declared["nccl"].launcher_args == ["--mca", "pml", "ob1"] and declared["x-ucx"].env["FAKE_SCALE"] == "0.5"


def test_a_knob_on_the_command_line_must_be_a_setting_the_records_keep(fake_home, capsys):
    cfg = _config(fake_home, PLAIN)
    assert main(["tune", "--config", str(cfg), "--no-detect", "--knob", "MY_THING=1", "--list"]) == 2
    assert "is not a setting the records keep" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["tune", "--config", str(cfg), "--no-detect", "--knob", "UCX_TLS", "--list"])
    assert main(["tune", "--config", str(cfg), "--no-detect", "--knob", "UCX_TLS=tcp,self", "--knob",
                 "UCX_TLS=sm,self", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "tries tcp,self, sm,self" in listed and "UCX_FAKE_KNOB" in listed
    assert "values per path: host 7, collective allreduce 7; the first round takes 16 launches" in listed


def test_knobs_narrows_the_search_to_the_knobs_it_names_and_keeps_those_the_command_line_adds(fake_home, capsys):
    cfg = _config(fake_home, PLAIN)
    assert main(["tune", "--config", str(cfg), "--no-detect", "--knob", "UCX_TLS=tcp,self", "--knobs",
                 "UCX_TLS", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "UCX_FAKE_KNOB                                not offered: not among --knobs UCX_TLS" in listed
    assert "values per path: host 1, collective allreduce 1; the first round takes 4 launches" in listed
    # a value asked for by name is searched whatever --knobs says (not dropped without a word)
    assert main(["tune", "--config", str(cfg), "--no-detect", "--knob", "UCX_TLS=tcp,self", "--knobs",
                 "UCX_FAKE_*", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "UCX_TLS                                      default not listed; tries tcp,self" in listed
    assert "values per path: host 6, collective allreduce 6; the first round takes 14 launches" in listed
    # a pattern that names no knob is refused, listing the knobs offered before --knobs narrowed them
    for pattern in ("UCX_FAKE_*,UCX_RNDV_TRESH", "NOPE_*"):
        assert main(["tune", "--config", str(cfg), "--no-detect", "--knobs", pattern, "--list"]) == 2
        err = capsys.readouterr().err
        assert f"--knobs: {pattern.split(',')[-1]} names no knob of these configurations (offered here: " \
               "UCX_FAKE_KNOB;" in err


# an Open MPI of the fake engine whose ompi_info and ucx_info (beside its launcher) list a few parameters
OMPI = """
[[library]]
name = "ompi"
family = "openmpi"
version = "9.9.0"
launcher = "mpirun"
launcher_path = "LAUNCHER"
engine = "ENGINE"
env = { FAKE_STEADY = "1" }
"""


def _ompi_config(tmp_path, pml_selection: str = "") -> Path:
    cfg = _config(tmp_path, OMPI)
    _tool(tmp_path / "bin" / "ompi_info", OMPI_INFO + (f"mca:pml:base:param:pml:value:{pml_selection}\n"
                                                       if pml_selection else ""))
    _tool(tmp_path / "bin" / "ucx_info", "UCX_RNDV_THRESH=auto\nUCX_MAX_RNDV_RAILS=2\n")
    return cfg


def test_an_open_mpi_whose_parameter_files_exclude_pml_ucx_is_offered_no_ucx_knob(fake_home, capsys):
    """Debian's Open MPI names no pml on the command line, and its parameter file says pml = ^ucx: it runs ob1."""
    cfg = _ompi_config(fake_home, "^ucx")
    assert main(["tune", "--config", str(cfg), "--no-detect", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "UCX_RNDV_THRESH                              not offered: belongs to ucx, which this configuration does " \
           "not run on (ob1, openmpi)" in listed
    assert "OMPI_MCA_btl_vader_eager_limit               default 4096; tries 16384, 65536" in listed
    cfg = _ompi_config(fake_home)  # nothing selects a pml: the library picks one at start, either may be searched
    assert main(["tune", "--config", str(cfg), "--no-detect", "--list"]) == 0
    assert "UCX_RNDV_THRESH                              default auto; tries 8192, 1048576" in capsys.readouterr().out


def test_a_path_with_nothing_to_try_says_why(fake_home, capsys):
    cfg = _ompi_config(fake_home)
    assert main(["tune", "--config", str(cfg), "--no-detect", "--no-build", "--knobs", "UCX_MAX_RNDV_RAILS",
                 "--paths", "host", "--budget", "30"]) == 2
    assert "gmb tune: error: nothing to try: ompi, host: none of the knobs offered to this configuration affects a " \
           "host path (UCX_MAX_RNDV_RAILS: inter-node)" in capsys.readouterr().err
    assert not (fake_home / "results").exists()
    assert main(["tune", "--config", str(cfg), "--no-detect", "--no-build", "--knobs", "UCX_PROTO_ENABLE",
                 "--paths", "host", "--budget", "30"]) == 2  # a knob this UCX does not list
    assert "nothing to try: ompi, host: no knob is offered to this configuration among --knobs (it is offered " \
           "OMPI_MCA_btl_vader_single_copy_mechanism, OMPI_MCA_btl_vader_eager_limit" in capsys.readouterr().err


def test_a_campaign_files_blocks_and_knobs_are_searched(fake_home, capsys):
    cfg = _config(fake_home, PLAIN.replace('knobs = { UCX_FAKE_KNOB = ["fast", "slow", "same", "bad", "crash"] }\n',
                                           ""))
    camp = fake_home / "mine.toml"
    camp.write_text('[campaign]\nname = "mine"\n\n[[run]]\nbenchmarks = ["bw"]\nmemory = ["host:host"]\n'
                    'sizes = "64K,1M"\npath = "my-exchange"\noptions = { iters = 20, warmup = 2 }\n\n'
                    '[[run]]\nbenchmarks = ["coll"]\noperations = ["allreduce"]\nsizes = "1M"\n'
                    'options = { iters = 20, warmup = 2 }\n\n[knobs]\nUCX_FAKE_KNOB = ["fast", "same"]\n')
    got = _tune(fake_home, cfg, campaign=str(camp), budget=300)
    races = {r["path"]: r for r in got["races"]}
    assert set(races) == {"my-exchange", "block 2"} and races["block 2"]["kind"] == "collective"
    assert {r["arm"] for r in races["my-exchange"]["recommendation"]} == {"UCX_FAKE_KNOB=fast"}
    assert [o["source"] for o in got["configurations"][0]["offers"]] == [f"the campaign file {camp}"]
    # a block that makes several launches per set, and knobs the records would not keep, are refused
    camp.write_text('[[run]]\nbenchmarks = ["bw", "latency"]\n')
    assert main(["tune", str(camp), "--config", str(cfg), "--no-detect", "--no-build"]) == 2
    assert "block 1: gmb tune measures each set of settings in one launch: it makes 2" in capsys.readouterr().err
    camp.write_text('[[run]]\nbenchmarks = ["bw"]\n\n[knobs]\nMY_KNOB = ["1"]\n')
    assert main(["tune", str(camp), "--config", str(cfg), "--no-detect", "--no-build"]) == 2
    assert "MY_KNOB is not a setting the records keep" in capsys.readouterr().err


def test_a_campaigns_knobs_go_back_into_its_file():
    from gmb.campaign.spec import parse_campaign
    c = parse_campaign(tomllib.loads('[[run]]\nbenchmarks = ["bw"]\n\n[knobs]\nUCX_TLS = ["sm,self", "tcp,self"]\n'))
    assert c.knobs == {"UCX_TLS": ["sm,self", "tcp,self"]}
    assert parse_campaign(tomllib.loads(c.to_toml())) == c


def test_a_search_stopped_by_a_signal_answers_what_it_measured(fake_home, monkeypatch, capsys):
    import signal

    from gmb.run.execute import Stopped
    from gmb.tune import tuner

    cfg = _config(fake_home, PLAIN)
    real = tuner.Tuner.run_round

    def stop_in_the_second_round(self, number, work):
        if self.rounds == 1:
            raise Stopped(signal.SIGTERM)
        real(self, number, work)

    monkeypatch.setattr(tuner.Tuner, "run_round", stop_in_the_second_round)
    opts = TuneOptions(libraries=LibraryOptions(config=str(cfg), no_detect=True), build=BuildOptions(no_build=True),
                       results=str(fake_home / "results"), paths=("host",), no_report=True)
    assert tune(opts) == 128 + signal.SIGTERM
    (outdir,) = (fake_home / "results").iterdir()
    answer = json.loads((outdir / "tune.json").read_text())
    assert answer["stopped"] == "gmb tune was stopped by SIGTERM" and answer["cut_short"]
    assert answer["launches"] == 5  # the first round: every value but the one the doctor's crash broke
    assert "stopped by SIGTERM: the answer so far" in capsys.readouterr().out


def test_a_tuned_configuration_is_its_base_with_the_settings_on_top(tmp_path):
    from gmb.engine.configurations import with_tuned
    base = _listed_openmpi(tmp_path, ["--mca", "pml", "ucx"], env={"UCX_MEMTYPE_CACHE": "n"})
    tuned = with_tuned([base], [{"name": "ompi-tuned", "base": "ompi", "settings": {"UCX_RNDV_THRESH": "8192"},
                                 "paths": ["nvlink"]}], "--tuned d")
    assert [c.name for c in tuned] == ["ompi", "ompi-tuned"] and tuned[1].engine == base.engine
    assert tuned[1].library.env == {"UCX_MEMTYPE_CACHE": "n", "UCX_RNDV_THRESH": "8192"}
    assert tuned[1].library.launcher_args == ["--mca", "pml", "ucx"]
    with pytest.raises(ValueError, match="of other, which this session does not have"):
        with_tuned([base], [{"name": "x", "base": "other", "settings": {}}], "--tuned d")


def test_a_configuration_is_proven_ahead_of_another_over_their_launches_not_by_intervals():
    """Configurations compared at their defaults: a claim rests on the ratio over both configurations' launches
    (three launches 1 % apart, 20 % apart in figure: proven; one launch a side, however far: no claim)."""
    fast = ArmFigure(12.0, 11.9, 12.1, 3, (11.9, 12.0, 12.1))
    slow = ArmFigure(10.0, 9.9, 10.1, 3, (9.9, 10.0, 10.1))
    assert confirmation.proven_ahead(fast, slow, True) and not confirmation.proven_ahead(slow, fast, True)
    assert confirmation.proven_ahead(slow, fast, False)  # times: lower is better
    assert not confirmation.proven_ahead(ArmFigure(50.0, 49.0, 51.0, 1, (50.0,)), slow, True)
    # a Bonferroni level for many comparisons asks for more
    near = ArmFigure(10.4, 10.2, 10.6, 3, (10.28, 10.4, 10.52))
    assert confirmation.proven_ahead(near, slow, True) and not confirmation.proven_ahead(near, slow, True, level=0.9999)


class _ConfirmingTuner:
    """Time for ``fits`` launches; each round of confirmation launches recorded, and every arm it launched
    confirmed."""

    def __init__(self, fits: int):
        self.fits, self.cut_short, self.rounds, self.owner = fits, False, [], {}

    def left(self) -> float:
        return self.fits * 4.0 - 4.0 * sum(len(work) for work in self.rounds)

    def launch_estimate(self) -> float:
        return 4.0

    def run_round(self, number, work, confirming=False):
        assert confirming
        self.rounds.append(work)

    def update_figures(self, races):
        for work in self.rounds:
            for _race, arm in work:
                arm.confirmation = arm.confirmation or SimpleNamespace(recommended=True, worse=[])


def test_the_values_the_time_left_can_confirm_are_confirmed_when_another_cannot_be(monkeypatch):
    races = [Race("ob1", path, "host-device", Block(["bw"]), True, "bw", [Arm(DEFAULTS, {})])
             for path in ("host-device pinned", "host-device pageable")]
    values = [Arm("K=1", {"K": "1"}, "K") for _ in races]
    for race, arm in zip(races, values):
        race.arms.append(arm)
    monkeypatch.setattr(search_mod, "best_gain", lambda race, arm: (2.0 if race is races[0] else 1.5, 1))
    # time for one value and its defaults (12 launches), not for two (24)
    tuner = _ConfirmingTuner(fits=22)
    search_mod._confirm(tuner, races, 5, list(zip(races, values)))
    assert len(tuner.rounds) == confirmation.CONFIRM_LAUNCHES
    assert all({arm.key for _, arm in work} == {DEFAULTS, "K=1"} and work[1][0] is races[0]
               for work in tuner.rounds)
    assert values[0].confirmation is not None and values[0].why == ""
    assert values[1].confirmation is None and values[1].why == "the budget ran out before its confirmation"
    assert tuner.cut_short  # the search says its budget ran out
