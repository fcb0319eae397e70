# SPDX-License-Identifier: BSD-3-Clause
"""A result set's answers and tables are made once per command and handed to every output: `gmb run`'s printed
answers and its report.html show the one analysis (report/analysis.answers_and_tables: the claims held together over
both), and `gmb report --csv` writes the report's own tables as CSV, not tables made again."""

from gmb.cli import main
from gmb.report import analysis, html, render_csv, render_text

CAMPAIGN = """
[campaign]
name = "once"
repetitions = 2
timeout_s = 20
[[run]]
benchmarks = ["latency"]
libraries = ["fakempi-a"]
memory = ["host:host"]
sizes = "1:64"
options = { iters = 5 }
"""


def _count_analyses(monkeypatch) -> list:
    """Each analysis made (claims.held_together as analysis.py calls it), counted."""
    made = []
    real = analysis.held_together

    def counted(build):
        made.append(build)
        return real(build)

    monkeypatch.setattr(analysis, "held_together", counted)
    return made


def _record(monkeypatch, module, name: str) -> list:
    """The first argument of each call of ``module.name``, kept."""
    seen = []
    real = getattr(module, name)

    def recording(first, *args, **kwargs):
        seen.append(first)
        return real(first, *args, **kwargs)

    monkeypatch.setattr(module, name, recording)
    return seen


def test_gmb_run_prints_and_reports_one_analysis(fake_setup, tmp_path, monkeypatch, capsys):
    made = _count_analyses(monkeypatch)
    printed = _record(monkeypatch, render_text, "answers_text")
    reported = _record(monkeypatch, html, "answers_html")
    c = tmp_path / "c.toml"
    c.write_text(CAMPAIGN)
    rc = main(["run", str(c), "--config", str(fake_setup["config"]), "--no-detect", "--results",
               str(tmp_path / "res"), "--no-build", "--no-progress"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    (outdir,) = (tmp_path / "res").iterdir()
    assert (outdir / "report.html").is_file() and "== Answers" in out.out
    assert len(made) == 1  # one analysis for the printout and the report
    assert len(printed) == len(reported) == 1 and printed[0] is reported[0]  # the same answers in both


def test_gmb_report_writes_its_own_tables_as_csv(ompi_dir, tmp_path, monkeypatch, capsys):
    made = _count_analyses(monkeypatch)
    shown = _record(monkeypatch, html, "table_html")
    exported = _record(monkeypatch, render_csv, "export_csv")
    assert main(["report", str(ompi_dir), "-o", str(tmp_path / "r.html"), "--csv", str(tmp_path / "csv")]) == 0
    assert len(made) == 1
    (tables,) = exported
    assert tables and all(any(t is s for s in shown) for t in tables)  # the report's tables, not made again
    assert len(list((tmp_path / "csv").glob("*.csv"))) == len(tables)
