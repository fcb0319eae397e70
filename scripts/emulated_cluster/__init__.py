# SPDX-License-Identifier: BSD-3-Clause
"""The pieces of scripts/emulated-cluster (see docs/emulated-cluster.md)."""
