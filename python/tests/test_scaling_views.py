# SPDX-License-Identifier: BSD-3-Clause
"""Collectives over node counts (strong and weak scaling: one series per configuration and size) and the size sweep
at a fixed node count (its own view, with the crossover sizes), on synthetic records."""

import pytest
import synth

from conftest import described
from gmb.report import answers, feature_figures, render_text, scaling, tables
from gmb.report.answers_words import feature_sentence
from gmb.results.model import Results
from gmb.results.store import Store

K, M = 1 << 10, 1 << 20


def _coll(op: str, nbytes: int, ranks: int, us: float, path: str, spread: float = 0.01) -> dict:
    """A collective result whose time is ``us``, its interval +-``spread`` of it."""
    split = "equal-blocks" if op == "alltoall" else "whole"
    return {"schema": "gmb.record/1", "type": "result", "benchmark": "coll", "status": "ok", "bytes": nbytes,
            "operation": op, "ranks": ranks, "memory": {"root": "device", "others": "device"},
            "path": {"class": path, "link": path, "nominal_GBps": None},
            "size_convention": "total", "counts": {"split": split, "description": "synthetic"},
            "buffer_allocation": "once-per-launch", "headline": "busbw_GBps",
            "time_us": {**synth.stats(us), "median": us, "ci95_low": us * (1 - spread), "ci95_high": us * (1 + spread)},
            "busbw_GBps": {**synth.stats(nbytes / us / 1e3), "median": nbytes / us / 1e3}}


# each launch of a point moves its time by these (2 % launch noise, geometric mean 1): claims need launches
LAUNCH_FACTORS = (1.0, 0.98, 1 / 0.98)


class Campaign:
    """A store of collective launches as gmb run leaves them: each launch one node count (its ranks on that many
    hosts), in a scaling series or not; every block measured in ``launches`` launches (repetition rounds)."""

    def __init__(self, tmp_path, launches: int = 3):
        self.tmp, self.store, self.n, self.launches = tmp_path, Store(), 0, launches

    def launch(self, library: str, nodes: int, per_node: int, times: dict, scaling: str | None = "strong",
               env: dict | None = None, op: str = "allreduce"):
        for repetition, factor in enumerate(LAUNCH_FACTORS[:self.launches], start=1):
            self.n += 1
            run, ranks = f"r{self.n}", nodes * per_node
            ctx = synth.context(run, "coll", "Open MPI v5.0.7", world_size=ranks, cuda=True, env=env)
            for r in ctx["ranks"]:
                r["host"] = f"node{r['rank'] // per_node}"
            # the path among the ranks follows from the node count: one host's links, then the network as well
            path = "nvlink" if nodes == 1 else "mixed"
            recs = [{**_coll(op, b, ranks, us * factor, path), "run_id": run} for b, us in times.items()]
            f = synth.write_jsonl(self.tmp / f"{run}.jsonl", [ctx, *recs])
            self.store.record_launch(launch_id=run, library=library, benchmark="coll", repetition=repetition,
                                     ranks=ranks, status="ok", nodes=nodes, scaling=scaling)
            self.store.ingest(f, library=library, launch_id=run, repetition=repetition)

    def results(self) -> Results:
        return Results.load(described(self.store))


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_configurations_of_one_library_are_series_of_their_own(tmp_path):
    """Two settings of one library, one growing 1.2x and the other 2.0x: two series, never one of 3.5x (the fewest
    nodes of one against the most of the other)."""
    c = Campaign(tmp_path)
    for setting, (one, two) in {"1": (4.0, 4.8), "2": (7.0, 14.0)}.items():
        c.launch("ompi", 1, 2, {M: one}, env={"UCX_RNDV_THRESH": setting})
        c.launch("ompi", 2, 2, {M: two}, env={"UCX_RNDV_THRESH": setting})
    results = c.results()
    got = {s.configuration: round(s.growth.value, 2) for s in scaling.series(results)}
    assert got == {"ompi [UCX_RNDV_THRESH=1]": 1.2, "ompi [UCX_RNDV_THRESH=2]": 2.0}
    text = _flat(render_text.answers_text(answers.answers(results)))
    assert ("allreduce (device), strong scaling (S fixed) at 1M, 1 -> 2 nodes, 2 ranks per node: time growth "
            "ompi [UCX_RNDV_THRESH=1] 1.20x") in text
    assert "ompi [UCX_RNDV_THRESH=1] scales best" in text


def test_a_size_not_measured_at_every_node_count_is_never_mixed_with_another(tmp_path):
    """1M measured on 1 node only (refused on 2): the growth is 16M's at both counts (1.11x), not 1M on 1 node
    against 16M on 2; 1M is a row of its own, 'not measured' on 2 nodes."""
    c = Campaign(tmp_path)
    c.launch("ompi", 1, 2, {M: 500.0, 16 * M: 900.0})
    c.launch("ompi", 2, 2, {16 * M: 1000.0})
    results = c.results()
    (t,) = [t for t in tables.all_tables(results) if t.title.startswith("Collectives over node counts")]
    col = {name: i for i, name in enumerate(t.columns)}
    rows = {r[col["size"]]: r for r in t.rows}
    assert set(rows) == {"1M", "16M"}
    assert rows["16M"][col["time growth, fewest -> most nodes [interval]"]].startswith("1.11x [")
    assert rows["1M"][col["2 nodes"]] == "not measured"
    assert rows["1M"][col["time growth, fewest -> most nodes [interval]"]] == "one node count: no growth"
    text = _flat(render_text.answers_text(answers.answers(results)))
    assert "strong scaling (S fixed) at 16M, 1 -> 2 nodes, 2 ranks per node: time growth ompi 1.11x" in text
    assert "2.00x" not in text and "at 1M, 1 -> 2" not in text


def test_scales_best_is_judged_per_size_and_names_it(tmp_path):
    """a grows least at 1M, b at 16M: each answer names its size and node counts and its own best."""
    c = Campaign(tmp_path)
    for lib, at_1m, at_16m in (("a", (10.0, 11.0), (100.0, 200.0)), ("b", (10.0, 20.0), (100.0, 110.0))):
        c.launch(lib, 1, 4, {M: at_1m[0], 16 * M: at_16m[0]})
        c.launch(lib, 4, 4, {M: at_1m[1], 16 * M: at_16m[1]})
    said = [feature_sentence(f) for f in answers.answers(c.results()).features if f.topic == "scaling"]
    assert len(said) == 2
    (small,) = [s for s in said if " at 1M, 1 -> 4 nodes, 4 ranks per node" in s]
    (large,) = [s for s in said if " at 16M, 1 -> 4 nodes, 4 ranks per node" in s]
    assert small.endswith("a scales best") and large.endswith("b scales best")


def test_overlapping_growths_name_no_best(tmp_path):
    c = Campaign(tmp_path)
    for lib in ("a", "b"):
        c.launch(lib, 1, 2, {M: 10.0})
        c.launch(lib, 2, 2, {M: 12.0 if lib == "a" else 12.1})
    (said,) = [feature_sentence(f) for f in answers.answers(c.results()).features if f.topic == "scaling"]
    assert said.endswith("none proven to scale best (the growths' ratio not proven below 1, or a point carries no claim)")


def test_weak_scaling_series_keeps_each_ranks_share_and_says_so(tmp_path):
    """alltoall under weak scaling: S grows with the ranks (1M on 2 ranks, 2M on 4): one series of 512K per rank,
    named as weak scaling, not a size sweep."""
    c = Campaign(tmp_path)
    c.launch("ompi", 1, 2, {M: 100.0}, scaling="weak", op="alltoall")
    c.launch("ompi", 2, 2, {2 * M: 180.0}, scaling="weak", op="alltoall")
    (s,) = scaling.series(c.results())
    assert (s.scaling, s.size, s.nodes) == ("weak", "512K per rank (1M at 2 ranks)", (1, 2))
    assert s.growth.value == pytest.approx(1.8) and s.growth.low < 1.8 < s.growth.high
    text = _flat(render_text.answers_text(answers.answers(c.results())))
    assert "alltoall (device), weak scaling (each rank's share of S fixed) at 512K per rank (1M at 2 ranks)" in text


def test_the_scaling_figure_draws_one_line_per_series_over_node_counts(tmp_path):
    """Two configurations at two sizes over 1, 2 and 4 nodes: four lines, each over the three node counts (the old
    figure split a series by its '[N hosts]' name into one-point lines)."""
    c = Campaign(tmp_path)
    for lib in ("a", "b"):
        for nodes in (1, 2, 4):
            c.launch(lib, nodes, 2, {M: 10.0 * nodes, 16 * M: 100.0 * nodes})
    fig = feature_figures.scaling(c.results())
    lines = fig.axes[0].get_lines()
    assert len(lines) == 4
    assert all(list(line.get_xdata()) == [1, 2, 4] for line in lines)
    assert fig.axes[0].get_xlabel() == "nodes"


def test_size_sweep_at_a_fixed_node_count_names_the_crossover(tmp_path):
    """At 2 nodes, a is faster up to 64K, none proven fastest at 256K, b faster from 1M: the table and the answers name
    the fastest by size and the crossover between 64K and 1M, as a size sweep at 2 nodes (not weak scaling)."""
    c = Campaign(tmp_path)
    c.launch("a", 2, 4, {K: 5.0, 64 * K: 20.0, 256 * K: 60.0, M: 300.0, 16 * M: 4000.0}, scaling=None)
    c.launch("b", 2, 4, {K: 9.0, 64 * K: 30.0, 256 * K: 60.3, M: 200.0, 16 * M: 2500.0}, scaling=None)
    results = c.results()
    (t,) = [t for t in tables.all_tables(results) if t.title == "Collectives: size sweep at a fixed node count"]
    (row,) = t.rows
    col = {name: i for i, name in enumerate(t.columns)}
    assert row[col["nodes"]] == 2 and row[col["ranks per node"]] == 4
    assert row[col["fastest by size"]] == "a fastest at 1K-64K; none proven fastest at 256K; b fastest at 1M-16M"
    assert row[col["crossover sizes"]] == "a -> b between 64K and 1M"
    assert "not gmb's weak scaling" in t.note
    assert not [t for t in tables.all_tables(results) if t.title.startswith("Collectives over node counts")]
    text = _flat(render_text.answers_text(answers.answers(results)))
    assert ("allreduce (device), size sweep at 2 nodes, 4 ranks per node: a fastest at 1K-64K; none proven fastest at "
            "256K; b fastest at 1M-16M; crossover a -> b between 64K and 1M") in text
    fig = feature_figures.size_sweep(results)
    assert fig.axes[0].get_title() == "allreduce device, size sweep at 2 nodes, 4 ranks per node"
    assert len(fig.axes[0].get_lines()) == 2


def test_a_size_sweep_of_one_configuration_claims_nothing(tmp_path):
    c = Campaign(tmp_path)
    c.launch("a", 1, 2, {K: 5.0, M: 300.0}, scaling=None)
    results = c.results()
    (t,) = [t for t in tables.all_tables(results) if t.title == "Collectives: size sweep at a fixed node count"]
    assert "fastest by size" not in t.columns and "one configuration measured it" in t.note
    assert not [f for f in answers.answers(results).features if f.topic == "size sweep"]


def test_growths_are_compared_as_a_ratio_of_ratios_not_by_intervals_apart(tmp_path):
    """a grows 1.20x, b 1.30x, each over 3 launches at 2 % launch noise: their growth intervals overlap (each about
    +-6 %), yet the ratio of the two growths (0.923, its interval from both growths' launches) is proven below 1:
    a scales best. Equal growths are not called."""
    c = Campaign(tmp_path)
    for lib, grown in (("a", 12.0), ("b", 13.0)):
        c.launch(lib, 1, 2, {M: 10.0})
        c.launch(lib, 2, 2, {M: grown})
    series = {s.configuration: s.growth for s in scaling.series(c.results())}
    a, b = series["a"], series["b"]
    assert a.high > b.low  # the intervals overlap: the old rule called nothing
    (said,) = [feature_sentence(f) for f in answers.answers(c.results()).features if f.topic == "scaling"]
    assert said.endswith("; a scales best")
    (tmp_path / "same").mkdir()
    c = Campaign(tmp_path / "same")
    for lib in ("a", "b"):
        c.launch(lib, 1, 2, {M: 10.0})
        c.launch(lib, 2, 2, {M: 12.0})
    (said,) = [feature_sentence(f) for f in answers.answers(c.results()).features if f.topic == "scaling"]
    assert "scales best" not in said.replace("none proven to scale best", "")
