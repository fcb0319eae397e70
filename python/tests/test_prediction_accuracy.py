# SPDX-License-Identifier: BSD-3-Clause
"""The accuracy benchmark's arithmetic (gmb.app.accuracy) on gmb app summaries: the median relative error of the
predicted communication, the pairs of configurations whose order was predicted right, the coverage of the predicted
intervals, the configurations that cannot run an application, and the table written from them; and the prediction's
receives and waits (gmb.app.predict) on profiles recorded on the CPU machine."""

import json

import pytest
from conftest import DATA

from gmb.app import accuracy, predict
from gmb.app.accuracy import OWN_CALLS, PREDICTED, Application
from gmb.results.profile import load_profile, needs


def _row(conf, measured, predicted, own, complete=True, launches=4, spread=0.1, busy=0):
    """One configuration of gmb app's app.json: measured MPI time (s) with an interval of +-spread, and a prediction
    whose interval is +-5 %."""
    return {"configuration": conf, "launches": launches, "failed": 0, "busy_runs": busy,
            "mpi_s": {"value": measured, "low": measured * (1 - spread), "high": measured * (1 + spread),
                      "launches": launches} if measured else None,
            "predicted_s": {"complete": complete, "predicted_s": predicted, "low_s": predicted * 0.95,
                            "high_s": predicted * 1.05, "own_calls_s": own, "own_calls_low_s": own * 0.95,
                            "own_calls_high_s": own * 1.05}}


def _apps():
    melt = Application("melt", "halo", {"configurations": [
        _row("vader", 0.050, 0.049, 0.014),  # the profiled one: 2 % off
        _row("tcp", 0.090, 0.099, 0.062),  # 10 % over, inside its measured interval's reach
        _row("nocma", 0.060, 0.080, 0.029, busy=2)]},  # 33 % over; 2 of its runs beside other work
        cannot_run={"mpich": "links libmpi.so.40"}, profiled_under="vader")
    halo = Application("halo", "stencil", {"configurations": [
        _row("vader", 0.100, 0.100, 0.010),
        _row("tcp", 0.150, 0.140, 0.030, spread=0.2),
        _row("mpich", 0.120, 0.090, 0.007)]}, profiled_under="vader")  # predicted ahead of vader: wrong order
    return [melt, halo]


def test_scores_over_every_application_and_configuration():
    result = accuracy.accuracy(_apps())
    s = result["scores"]["all"][PREDICTED]
    errors = sorted([0.02, 0.1, 1 / 3, 0.0, 2 / 30, 0.25])
    assert s["cases"] == 6 and s["median_error"] == pytest.approx((errors[2] + errors[3]) / 2)
    # melt: vader < nocma < tcp measured; predicted vader 0.049 < nocma 0.080 < tcp 0.099: 3 of 3 right.
    # halo: vader < mpich < tcp measured; predicted mpich 0.090 < vader 0.100: 1 pair of 3 wrong.
    assert s["pairs"] == 6 and s["order_right"] == pytest.approx(5 / 6)
    # inside the +-5 % interval: melt vader (0.050 in [0.04655, 0.05145]), halo vader; not the others
    assert s["coverage"] == pytest.approx(2 / 6)
    assert s["overlap"] == pytest.approx(4 / 6)  # melt nocma and halo mpich lie apart from their predictions
    own = result["scores"]["all"][OWN_CALLS]
    assert own["median_error"] > 0.5 and own["coverage"] == 0.0
    # measured apart: only pairs whose measured intervals do not overlap
    apart = [p for p in result["pairs"] if p["measured_apart"]]
    assert s["pairs_apart"] == len(apart) and ("melt", "vader", "tcp") in {(p["application"], p["ahead"], p["behind"])
                                                                           for p in apart}


def test_the_profiled_configuration_is_scored_apart_and_one_that_cannot_run_is_said():
    result = accuracy.accuracy(_apps())
    cases = {(c["application"], c["configuration"]): c for c in result["cases"]}
    assert cases[("melt", "mpich")]["status"] == "cannot run: links libmpi.so.40"
    assert cases[("melt", "mpich")]["error"][PREDICTED] is None
    assert cases[("melt", "vader")]["profiled"] and not cases[("melt", "tcp")]["profiled"]
    others = result["scores"]["not profiled"][PREDICTED]
    assert others["cases"] == 4 and others["pairs"] == 2  # melt tcp-nocma, halo tcp-mpich
    table = accuracy.markdown(result)
    assert "| melt | mpich | 0 | cannot run: links libmpi.so.40 |" in table
    assert "| melt | vader (profiled) | 4 |" in table
    assert "(missed)" in table and "| gmb predict | 6 |" in table


def test_incomplete_predictions_failed_runs_and_summaries_written_before_receives_were_priced():
    old = _row("tcp", 0.09, 0.06, 0.06)
    for key in ("own_calls_s", "own_calls_low_s", "own_calls_high_s"):
        del old["predicted_s"][key]
    app = Application("old", "x", {"configurations": [
        _row("vader", 0.05, 0.014, 0.014), old, _row("nocma", 0.06, 0.03, 0.03, complete=False),
        {**_row("broken", None, 0.1, 0.1), "launches": 0, "failed": 4}]}, profiled_under="vader")
    result = accuracy.accuracy([app])
    cases = {c["configuration"]: c for c in result["cases"]}
    # an old summary holds the prediction of the own calls alone: scored under that model only
    assert set(cases["tcp"]["predicted"]) == {OWN_CALLS} and cases["tcp"]["error"][OWN_CALLS] == pytest.approx(1 / 3)
    assert cases["nocma"]["error"][PREDICTED] is None  # an incomplete prediction is not scored
    assert cases["broken"]["status"] == "no MPI time measured (4 of its runs failed)"
    assert result["scores"]["all"][PREDICTED]["cases"] == 1 and result["scores"]["all"][OWN_CALLS]["cases"] == 2
    assert result["scores"]["all"][PREDICTED]["order_right"] is None and result["scores"]["all"][OWN_CALLS]["pairs"] == 1
    assert "| old | broken | 0 | no MPI time measured (4 of its runs failed) |" in accuracy.markdown(result)


def test_an_application_without_runs_has_only_its_cannot_run_rows():
    result = accuracy.accuracy([Application("lost", "x", None, {"mpich": "links libmpi.so.40"}, "vader",
                                            {"failed": "gmb profile"})])
    assert [c["status"] for c in result["cases"]] == ["cannot run: links libmpi.so.40"]
    assert result["scores"]["all"][PREDICTED]["median_error"] is None
    assert "failed: gmb profile" in accuracy.markdown(result)


def test_cases_beside_other_work_are_scored_apart():
    """A case is quiet when neither its runs nor its application's profile ran on a busy host."""
    apps = _apps()
    apps[1].profile_busy = True
    result = accuracy.accuracy(apps)
    quiet = result["scores"]["quiet"][PREDICTED]
    assert quiet["cases"] == 2 and quiet["median_error"] == pytest.approx(0.06)  # melt vader 2 %, tcp 10 %
    assert quiet["pairs"] == 1 and quiet["order_right"] == 1.0
    table = accuracy.markdown(result)
    assert "| melt | nocma | 4, 2 busy |" in table and "| halo | stencil | vader (on a busy host) |" in table


# ------------------------------------------------------------------------------ the prediction on recorded profiles
RECORDED = DATA / "cpu-app-2026-12-08"  # this CPU machine's runs of scripts/prediction-accuracy (2 ranks)


def _flat(us: float) -> predict.Curve:
    """Every size one time per call (us), +-10 %."""
    return predict.Curve([(1, us, 0.9 * us, 1.1 * us), (1 << 24, us, 0.9 * us, 1.1 * us)])


def _priced(profile: dict, per_call: dict[str, float]) -> dict[str, predict.Prediction]:
    """The profile priced with each configuration's one time per call for every figure it needs."""
    have = {(conf, need): _flat(us) for conf, us in per_call.items() for need in needs(profile)}
    return {p.configuration: p for p in predict.predict_with(profile, have)}


def test_a_lammps_rank_waits_for_its_peer_in_its_sends_and_finds_its_messages_arrived():
    """LAMMPS melt under ompi-vader: each rank posts its receives before its sends, so a tenth at most of the
    messages it receives is waited for in its receives; its time in MPI beyond its calls and those receives is its
    wait, the same under every configuration. Under the profiled configuration the prediction is the profile's own
    MPI time; under another, that configuration's figures for the calls and the receives, and the same waits."""
    profile = load_profile(RECORDED / "lammps-melt")
    assert profile["library"] == "ompi-vader"
    preds = _priced(profile, {"ompi-vader": 1.0, "ompi-tcp": 4.0})
    vader, tcp = preds["ompi-vader"], preds["ompi-tcp"]
    shares = predict.received_shares(profile, vader)
    assert set(shares) == {0, 1} and all(0 < s < 0.2 for s in shares.values())
    mpi = predict.rank_mpi_s(profile)
    for rank, seconds in mpi.items():
        assert vader.per_rank_us[rank][0] == pytest.approx(1e6 * seconds)
        assert tcp.wait_us[rank] == vader.wait_us[rank] > 0.5 * vader.per_rank_us[rank][0]  # the waits dominate
        assert tcp.own_us[rank][0] == pytest.approx(4 * vader.own_us[rank][0])
        assert tcp.received_us[rank][0] == pytest.approx(4 * vader.received_us[rank][0])
    assert tcp.waits_from == "ompi-vader" and tcp.slowest[1] > vader.slowest[1]
    # its ten barriers are priced (coll barrier), not named as calls without a figure
    assert any(p.row["call"] == "MPI_Barrier" and p.need.operation == "barrier" for p in vader.priced)
    assert "MPI_Barrier" not in predict.unpriced_calls(profile)


def test_the_halo_waits_for_every_message_it_receives():
    """gmb's halo mini-app completes its receives in MPI_Waitall after its sends are posted: each rank waits there
    for all of the messages sent to it (a share of 1), which another configuration's figures price."""
    profile = load_profile(RECORDED / "halo")
    preds = _priced(profile, {"ompi-vader": 1.0, "mpich": 2.0})
    assert predict.received_shares(profile, preds["ompi-vader"]) == {0: 1.0, 1: 1.0}
    incoming = predict.incoming_us(preds["mpich"])
    assert all(preds["mpich"].received_us[r][0] == pytest.approx(incoming[r][0]) for r in (0, 1))


def test_without_the_profiled_configurations_figures_only_the_own_calls_are_priced():
    """The profile's waits are told from its transfers by the figures of the configuration it ran under: a store
    without them prices each rank's own calls alone, as gmb predict did before."""
    profile = load_profile(RECORDED / "lammps-melt")
    tcp = _priced(profile, {"ompi-tcp": 4.0})["ompi-tcp"]
    assert tcp.waits_from is None and not tcp.received_us and not tcp.wait_us
    assert tcp.slowest == tcp.own_slowest


def test_the_recorded_benchmark_scores_as_published():
    """The four applications' gmb app summaries of the run docs/application.md publishes in full (2026-12-08 02:15
    UTC), scored again: the figures of its table (accuracy.md beside them)."""
    apps = [Application(name, "", json.loads((RECORDED / name / "app.json").read_text()), profiled_under="ompi-vader",
                        profile_busy=name == "hpcc") for name in ("lammps-melt", "lammps-peptide", "halo", "hpcc")]
    result = accuracy.accuracy(apps)
    s, before = result["scores"]["all"][PREDICTED], result["scores"]["all"][OWN_CALLS]
    assert s["cases"] == before["cases"] == 14
    assert round(s["median_error"], 2) == 0.60 and round(before["median_error"], 2) == 0.90
    assert (s["pairs"], round(s["order_right"], 2), s["pairs_apart"]) == (18, 0.72, 6)
    assert round(s["coverage"], 2) == 0.14 and round(s["overlap"], 2) == 0.50
    assert result["scores"]["quiet"][PREDICTED]["cases"] == 3
    assert sum(c["busy_runs"] for c in result["cases"]) == 48
    def score_rows(text):
        return [line for line in text.splitlines() if line.startswith(("| gmb predict", "| own calls"))]
    assert score_rows(accuracy.markdown(result)) == score_rows((RECORDED / "accuracy.md").read_text())


def test_a_profile_beside_other_work_is_said_to_carry_the_hosts_waits():
    """A profile whose host was busy (its ``load``, as gmb run's launches record it) carries waits that other work
    lengthened: gmb predict says so beside the prediction."""
    from gmb.app.predicted import prediction_lines

    profile = load_profile(RECORDED / "lammps-melt")
    quiet = prediction_lines(list(_priced(profile, {"ompi-vader": 1.0}).values()), profile)
    assert not any(line.startswith("warning:") for line in quiet)
    profile["load"] = {"busy": True, "why": "other work kept 1.0 threads runnable on average beside 2 rank(s) on 2 "
                                            "CPU(s) (0 free)"}
    busy = prediction_lines(list(_priced(profile, {"ompi-vader": 1.0}).values()), profile)
    assert "warning: the profile ran on a busy host (other work kept 1.0 threads runnable" in "\n".join(busy)
