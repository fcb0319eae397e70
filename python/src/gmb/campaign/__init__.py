# SPDX-License-Identifier: BSD-3-Clause
"""What to run: a campaign file (spec, checked by sizes and checks) or one generated from the machine (generated,
its blocks in full, quick and mpi4_and_rma, with sweeps and from_description), expanded into launches (plan), with
their duration estimated (estimate), and the results directory with the plan saved in it (results_dir)."""
