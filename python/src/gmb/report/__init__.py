# SPDX-License-Identifier: BSD-3-Clause
"""What the results say: tables, answers, comparisons, figures and the HTML report (tables, answers, compare, plots, html, checkreport)."""
