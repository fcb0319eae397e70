# SPDX-License-Identifier: BSD-3-Clause
"""A report written again (a new name, or --force) and a misspelt option or name answered with the closest one."""
import pytest

from gmb.cli import main


def run_gmb(*args):
    return main([str(a) for a in args])


def test_report_regenerated_under_a_new_name_or_replaced_with_force(ompi_dir, capsys):
    records = sorted(p for p in ompi_dir.rglob("*") if p.is_file())
    kept = {p: p.read_bytes() for p in records}
    assert run_gmb("report", ompi_dir) == 0
    first = ompi_dir / "report.html"
    assert first.is_file()
    first.write_text("an older report")
    capsys.readouterr()
    assert run_gmb("report", ompi_dir) == 0  # the earlier report kept, the new one beside it, and said so
    out, err = capsys.readouterr()
    assert out.strip() == str(ompi_dir / "report-2.html") and "report.html exists; writing report-2.html" in err
    assert first.read_text() == "an older report"
    assert run_gmb("report", ompi_dir, "--force") == 0
    assert first.read_text().rstrip().endswith("</html>") and not (ompi_dir / "report-3.html").exists()
    assert not [p for p in ompi_dir.iterdir() if p.name.startswith(".")]  # no temporary file left
    assert {p: p.read_bytes() for p in records} == kept  # the records untouched


def test_report_force_replaces_only_a_report(ompi_dir, tmp_path, capsys):
    not_a_report = tmp_path / "notes.txt"
    not_a_report.write_text("mine")
    assert run_gmb("report", ompi_dir, "-o", not_a_report, "--force") == 2
    assert "--force replaces an HTML report only" in capsys.readouterr().err and not_a_report.read_text() == "mine"


def test_a_misspelt_option_or_name_gets_the_closest_one(fake_setup, capsys):
    with pytest.raises(SystemExit) as e:
        run_gmb("run", "--quik")
    assert e.value.code == 2 and "unrecognized arguments: --quik; did you mean '--quick'?" in capsys.readouterr().err
    assert run_gmb("plan", "--config", fake_setup["config"], "--no-detect", "--library", "fakempi-aa") == 2
    assert "unknown library fakempi-aa; did you mean 'fakempi-a'?" in capsys.readouterr().err
