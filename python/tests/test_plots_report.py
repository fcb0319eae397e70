import base64
import re
from html.parser import HTMLParser

import pytest

from gmb import plots, report
from gmb.store import Store

PNG = b"\x89PNG\r\n\x1a\n"


def test_every_figure_with_data_is_a_png(store):
    figs = {fid: png for fid, _, png in plots.render_all(store)}
    for fid in ("latency-small", "latency-large", "bw", "bibw", "coll", "scaling", "overlap"):
        assert figs[fid] is not None and figs[fid].startswith(PNG), fid
        assert len(figs[fid]) > 5000  # not an empty canvas
    # no data for these in the fixture: skipped cleanly
    assert figs["managed"] is None and figs["halo"] is None and figs["mbw"] is None


def test_figures_skip_on_empty_store():
    s = Store()
    assert all(png is None for _, _, png in plots.render_all(s))


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
    out = report.write_report(store, tmp_path / "r.html")
    html = out.read_text()
    p = _Collect()
    p.feed(html)
    assert len(p.imgs) >= 7
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
        report.write_report(store, out)
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
    html = report.build_html(store)
    section = html[html.index("<h3>Settings that matter</h3>"):html.index("<h2>Tables</h2>")]
    assert "UCX_MEMTYPE_CACHE=n" in section and "needed: without it the doctor says not aware" in section
    assert "ompi-ob1" in section and "no change to the doctor&#x27;s answer (without --mca pml ob1)" in section
    assert html.index("<h2>Libraries</h2>") < html.index("Settings that matter")
    assert "Settings that matter" not in report.build_html(Store())  # nothing checked: no section
