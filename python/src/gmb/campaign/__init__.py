# SPDX-License-Identifier: BSD-3-Clause
"""What to run: a campaign file or one generated from the machine (spec; generated: quick, full, mpi4_and_rma), expanded into launches (plan), with their duration estimated (estimate)."""
