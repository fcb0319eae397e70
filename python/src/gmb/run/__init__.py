# SPDX-License-Identifier: BSD-3-Clause
"""Running a campaign: the session (session), its launches (execute; why one failed: why_failed; the progress line:
progress), the results directory's lock (locks, lock_file), the campaigns of this node (node_campaigns), what a
launch left running (leftovers), and Slurm batch scripts (slurm)."""
