# SPDX-License-Identifier: BSD-3-Clause
"""The report's Settings section: what `gmb tune` stored as the store's meta "tune" (tune.json), in tables and a
figure; no section for any other store."""

import base64
import json
import re
from pathlib import Path

import pytest

from gmb.errors import UsageError
from gmb.report import html as report
from gmb.report.settings import gain_text
from gmb.results.model import Results
from gmb.results.store import Store

from conftest import check_report_in_chromium

PNG = b"\x89PNG\r\n\x1a\n"
CPU_SAMPLE = Path(__file__).parent / "data" / "tune-sample-cpu.json"  # gmb tune on a CPU machine, 2026-11-26
OB1, UCX = "openmpi-5.0.7-ob1", "openmpi-5.0.7-ucx"
COMMAND = "mpirun --mca pml ucx -x UCX_RNDV_THRESH=8192 ..."
EXPORT = "export OMPI_MCA_pml=ucx UCX_RNDV_THRESH=8192"


def _fig(median, launches=3, spread=0.02):
    return [median, median * (1 - spread), median * (1 + spread), launches]


def _arm(key, verdict, gain, at, launches=3, state="cut", why="", figures=None):
    knob, _, value = key.partition("=")
    return {"key": key, "knob": None if key == "defaults" else knob, "settings": {} if key == "defaults" else
            {knob: value}, "state": state, "why": why, "verdict": verdict, "best_gain": gain, "best_bytes": at,
            "launches": launches, "figures": figures if figures is not None else {str(at): _fig(10.0 * gain)}}


def _race(conf, path, arms, recommendation, metric="bw", note=""):
    unit = "GB/s" if metric == "bw" else "us"
    return {"configuration": conf, "path": path, "kind": path, "metric": metric, "unit": unit,
            "higher_is_better": metric == "bw", "benchmark": "bw" if metric == "bw" else "latency",
            "sizes": [65536, 1048576, 4194304], "note": note, "arms": arms, "recommendation": recommendation}


def _offer(knob, values, default="auto", refused=None, together=None):
    return {"knob": knob, "layer": "ucx", "paths": ["nvlink", "host"], "why": f"what {knob} changes",
            "default": default, "values": values, "refused": refused, "note": "listed by ucx_info -c",
            "source": "catalogue", "together": together or {}}


def synthetic_answer() -> dict:
    """Two configurations of one Open MPI: on ucx one knob value won over 1M-4M (with its ready lines), one broke,
    others were cut; on ob1 nothing beat the defaults and the search ended early; the two compared at 4M."""
    ucx_arms = [
        _arm("defaults", "baseline", 1.0, 4194304, state="final"),
        _arm("UCX_RNDV_THRESH=8192", "better", 1.421, 4194304, state="final"),
        _arm("UCX_RNDV_THRESH=65536", "no difference", 1.004, 1048576),
        _arm("UCX_RNDV_SCHEME=put_zcopy", "broken", 1.0, None, launches=1, state="broken",
             why="the receiver's buffer check failed (wrong data at byte 0)", figures={}),
        _arm("UCX_PROTO_ENABLE=y", "cut early (looked worse)", 0.62, 65536, launches=1,
             why="no better than the defaults at any size after 1 launch(es)"),
    ]
    ucx_recommendation = [
        {"low": 65536, "high": 65536, "arm": "defaults", "settings": {},
         "sizes": [{"bytes": 65536, "gain": 1.0, "arm": _fig(5.0), "defaults": _fig(5.0)}]},
        {"low": 1048576, "high": 4194304, "arm": "UCX_RNDV_THRESH=8192", "settings": {"UCX_RNDV_THRESH": "8192"},
         "sizes": [{"bytes": 1048576, "gain": 1.2, "arm": _fig(12.0), "defaults": _fig(10.0)},
                   {"bytes": 4194304, "gain": 1.421, "arm": _fig(12.1, spread=0.025), "defaults": _fig(8.515)}],
         "command": COMMAND, "export": EXPORT}]
    ob1_arms = [_arm("defaults", "baseline", 1.0, 4194304, state="final"),
                _arm("OMPI_MCA_btl_sm_eager_limit=65536", "worse", 0.8, 65536, state="cut")]
    ob1_recommendation = [{"low": 65536, "high": 4194304, "arm": "defaults", "settings": {},
                           "sizes": [{"bytes": 4194304, "gain": 1.0, "arm": _fig(9.0), "defaults": _fig(9.0)}]}]
    return {
        "budget_s": 600.0, "used_s": 612.4, "rounds": 3, "launches": 41, "cut_short": True, "min_launches": 3,
        "precision": [0.05, 0.03, 0.02],
        "configurations": [
            {"name": UCX, "offers": [_offer("UCX_RNDV_THRESH", ["8192", "65536"]),
                                     _offer("UCX_RNDV_SCHEME", ["put_zcopy"]), _offer("UCX_PROTO_ENABLE", ["y"], "n"),
                                     _offer("UCX_MAX_RNDV_RAILS", [], None, refused="one host: no network path")]},
            {"name": OB1, "offers": [_offer("OMPI_MCA_btl_sm_eager_limit", ["65536"], "4096",
                                            together={"OMPI_MCA_btl": "self,sm"})]}],
        "skipped": [["nccl-2.21", "tune", "no knob of NCCL applies to one GPU"]],
        "races": [_race(UCX, "nvlink", ucx_arms, ucx_recommendation),
                  _race(OB1, "nvlink", ob1_arms, ob1_recommendation, note="the budget ran out")],
        "comparisons": [{"path": "nvlink", "bytes": 4194304, "best": OB1, "unit": "GB/s",
                         "ranking": [{"configuration": OB1, "figure": _fig(9.0), "behind": 1.0, "ahead_of": [UCX]},
                                     {"configuration": UCX, "figure": _fig(8.515), "behind": 1.057, "ahead_of": []}]},
                        {"path": "nvlink", "bytes": 65536, "best": UCX, "unit": "GB/s",
                         "ranking": [{"configuration": UCX, "figure": _fig(5.0), "behind": 1.0, "ahead_of": []},
                                     {"configuration": OB1, "figure": _fig(4.95), "behind": 1.01, "ahead_of": []}]}],
        "tuned": [{"name": f"{UCX}-tuned", "base": UCX, "settings": {"UCX_RNDV_THRESH": "8192"},
                   "paths": ["nvlink"]}]}


def _report(answer: dict, store: Store | None = None) -> str:
    store = store or Store(":memory:")
    store.set_meta("tune", json.dumps(answer))
    return report.build_html(Results.load(store))


def _settings(html: str) -> str:
    return html[html.index("<section id='tune'>"):html.index("</section>", html.index("<section id='tune'>"))]


def _answers(html: str) -> str:
    return html[html.index('<section id="answers">'):html.index("</section>", html.index('<section id="answers">'))]


def _text(html: str) -> str:
    """The section's words, tags and images left out."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", html)))


def test_the_settings_section_says_what_tune_answered(tmp_path):
    html = _report(synthetic_answer())
    # the answer first: the search in a line, then the recommendation (settings, sizes, gain at its best size with
    # both figures and intervals, ready lines) and the tuned configurations
    first = _answers(html)
    said = _text(first).replace("&#x27;", "'")
    assert "612 s of its 600 s budget: 41 launches in 3 rounds" in said and "The budget ran out" in said
    assert "nccl-2.21: tune: no knob of NCCL applies to one GPU" in said
    assert "1M - 4M" in said and "UCX_RNDV_THRESH=8192" in said
    assert "+42.1 % at 4M" in said
    assert "12.1 GB/s [11.8, 12.4] vs 8.52 [8.34, 8.69], 3 launches each" in said
    assert f"<code class='ready'>{COMMAND}</code>" in first and f"<code class='ready'>{EXPORT}</code>" in first
    assert "defaults: no setting beat them" in said and f"{UCX}-tuned" in said
    section = _settings(html)
    words = _text(section).replace("&#x27;", "'")
    assert "<h2>Settings</h2>" in section
    # every knob value by verdict: the broken one with its reason, the ones cut early, the race that ended early
    for said in ("better", "no difference", "worse", "cut early (looked worse)",
                 "UCX_PROTO_ENABLE=y (-38.0 % at 64K, 1 launch)", "UCX_RNDV_THRESH=65536 (+0.4 % at 1M, 3 launches)",
                 "UCX_RNDV_SCHEME=put_zcopy: the receiver's buffer check failed (wrong data at byte 0)",
                 "ended early the budget ran out"):
        assert said in words, said
    # the configurations compared at their defaults
    comparison = _text(section[section.index("Configurations compared at their defaults"):])
    assert f"{OB1}: 9.00 GB/s [8.82, 9.18]" in comparison and f"{OB1} &gt; {UCX} (1.06x behind)" in comparison
    assert f"{UCX} ~ {OB1} (1.01x behind)" in comparison
    # the knobs offered and not, per configuration, folded
    assert f"<summary>{UCX}: 3 knobs offered, 1 not offered</summary>" in section
    assert "not offered: one host: no network path" in words and "8192, 65536" in words
    assert "65536, with OMPI_MCA_btl=self,sm" in words
    # the figure of the gains, a PNG
    img = re.search(r"id='fig-tune-gains'><img alt='[^']*' src='data:image/png;base64,([^']+)'", section)
    assert img and base64.b64decode(img.group(1)).startswith(PNG)
    assert not re.findall(r"\b(True|False|None)\b", _text(section))
    assert not re.findall(r"<td[^>]*>\s*</td>", section)  # every cell holds a value or says why not
    check_report_in_chromium(html, tmp_path)


def test_a_search_report_opens_with_its_recommendations_and_draws_no_answers_from_its_launches(store):
    """The first screen of a search's report is its recommendation per configuration and path; the knob values it
    launched (most cut after a launch or two) stay figures in the tables below, never claims such as "fastest"."""
    campaign = report.build_html(Results.load(store))  # a campaign's records: the answers drawn from them
    assert "<h3>Fraction of peak</h3>" in campaign and "Recommended settings" not in campaign
    html = _report(synthetic_answer(), store)
    assert html.index('<section id="answers">') < html.index("Recommended settings") < \
        html.index("<h2>Machine</h2>") < html.index("<h2>Libraries</h2>") < html.index("<h2>Settings</h2>") < \
        html.index("<h2>Tables</h2>")
    first = _text(_answers(html))
    assert "figures, not claims" in first
    assert not re.search(r"fastest|within one launch|moves \d|Fraction of peak", first)
    assert "id='fig-bw'" in html  # the launches' figures still drawn


def test_a_race_without_an_answer_says_why_instead_of_the_defaults():
    answer = synthetic_answer()
    answer["races"][1].update(recommendation=[], unanswered="not measured: the budget ran out before its defaults "
                                                            "were measured")
    answer["races"][1]["arms"][1].update(verdict="not measured", why="the budget ran out before its first launch")
    html = _report(answer)
    said = _text(_answers(html))
    assert f"{OB1} nvlink (bw, GB/s) none not measured: the budget ran out before its defaults were measured" in said
    assert "OMPI_MCA_btl_sm_eager_limit=65536: the budget ran out before its first launch" in _text(_settings(html))


def test_without_tune_there_is_no_settings_section(store):
    html = report.build_html(Results.load(store))
    assert "<h2>Settings</h2>" not in html and "id='tune'" not in html and "fig-tune" not in html


def test_no_figure_when_no_knob_value_was_measured():
    answer = synthetic_answer()
    for race in answer["races"]:
        race["arms"] = [a for a in race["arms"] if a["key"] == "defaults"]
    section = _settings(_report(answer))
    assert "fig-tune-gains" not in section and "No figure: no knob value was measured." in section
    assert "no knob value was tried" in section


def test_a_tune_answer_that_is_not_one_is_refused():
    for bad in ("{not json", json.dumps({"budget_s": 1})):
        store = Store(":memory:")
        store.set_meta("tune", bad)
        with pytest.raises(UsageError, match="tune answer"):
            report.build_html(Results.load(store))


def test_gains_in_words():
    assert gain_text(1.121) == "+12.1 %" and gain_text(0.62) == "-38.0 %" and gain_text(0.9997) == "+0.0 %"


def test_the_cpu_sample_renders(store, tmp_path):
    """A real answer of a CPU machine (one configuration, one path, nothing won) beside records of launches."""
    html = _report(json.loads(CPU_SAMPLE.read_text()), store)
    first = _text(_answers(html))
    assert "99 s of its 120 s budget: 14 launches in 3 rounds" in first and "budget ran out" not in first
    assert "defaults: no setting beat them" in first
    words = _text(_settings(html))
    assert "OMPI_MCA_btl_vader_single_copy_mechanism=none (-45.3 % at 8, 1 launch)" in words
    assert "openmpi-4.1.4: 9 knobs offered, 4 not offered" in words
    assert "fig-tune-gains" in html
    check_report_in_chromium(html, tmp_path)


def test_the_recommendations_table_gives_the_confirmed_gain_over_its_span_with_its_interval():
    from gmb.report.settings import recommendations_table
    race = {"configuration": "ompi-ob1", "path": "pageable host -> device", "benchmark": "bw", "unit": "GB/s",
            "recommendation": [{"arm": "btl_smcuda_max_send_size=1048576", "low": 1 << 20, "high": 4 << 20,
                                "settings": {"OMPI_MCA_btl_smcuda_max_send_size": "1048576"},
                                "command": "mpirun ...", "export": "export ...", "gain": 3.4, "gain_low": 3.1,
                                "gain_high": 3.7, "span": [1 << 20, 4 << 20],
                                "sizes": [{"bytes": 1 << 20, "gain": 3.9, "arm": None, "defaults": None}]}]}
    (row,) = recommendations_table({"races": [race]}).rows
    assert "+240.0 % [+210.0 %, +270.0 %] over 1M - 4M" in row  # the confirmation's, not the 3.9x of one size
