# SPDX-License-Identifier: BSD-3-Clause
"""What the results say. Analysis computes data from the results model (results/model.py): tables (tables,
feature_tables, cells), answers (answers, answers_data, answers_paths, answers_features, wording), comparisons
(compare), figures (plots). Renderers show it, one per format: render_text, render_html, render_csv; html assembles
the report and checkreport checks it in a browser."""
