# SPDX-License-Identifier: BSD-3-Clause
"""NCCL's own configuration file, the one NCCL_CONF_FILE names (else ~/.nccl.conf; /etc/nccl.conf after either):
``NAME=VALUE`` lines, a line starting with ``#`` a comment (src/misc/param.cc). NCCL reads it at its first
communicator; a variable already in the environment keeps its value."""

from __future__ import annotations

CONF_FILE = "NCCL_CONF_FILE"
