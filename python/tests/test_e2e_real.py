# SPDX-License-Identifier: BSD-3-Clause
"""End to end with the real engine: `gmb run --quick` with Debian's Open MPI and MPICH (host memory), one report
comparing both, and that report checked in headless Chromium. Skipped, with the reason, when cmake, one of the
two libraries or chromium is missing. Also: the Chromium checker itself, on a synthetic report."""

import base64
import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
from realmpi import debian_library, have_debian

from gmb.report import checkreport
from gmb.report import html as report
from gmb.cli import main
from gmb.results.model import Results

NEED_BOTH = pytest.mark.skipif(not (have_debian("openmpi") and have_debian("mpich")),
                               reason="needs cmake, g++ and both Debian MPIs (libopenmpi-dev, libmpich-dev)")
NEED_CHROMIUM = pytest.mark.skipif(checkreport.find_browser() is None,
                                   reason="chromium not installed (Debian: apt-get install chromium)")


@pytest.fixture(scope="module")
def quick_run(engine_env, tmp_path_factory):
    """One `gmb run --quick` over both Debian libraries (engines built into the session cache)."""
    if not (have_debian("openmpi") and have_debian("mpich")):
        pytest.skip("needs cmake, g++ and both Debian MPIs")
    out = tmp_path_factory.mktemp("quick")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GMB_SOURCE", str(engine_env["source"]))
        mp.setenv("GMB_CACHE", str(engine_env["cache"]))
        mp.setenv("GMB_ENABLE_CUDA", engine_env["cuda"])
        mp.setenv("HOME", str(out / "home"))  # no user config (~/.config/gmb) leaks in
        libs = [debian_library("openmpi").name, debian_library("mpich").name]
        argv = ["run", "--quick", "--results", str(out / "results"), "--no-progress", "--seed", "7",
                "--repetitions", os.environ.get("GMB_TEST_REPETITIONS", "1"), "--timeout", "300"]
        for name in libs:
            argv += ["--library", name]
        rc = main(argv)
    dirs = list((out / "results").iterdir())
    assert len(dirs) == 1
    return {"rc": rc, "dir": dirs[0], "libs": libs}


@NEED_BOTH
def test_quick_run_both_libraries(quick_run):
    d = quick_run["dir"]
    assert quick_run["rc"] == 0, (d / "plan.json").read_text()[:2000]
    assert (d / "report.html").is_file() and (d / "plan.json").is_file()
    db = sqlite3.connect(d / "store.sqlite")
    libs = {r[0] for r in db.execute("SELECT DISTINCT library FROM results WHERE status='ok' AND json_extract(json, '$.time_us.median') > 0")}
    assert libs == set(quick_run["libs"])
    statuses = {r[0] for r in db.execute("SELECT DISTINCT status FROM launches")}
    assert statuses <= {"ok", "unsupported"}
    html = (d / "report.html").read_text()
    for name in quick_run["libs"]:
        assert name in html
    assert "<img" in html


@NEED_BOTH
def test_host_copy_ceiling_is_the_fastest_thread_count(quick_run):
    """The host-memory ceiling keeps the fastest of 1, 2, 4, ... threads (waking many threads costs more than a small
    copy takes, which left the ceiling below a single MPI copy at 1 MiB) and names the count it kept."""
    db = sqlite3.connect(quick_run["dir"] / "store.sqlite")
    timings = [r[0] for r in db.execute("SELECT json_extract(json, '$.timing') FROM results "
                                        "WHERE operation = 'host-copy' AND status = 'ok'")]
    assert timings
    for timing in timings:
        assert re.search(r"memcpy by \d+ threads? bound to NUMA node \d+", timing), timing
        if (os.cpu_count() or 1) > 1:
            assert "(the fastest of 1, 2" in timing, timing


@NEED_BOTH
def test_collectives_say_what_ran(quick_run):
    """Each library's collective records say what ran: Open MPI the component its coll_base_verbose selected on the
    communicator (coll/tuned, whose algorithm a release build does not print: its fixed decision), MPICH its own
    selection (no control variable forces one); the report has the table of what ran."""
    db = sqlite3.connect(quick_run["dir"] / "store.sqlite")
    ran = [(lib, json.loads(r) if r else None) for lib, r in db.execute(
        "SELECT library, json_extract(json, '$.ran') FROM results WHERE benchmark = 'coll' AND status = 'ok'")]
    ompi, mpich = quick_run["libs"]
    assert ran and all(r == {"coll": "tuned: fixed decision"} for lib, r in ran if lib == ompi), ran
    assert all(r == {"mpich": "auto (MPICH's own selection)"} for lib, r in ran if lib == mpich), ran
    assert {lib for lib, _ in ran} == {ompi, mpich}
    assert "What ran: the protocol or algorithm behind each curve" in (quick_run["dir"] / "report.html").read_text()


@NEED_BOTH
def test_compare_the_two_libraries(quick_run, capsys):
    d = quick_run["dir"]
    ompi, mpich = quick_run["libs"]
    rc = main(["compare", str(d), str(d), "--a-library", ompi, "--b-library", mpich])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert re.search(r"\d+ matched: \d+ different", out.err)
    assert "latency" in out.out and "bw" in out.out


@NEED_BOTH
@NEED_CHROMIUM
def test_quick_report_in_chromium(quick_run, tmp_path):
    res = checkreport.check(quick_run["dir"] / "report.html", shot=tmp_path / "report.png")
    assert res["ok"], res["problems"]
    assert len(res["dom"]["images"]) >= 3 and all(i["w"] > 0 for i in res["dom"]["images"])
    assert (tmp_path / "report.png").stat().st_size > 10_000


@NEED_CHROMIUM
def test_checker_on_synthetic_reports(store, tmp_path):
    good = tmp_path / "good.html"
    report.write_report(Results.load(store), good, title="synthetic")
    res = checkreport.check(good)
    assert res["ok"], res["problems"]
    assert len(res["dom"]["images"]) >= 4 and res["screenshot"]["non_background_share"] > 0.01

    html = good.read_text()
    broken = tmp_path / "broken.html"  # one figure with a corrupt PNG, one number cell with garbage
    html = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+",
                  "data:image/png;base64," + base64.b64encode(b"not a png").decode(), html, count=1)
    html = re.sub(r'<td class="num">[^<]+</td>', '<td class="num">n/a</td>', html, count=1)
    broken.write_text(html)
    res = checkreport.check(broken)
    assert not res["ok"]
    assert any("did not load" in p for p in res["problems"])
    assert any("not numbers" in p for p in res["problems"])

    blank = tmp_path / "blank.html"
    blank.write_text("<html><head><title>x</title></head><body></body></html>")
    res = checkreport.check(blank)
    assert not res["ok"] and any("blank" in p for p in res["problems"])


@NEED_CHROMIUM
def test_report_of_recorded_gpu_records_in_chromium(gpu_quick_store, tmp_path):
    """The report of the quick campaign recorded on a GPU node (the repository's test data) in a real browser: it
    opens with its Answers, no empty cell, and every row with a measured ceiling gives its % of ceiling."""
    out = report.write_report(Results.load(gpu_quick_store), tmp_path / "gpu.html", title="recorded GPU records")
    res = checkreport.check(out, shot=tmp_path / "gpu.png")
    assert res["ok"], res["problems"]
    assert res["dom"]["answers"]["first"] and res["dom"]["answers"]["text_chars"] > 500
    peak = next(t for t in res["dom"]["tables"] if "% of ceiling" in t["headers"] and "ceiling GB/s" in t["headers"])
    assert peak["rows"] > 0 and peak["ceiling_without_pct"] == 0

    html = out.read_text()  # no Answers section; a measured ceiling without its % of ceiling; an empty cell
    html = re.sub(r'<section id="answers">.*?</section>', "", html, count=1, flags=re.S)
    head = re.search(r"<h3>Fraction of peak</h3>.*?<thead><tr>(.*?)</tr>", html, re.S).group(1)
    columns = re.findall(r"<th>(.*?)</th>", head)
    row = re.search(r"(<h3>Fraction of peak</h3>.*?<tbody>\s*<tr>)(.*?)(</tr>)", html, re.S)
    cells = re.findall(r"<td[^>]*>.*?</td>", row.group(2))
    cells[columns.index("% of ceiling")] = "<td>gone</td>"
    cells[0] = "<td></td>"
    html = html[:row.start(2)] + "".join(cells) + html[row.end(2):]
    hollow = tmp_path / "hollow.html"
    hollow.write_text(html)
    problems = checkreport.check(hollow)["problems"]
    assert "the report has no Answers section (id 'answers')" in problems
    assert any("with a measured ceiling and no % of ceiling" in p for p in problems)
    assert any("1 empty cell(s)" in p for p in problems)


@NEED_CHROMIUM
def test_first_screen_shows_the_first_figure(gpu_quick_store, tmp_path):
    """At 1400 x 900 the report's first figure (paths by configuration, id 'overview') lies whole on the first
    screen under the title, and the check keeps a screenshot of that screen; pushed below it, the check fails;
    without it, where the Answers have paths, the check says so."""
    out = report.write_report(Results.load(gpu_quick_store), tmp_path / "gpu.html", title="recorded GPU records")
    res = checkreport.check(out, first_screen=tmp_path / "first.png")
    assert res["ok"], res["problems"]
    first = res["dom"]["first_screen"]
    assert first["paths"] > 0 and first["overview"] and first["bottom"] <= checkreport.FIRST_SCREEN[1]
    stats = checkreport.blank_stats(tmp_path / "first.png")
    assert (stats["width"], stats["height"]) == checkreport.FIRST_SCREEN and stats["distinct_colours"] > 8

    html = out.read_text()
    pushed = tmp_path / "pushed.html"
    pushed.write_text(html.replace("<h2>Answers</h2>", "<h2>Answers</h2><div style='height:900px'>x</div>", 1))
    assert any("below the first screen" in p for p in checkreport.check(pushed)["problems"])
    gone = tmp_path / "gone.html"
    gone.write_text(re.sub(r"<figure id='overview'>.*?</figure>", "", html, count=1, flags=re.S))
    assert any("no first figure (id 'overview')" in p for p in checkreport.check(gone)["problems"])



def test_checker_without_browser(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("GMB_CHROMIUM", raising=False)
    (tmp_path / "r.html").write_text("<html></html>")
    assert checkreport.main([str(tmp_path / "r.html")]) == 2
