# SPDX-License-Identifier: BSD-3-Clause
"""A new report table is one analysis function of the results and one entry in tables.TABLES: `gmb tables`, the CSV
export and the HTML report render it with no other change."""
from gmb.cli import main
from gmb.report import tables
from gmb.report.cells import Table
from gmb.results.model import Results


def launches_per_library(results: Results) -> Table:
    """An example analysis: how many results each library configuration stored, by status."""
    counts: dict[tuple[str, str], int] = {}
    for r in results.results:
        counts[(r.library, r.status)] = counts.get((r.library, r.status), 0) + 1
    return Table("Results per library", ["library", "status", "results"],
                 [[lib, status, n] for (lib, status), n in sorted(counts.items())])


def test_a_new_table_is_one_analysis_function(ompi_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(tables, "TABLES", (*tables.TABLES, (launches_per_library, True)))
    assert main(["tables", str(ompi_dir), "--csv", str(tmp_path / "csv")]) == 0
    text = capsys.readouterr().out
    assert "Results per library" in text and "openmpi-5.0.7" in text.split("Results per library")[1]
    (csv,) = [p for p in (tmp_path / "csv").iterdir() if "results_per_library" in p.name.lower().replace("-", "_")]
    assert csv.read_text().splitlines()[0] == "library,status,results"
    assert main(["report", str(ompi_dir), "-o", str(tmp_path / "r.html")]) == 0
    assert "Results per library" in (tmp_path / "r.html").read_text()
