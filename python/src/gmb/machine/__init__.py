# SPDX-License-Identifier: BSD-3-Clause
"""Where gmb runs: the GPUs and their links (topology), the MPI libraries installed (mpilibs, identity), how each is launched (launchers), and how busy the host is (load)."""
