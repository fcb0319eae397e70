# SPDX-License-Identifier: BSD-3-Clause
"""A point is its whole configuration: blocks of a campaign that differ only in an environment setting, in an option
that changes the measured work, or in the number of hosts are separate points, and the tables, answers and report
name what differs; only repetitions are combined, with an interval from the launches."""

import json
import math
import sqlite3


import pytest
import synth
from test_cli import run_gmb

from gmb.report import answers
from gmb.report.answers_words import path_sentence
from gmb.report import compare
from gmb.results import run_conditions
from gmb.report import tables
from gmb.results.inference import LaunchNoise
from gmb.results.model import Results
from gmb.results.points import PointLaunch, combine, point_figure
from gmb.results.store import Store, open_results

CAMPAIGN = """
[campaign]
name = "identity"
repetitions = 2
order = "random"
seed = 5
libraries = ["fakempi-a"]

[[run]]
benchmarks = ["bw"]
memory = ["host:host"]
sizes = "1K,1M"

[[run]]
benchmarks = ["bw"]
memory = ["host:host"]
sizes = "1K,1M"
env = { UCX_RNDV_THRESH = "8192" }

[[run]]
benchmarks = ["bw"]
memory = ["host:host"]
sizes = "1K,1M"
options = { window = 16 }

[[run]]
benchmarks = ["bw"]
memory = ["host:host"]
sizes = "1K,1M"
env = { FAKE_HOSTS = "2" }
"""


@pytest.fixture
def identity_run(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    rc = run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                 "--no-build", "--no-progress")
    out = capsys.readouterr()
    assert rc == 0, out.err
    (outdir,) = (tmp_path / "res").iterdir()
    return outdir, out.out


def test_blocks_that_differ_in_a_setting_an_option_or_the_hosts_are_separate_points(identity_run):
    outdir, text = identity_run
    st = open_results(outdir)
    points = [p for p in combine(Results.load(st).ok("bw")) if p.bytes == 64 << 10]
    names = sorted(p.library for p in points)
    assert names == ["fakempi-a [UCX_RNDV_THRESH unset, 1 host] (window=16)",
                     "fakempi-a [UCX_RNDV_THRESH unset, 1 host] (window=64)",
                     "fakempi-a [UCX_RNDV_THRESH unset, 2 hosts] (window=64)",
                     "fakempi-a [UCX_RNDV_THRESH=8192, 1 host] (window=64)"]
    # each point combines its own two launches only, and every one of them is the same library
    assert all(p.reps == 2 and p.base_library == "fakempi-a" and not p.one_launch for p in points)
    # the tables keep the four apart and name them; the report and the printed answers say what differs
    rows = tables.fraction_of_peak(Results.load(st)).rows
    assert {r[0] for r in rows} >= set(names)
    html = (outdir / "report.html").read_text()
    assert "UCX_RNDV_THRESH=8192" in html and "window=16" in html and "2 hosts" in html
    # the fake engine's figures are equal: no configuration is claimed fastest (whatever the reason said: on a busy
    # machine its launches carry no claim at all)
    assert "no configuration of 4 proven fastest" in " ".join(text.split())


def test_configuration_is_read_from_the_records_alone(identity_run):
    """The identity comes from each launch's context (its environment, options, binding and hosts), so records
    ingested without the campaign keep their points apart as well."""
    outdir, _ = identity_run
    st = Store()
    for f in sorted((outdir / "raw").glob("*.jsonl")):
        st.ingest(f, library="fakempi-a")
    assert len({p.library for p in combine(Results.load(st).ok("bw"))}) == 4
    db = sqlite3.connect(outdir / "store.sqlite")
    configs = {json.loads(c) .get("settings", {}).get("UCX_RNDV_THRESH") for (c,) in
               db.execute("SELECT config FROM results WHERE benchmark = 'bw'")}
    assert configs == {None, "8192"}


def test_settings_are_library_knobs_not_launcher_bookkeeping():
    ctx = synth.context("r", "bw", env={"UCX_RNDV_THRESH": "8192", "OMPI_MCA_pml": "ucx", "OMPI_COMM_WORLD_RANK": "0",
                                        "OMPI_MCA_initial_wdir": "/x", "PMIX_RANK": "0", "CUDA_VISIBLE_DEVICES": "0,1",
                                        "NCCL_ALGO": "Ring", "MPIR_CVAR_ENABLE_GPU": "1", "SLURM_PROCID": "0",
                                        # what Open MPI's mpirun exports to every rank of every launch
                                        "OMPI_MCA_ess": "^singleton", "OMPI_MCA_mpi_oversubscribe": "0",
                                        "OMPI_MCA_shmem_RUNTIME_QUERY_hint": "mmap", "OMPI_MCA_pmix": "^s1"})
    assert run_conditions.settings(ctx) == {"MPIR_CVAR_ENABLE_GPU": "1", "OMPI_MCA_pml": "ucx",
                                            "UCX_RNDV_THRESH": "8192"}
    # NCCL's settings only where NCCL moved the data
    assert run_conditions.settings(ctx, "nccl")["NCCL_ALGO"] == "Ring"


def test_the_mapping_gmb_asks_for_a_launch_over_nodes_names_no_configuration(tmp_path):
    """Open MPI's mpirun hands gmb's --map-by ppr:N:node to the ranks as a variable: where N ranks ran on each host it
    says no more than the point's hosts and ranks, and is no setting; another mapping is one."""
    mapped = synth.context("r", "bw", env={"OMPI_MCA_rmaps_base_mapping_policy": "ppr:1:node"})
    mapped["ranks"][1]["host"] = "node1"
    assert run_conditions.settings(mapped) == {}
    on_one_host = synth.context("r", "bw", env={"OMPI_MCA_rmaps_base_mapping_policy": "ppr:1:node"})
    assert run_conditions.settings(on_one_host) == {"OMPI_MCA_rmaps_base_mapping_policy": "ppr:1:node"}
    by_socket = synth.context("r", "bw", env={"OMPI_MCA_rmaps_base_mapping_policy": "socket"})
    assert run_conditions.settings(by_socket) == {"OMPI_MCA_rmaps_base_mapping_policy": "socket"}
    st = Store(":memory:")
    for rid, ctx in (("a", mapped), ("b", synth.context("b", "bw"))):
        st.ingest(synth.write_jsonl(tmp_path / f"{rid}.jsonl",
                                    [{**ctx, "run_id": rid}, *synth.pt2pt_results(rid, "bw", [1024])]))
    assert {p.configuration for p in combine(Results.load(st).ok())} == {"openmpi-4.1.4 [1 host]",
                                                                        "openmpi-4.1.4 [2 hosts]"}


@pytest.mark.parametrize("bindings, said", [(["0-15", "0-15"], "unbound"), (["0", "1"], "1 CPU/rank"),
                                            (["0-7", "8-15"], "8 CPUs/rank"), (["0-7", "8-11"], "4-8 CPUs/rank")])
def test_binding_is_said_the_same_way_on_any_machine(bindings, said):
    ctx = synth.context("r", "bw")
    for rank, cpus in zip(ctx["ranks"], bindings):
        rank["cpu_binding"] = cpus
    assert run_conditions.configuration(ctx, {})["binding"] == said


def test_a_points_interval_comes_from_its_launches_and_shrinks_as_launches_are_added():
    def launch(i, m, low=None, high=None):
        return PointLaunch(f"l{i}", i, False, m, low, high)
    # one launch: its own interval
    assert point_figure([launch(1, 10.0, 9.5, 10.5)], None) == (10.0, 9.5, 10.5)
    # two launches that differ by 10 %: the geometric mean and the t-interval of the log mean (t(0.975, 1) = 12.706),
    # not widened to cover each launch's own interval
    value, low, high = point_figure([launch(1, 100.0, 99.0, 101.0), launch(2, 110.0, 109.0, 111.0)], None)
    half = 12.706 * abs(math.log(110 / 100)) / 2
    assert value == pytest.approx(math.sqrt(100 * 110))
    assert low == pytest.approx(value * math.exp(-half), rel=1e-4) and high == pytest.approx(value * math.exp(half), rel=1e-4)
    # the series' pooled noise (many degrees of freedom): the interval shrinks as launches are added
    noise = LaunchNoise(0.02 ** 2, 40)
    widths = [(lambda f: f[2] / f[1])(point_figure([launch(i, 100.0 * (1.02 if i % 2 else 0.98)) for i in range(n)], noise))
              for n in (2, 5, 20)]
    assert widths[0] > widths[1] > widths[2] > 1
    # a value of 0 (bandwidth at 0 B): no log scale, no interval
    assert point_figure([launch(1, 0.0), launch(2, 0.0)], None) == (0.0, None, None)


def test_compare_of_single_launches_judges_nothing(fake_setup, tmp_path, capsys):
    """Two runs of the same library, one launch each: no difference is called significant (launches differ more than
    one launch's interval), and a tolerance check on them says it could check nothing."""
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN.replace("repetitions = 2", "repetitions = 1"))
    for name in ("r1", "r2"):
        assert run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / name,
                       "--no-build", "--no-progress", "--no-report") == 0
    (a,), (b,) = (tmp_path / "r1").iterdir(), (tmp_path / "r2").iterdir()
    rows = compare.compare(Results.load(open_results(a)), Results.load(open_results(b))).rows
    assert rows and not any(r.significant or r.judged for r in rows)
    capsys.readouterr()
    tol = tmp_path / "tol.toml"
    tol.write_text("[default]\nmax_regression_pct = 1\n")
    assert run_gmb("compare", a, b, "--reference", tol) == 2
    out, err = capsys.readouterr()
    assert f"{len(rows)} without a verdict (" in err and f"one launch: {len(rows)}" in err
    assert "no point could be checked" in err and "no verdict: A one launch; " in out


def test_answers_make_no_claim_from_one_launch(tmp_path):
    """3x apart within one launch each: launches, not samples, are the replicates, so no configuration is called
    faster; the figures are shown and the answer says what would settle it."""
    st = Store()
    for lib, gbps in (("Open MPI v5.0.7", 100.0), ("MPICH Version: 4.0.2", 300.0)):
        rid = lib.split()[0]
        recs = synth.pt2pt_results(rid, "bw", [1 << 20], "device", "device", "nvlink")
        for r in recs:
            r["bandwidth_GBps"].update(median=gbps, ci95_low=gbps * 0.99, ci95_high=gbps * 1.01, min=gbps * 0.9,
                                       max=gbps * 1.1)
        st.ingest(synth.write_jsonl(tmp_path / f"{rid}.jsonl", [synth.context(rid, "bw", lib, cuda=True), *recs]))
    a = answers.answers(Results.load(st))
    (nv,) = a.paths
    assert nv.fastest is None and nv.slowest is None and nv.ratio is None
    assert "one launch: no claim across launches (gmb run --repetitions 3" in path_sentence(nv)
    assert any("Each figure comes from one launch" in n for n in a.notes)


def _bw_store(tmp_path, runs):
    """A store of bw host:host launches: runs is [(library version, cpu bindings of the two ranks, env)]."""
    st = Store(":memory:")
    for i, (version, bindings, env) in enumerate(runs):
        for rep in range(2):
            rid = f"r{i}-{rep}"
            ctx = synth.context(rid, "bw", version, env=env)
            for rank, cpus in zip(ctx["ranks"], bindings):
                rank["cpu_binding"] = cpus
            st.ingest(synth.write_jsonl(tmp_path / f"{rid}.jsonl",
                                        [ctx, *synth.pt2pt_results(rid, "bw", [1024, 1 << 20], seed=rep)]))
    return st


def test_two_libraries_are_compared_as_each_was_launched(tmp_path, capsys):
    """Open MPI binds ranks to cores, MPICH's Hydra leaves them unbound, and each has its own settings: a comparison
    of the two libraries matches their points anyway and says how the launches differed."""
    st = _bw_store(tmp_path, [("Open MPI v4.1.4", ["0", "1"], {"OMPI_MCA_pml": "ob1"}),
                              ("MPICH Version: 4.0.2", ["0-15", "0-15"], {})])
    ompi, mpich = st.libraries()[1], st.libraries()[0]
    rows = compare.compare(Results.load(st), Results.load(st), ompi, mpich).rows
    assert {r.bytes for r in rows} == {1024, 1 << 20}
    assert compare.launch_differences(rows) == ["settings: A OMPI_MCA_pml=ob1, B none",
                                                "binding: A 1 CPU/rank, B unbound"]
    db = tmp_path / "store.sqlite"
    st.db.execute("VACUUM INTO ?", (str(db),))
    assert run_gmb("compare", db, db, "--a-library", ompi, "--b-library", mpich) == 0
    assert "launched differently: binding: A 1 CPU/rank, B unbound" in capsys.readouterr().out


def test_one_library_bound_two_ways_is_two_configurations(tmp_path):
    """Within one library the binding is part of the point: compared with itself, a store holding the library bound
    and unbound matches bound with bound only, and names both configurations."""
    st = _bw_store(tmp_path, [("Open MPI v4.1.4", ["0", "1"], {}), ("Open MPI v4.1.4", ["0-15", "0-15"], {})])
    rows = compare.compare(Results.load(st), Results.load(st)).rows
    assert len(rows) == 4 and all(r.a.config == r.b.config for r in rows)
    assert compare.launch_differences(rows) == []
    assert {p.configuration for p in combine(Results.load(st).ok())} == \
        {"openmpi-4.1.4 [binding 1 CPU/rank]", "openmpi-4.1.4 [binding unbound]"}


def test_a_point_counts_its_launches_by_launch_id_and_carries_them(tmp_path):
    """A launch that measured a point twice (``--references``, ``--chunks 4,4``) is one launch of it, not two; a
    point carries each launch (id, repetition round, busy flag, median and own interval) for a later pairing."""
    st = Store(":memory:")
    for rep, medians in ((1, (100.0, 104.0)), (2, (110.0,))):
        rid = f"r{rep}"
        recs = []
        for i, m in enumerate(medians):
            (r,) = synth.pt2pt_results(rid, "bw", [1 << 20])
            r["iterations"] += i  # a second measurement of the same point within the launch
            r["bandwidth_GBps"].update(median=m, ci95_low=m - 1, ci95_high=m + 1, min=m - 5, max=m + 5)
            recs.append(r)
        st.ingest(synth.write_jsonl(tmp_path / f"{rid}.jsonl", [synth.context(rid, "bw"), *recs]),
                  repetition=rep, launch_id=f"launch-{rep}")
    (p,) = combine(Results.load(st).ok("bw"), "bw")
    assert p.reps == 2 and not p.one_launch
    first, second = p.launches
    assert (first.launch_id, first.repetition, first.busy) == ("launch-1", 1, False)
    assert (first.median, first.low, first.high) == (102.0, 99.0, 105.0)
    assert (second.launch_id, second.repetition, second.median) == ("launch-2", 2, 110.0)
    assert p.median == pytest.approx(math.sqrt(102.0 * 110.0))
    assert (p.low, p.high) == point_figure(list(p.launches), p.noise)[1:] and p.low < 102.0 and p.high > 110.0
    # one launch alone: one launch, whatever it measured twice
    st1 = Store(":memory:")
    (a,) = synth.pt2pt_results("s", "bw", [1 << 20])
    b = {**a, "iterations": a["iterations"] + 1}
    st1.ingest(synth.write_jsonl(tmp_path / "s.jsonl", [synth.context("s", "bw"), a, b]), repetition=1,
               launch_id="only")
    (q,) = combine(Results.load(st1).ok("bw"), "bw")
    assert q.reps == 1 and q.one_launch and len(q.launches) == 1
