# SPDX-License-Identifier: BSD-3-Clause
"""gmb: the harness around gmb-bench (discover, build, run campaigns, store, report)."""

__version__ = "0.1.0"
SCHEMA_ID = "gmb.record/1"
