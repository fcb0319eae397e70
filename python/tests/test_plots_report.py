# SPDX-License-Identifier: BSD-3-Clause
import base64
import re
from html.parser import HTMLParser

import pytest

from gmb.report import drawing, plots, transfer_figures
from gmb.report import html as report
from gmb.report import tables
from gmb.results.model import Results
from gmb.results.points import combine
from gmb.results.store import Store
from gmb.report.cells import collective_results

PNG = b"\x89PNG\r\n\x1a\n"


def test_every_figure_with_data_is_a_png(store):
    figs = {fid: png for fid, _, png in plots.render_all(Results.load(store))}
    for fid in ("latency", "bw", "bibw", "coll", "sweep", "overlap"):
        assert figs[fid] is not None and figs[fid].startswith(PNG), fid
        assert len(figs[fid]) > 5000  # not an empty canvas
    # no data for these in the fixture (its collectives ran on one host: no series over node counts): skipped cleanly
    assert figs["managed"] is None and figs["halo"] is None and figs["mbw"] is None and figs["scaling"] is None


def test_figures_skip_on_empty_store():
    s = Store()
    assert all(png is None for _, _, png in plots.render_all(Results.load(s)))


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.tables, self.cells, self._in_td = [], 0, [], False

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.imgs.append(dict(attrs)["src"])
        elif tag == "table":
            self.tables += 1
        elif tag == "td":
            self._in_td = True

    def handle_endtag(self, tag):
        if tag == "td":
            self._in_td = False

    def handle_data(self, data):
        if self._in_td:
            self.cells.append(data)


def test_report_is_self_contained_with_numbers_and_images(store, tmp_path):
    out = report.write_report(Results.load(store), tmp_path / "r.html")
    html = out.read_text()
    p = _Collect()
    p.feed(html)
    assert len(p.imgs) >= 6  # latency in one figure over every size (log axes)
    for src in p.imgs:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG)
    assert p.tables >= 4
    numbers = [c for c in p.cells if re.fullmatch(r"\d+(\.\d+)?", c.strip())]
    assert len(numbers) > 50
    assert "Fraction of peak" in html and "openmpi-5.0.7" in html and "mpich-4.0.2" in html
    assert "src=\"http" not in html and "src='http" not in html  # nothing external


def test_report_refuses_to_overwrite(store, tmp_path):
    out = tmp_path / "r.html"
    out.write_text("keep me")
    with pytest.raises(FileExistsError):
        report.write_report(Results.load(store), out)
    assert out.read_text() == "keep me"


def test_report_shows_the_settings_that_matter(store):
    """The settings each library's GPU support depends on (found by `gmb run` with the engine's doctor) are a table
    of the report, next to the libraries; a library where none mattered says what was tried."""
    import json

    store.set_meta("settings_that_matter", json.dumps([
        {"library": "ompi-ucx", "as_configured": "aware (proved)", "tried": ["without UCX_MEMTYPE_CACHE=n"],
         "findings": [{"setting": "UCX_MEMTYPE_CACHE=n", "kind": "needed", "as_configured": "aware (proved)",
                       "changed": "not aware (the awareness proof crashed (signal 11))",
                       "effect": "needed: without it the doctor says not aware (the awareness proof crashed (signal 11))"}]},
        {"library": "ompi-ob1", "as_configured": "aware (proved)", "tried": ["without --mca pml ob1"], "findings": []}]))
    html = report.build_html(Results.load(store))
    section = html[html.index("<h3>Settings that matter</h3>"):html.index("<h2>Tables</h2>")]
    assert "UCX_MEMTYPE_CACHE=n" in section and "needed: without it the doctor says not aware" in section
    assert "ompi-ob1" in section and "no change to the doctor&#x27;s answer (without --mca pml ob1)" in section
    assert html.index("<h2>Libraries</h2>") < html.index("<h3>Settings that matter</h3>")
    assert "Settings that matter" not in report.build_html(Results.load(Store()))  # nothing checked: no section


# ------------------------------------------------------------------ report hygiene
def _page_text(html: str) -> str:
    """The report without its embedded images."""
    return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", html)


def _section(html: str, start: str, end: str) -> str:
    return html[html.index(start):html.index(end, html.index(start))]


@pytest.mark.parametrize("which", ["gpu_store", "host_store", "gpu_quick_store", "gpu_quick_mpi4_store"])
def test_report_shows_no_raw_python_values_and_no_empty_cells(which, request):
    html = _page_text(report.build_html(Results.load(request.getfixturevalue(which))))
    assert not re.findall(r"\b(True|False|None)\b", html)
    assert not re.findall(r"<td[^>]*>\s*</td>", html)  # every cell holds a value or says why not
    peak = _section(html, "<h3>Fraction of peak</h3>", "</table>")
    assert "<td" in peak and not re.findall(r"<td[^>]*>\s*</td>", peak)
    assert "geometric mean of the launch medians" in peak and "no figure of one launch is said faster" in peak
    assert "<th>launches (context records)</th>" in html


def test_machine_section_in_words(gpu_store, host_store):
    gpu = _section(report.build_html(Results.load(gpu_store)), "<h2>Machine</h2>", "<h2>Libraries</h2>")
    assert "CUDA: runtime 13.0, driver 13.0" in gpu and "CUDA build: yes" in gpu
    host = _section(report.build_html(Results.load(host_store)), "<h2>Machine</h2>", "<h2>Libraries</h2>")
    assert "CUDA build: no" in host and "CUDA: none (engine built without CUDA)" in host
    assert "GPUs: none recorded" in host


def test_machine_section_says_when_cuda_found_no_driver(tmp_path):
    """A CUDA build on a machine without a CUDA driver: the engine records driver_version "no driver"."""
    import synth

    ctx = synth.context("n", "latency", "Open MPI v5.0.7", cuda=True)
    ctx["cuda"] = {"runtime_version": "12.4", "driver_version": "no driver", "device_count": 0}
    ctx["tool"]["git_revision"] = None
    st = Store()
    st.ingest(synth.write_jsonl(tmp_path / "n.jsonl", [ctx, *synth.pt2pt_results("n", "latency", [1], "host", "host",
                                                                                 "host")]))
    machine = _section(report.build_html(Results.load(st)), "<h2>Machine</h2>", "<h2>Libraries</h2>")
    assert "runtime 12.4, no CUDA driver" in machine and "driver no driver" not in machine
    assert "(revision not recorded)" in machine and "None" not in machine


def test_environment_shows_the_settings_and_folds_the_rest(gpu_store):
    """The libraries table shows the variables that change MPI/UCX/NCCL/CUDA behaviour; the others (container
    labels such as NVIDIA_REQUIRE_CUDA, paths) are behind a fold that says how many; launcher wiring is left out."""
    html = report.build_html(Results.load(gpu_store))
    libs = _section(html, "<table id=\"libraries\">", "</table>")
    row = next(r for r in libs.split("<tr>") if r.startswith("<td>openmpi-4.1.6</td>"))
    shown, _, folded = row.partition("<details>")
    assert "NVIDIA_REQUIRE_CUDA=" in folded and "NVIDIA_REQUIRE_CUDA" not in shown
    assert "LD_LIBRARY_PATH=" in folded
    for setting in ("OMPI_MCA_hwloc_base_binding_policy=none", "NCCL_NVLS_ENABLE=0", "OMPI_MCA_plm=isolated"):
        assert setting in shown
    assert re.search(r"<summary>\d+ other variables</summary>", folded)
    outside_folds = re.sub(r"<details>.*?</details>", "", html, flags=re.S)
    assert "NVIDIA_REQUIRE_CUDA" in html and "NVIDIA_REQUIRE_CUDA" not in outside_folds  # only ever inside a fold
    for wiring in ("OMPI_COMM_WORLD_RANK", "OMPI_ARGV", "OMPI_WORLD_SIZE", "PMIX_"):
        assert wiring not in libs
    recent = next(r for r in libs.split("<tr>") if r.startswith("<td>openmpi-5.0.7</td>"))
    recent_shown, _, recent_folded = recent.partition("<details>")
    assert "OMPI_MCA_pml=ob1" in recent_shown and "OMPI_MCA_btl=smcuda,self" in recent_shown
    assert "CUDA_VERSION=" in recent_folded and "CUDA_VERSION" not in recent_shown  # an image's label, no setting
    assert "OMPI_MCA_PREFIXES" not in libs


def test_cpu_lists():
    assert report.cpu_list("0-3,8,10-11") == {0, 1, 2, 3, 8, 10, 11}
    assert report.cpu_list("5") == {5}
    assert report.cpu_list("unknown") is None and report.cpu_list(None) is None


def test_oversubscribed_runs_are_warned_about(tmp_path, gpu_store):
    """Four ranks bound to CPUs 0-1 of one host share them: the report warns. Ranks whose affinity lists together
    hold at least as many CPUs as there are ranks (the real H200 runs: every rank on 0-63), or whose list is
    unknown, are not flagged."""
    import synth

    ctx = synth.context("o", "coll", "Open MPI v5.0.7", world_size=4)
    for r in ctx["ranks"]:
        r["cpu_binding"] = "0-1"
    unknown = synth.context("u", "coll", "Open MPI v5.0.7", world_size=4)
    unknown["ranks"][0]["cpu_binding"] = "unknown"
    for r in unknown["ranks"][1:]:
        r["cpu_binding"] = "0"
    assert report.oversubscribed(ctx) == [("node0", 4, 2)] and report.oversubscribed(unknown) == []
    assert report.oversubscribed(synth.context("b", "bw", world_size=2)) == []  # bound to 0 and 1
    st = Store()
    for c in (ctx, unknown):
        st.ingest(synth.write_jsonl(tmp_path / f"{c['run_id']}.jsonl",
                                    [c, *synth.coll_results(c["run_id"], ["allreduce"], [1024], 4)]))
    machine = _section(report.build_html(Results.load(st)), "<h2>Machine</h2>", "<h2>Libraries</h2>")
    assert "Ranks oversubscribed the CPUs" in machine
    assert "openmpi-5.0.7 coll on node0: 4 ranks on 2 CPU(s), 1 run(s)" in machine
    assert "oversubscribed" not in report.build_html(Results.load(gpu_store))


def test_build_html_is_a_list_of_sections(gpu_store):
    """The sections come in order, each its own part: Machine, Libraries, Tables, Figures."""
    html = report.build_html(Results.load(gpu_store))
    at = [html.index(h) for h in ("<h2>Machine</h2>", "<h2>Libraries</h2>", "<h2>Tables</h2>", "<h2>Figures</h2>")]
    assert at == sorted(at) and html.rstrip().endswith("</body></html>")


# ------------------------------------------------------------------ figure axes
def test_size_axis_range_and_ticks():
    lo, hi = drawing.size_axis_range([1024, 1 << 20])
    assert 512 < lo < 1024 and (1 << 20) < hi < (2 << 20)  # the sizes drawn, a margin short of the next power
    assert drawing.size_ticks(*drawing.size_axis_range([1, 1 << 20])) == [1, 32, 1 << 10, 32 << 10, 1 << 20]
    assert drawing.size_ticks(*drawing.size_axis_range([64 << 10, 64 << 20])) == [
        64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
    assert drawing.size_ticks(*drawing.size_axis_range([8, 8])) == [8]


def test_bandwidth_axis_ends_where_the_data_ends(tmp_path):
    """bw measured up to 1 MiB with ceilings measured at 1 MiB and 64 MiB (the real H200 peaks): the x axis ends
    at 1 MiB, not at the 64 MiB ceiling, and its ticks read 1, 32, 1K, 32K, 1M."""
    import matplotlib.pyplot as plt
    import synth
    from conftest import DATA

    st = Store()
    st.ingest(DATA / "h200-x2" / "peaks.jsonl")
    st.ingest(synth.write_jsonl(tmp_path / "bw.jsonl", [
        synth.context("b", "bw", "Open MPI v5.0.7", cuda=True),
        *synth.pt2pt_results("b", "bw", synth.pow2_sizes(1, 1 << 20), "device", "device", "nvlink")]))
    fig = transfer_figures.bandwidth(Results.load(st), "bw")
    try:
        (ax,) = fig.axes
        lo, hi = ax.get_xlim()
        assert (lo, hi) == pytest.approx(drawing.size_axis_range([1, 1 << 20]))
        assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "32", "1K", "32K", "1M"]
        assert all(x <= hi for line in ax.get_lines() for x in line.get_xdata())  # no ceiling drawn beyond
    finally:
        plt.close(fig)


def test_each_collectives_panel_spans_its_own_sizes(store):
    import matplotlib.pyplot as plt

    fig = transfer_figures.collectives(Results.load(store))
    try:
        panels = {ax.get_title(): ax.get_xlim() for ax in fig.axes if ax.get_title()}
        sizes = {op: [p.bytes for p in combine(collective_results(Results.load(store))) if p.operation == op]
                 for op in panels}
        for op, lim in panels.items():
            assert lim == pytest.approx(drawing.size_axis_range(sizes[op])), op
    finally:
        plt.close(fig)


def test_the_report_opens_with_its_answers(gpu_store):
    page = report.build_html(Results.load(gpu_store))
    body = page.split("<body>", 1)[1]
    assert body.index('<section id="answers">') < body.index("<h2>Machine</h2>")
    answers = body.split('<section id="answers">', 1)[1].split("</section>", 1)[0]
    assert "NVLink pair" in answers and "% of ceiling" in answers.replace("&nbsp;", " ")
