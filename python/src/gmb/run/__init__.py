# SPDX-License-Identifier: BSD-3-Clause
"""Running a campaign: the session (session), its launches (execute), the results directory's lock (locks), and Slurm batch scripts (slurm)."""
