# SPDX-License-Identifier: BSD-3-Clause
"""An application's communication profile (gmb profile's profile.json) as data: read and checked, and what each of
its rows needs to be priced (the benchmark, memory, path or ranks: Need). docs/application.md."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError

SCHEMA = "gmb.profile.v1"
RANK_SCHEMA = "gmb.profile.rank.v1"


class ProfileError(UsageError):
    """The application could not be profiled, or a profile cannot be read: what and why; nothing half-written."""


BLOCKING_SENDS = {"MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend", "MPI_Sendrecv", "MPI_Sendrecv_replace"}
NONBLOCKING_SENDS = {"MPI_Isend", "MPI_Issend", "MPI_Irsend", "MPI_Ibsend"}
SENDS = BLOCKING_SENDS | NONBLOCKING_SENDS
RECEIVES = {"MPI_Recv", "MPI_Irecv", "MPI_Sendrecv (receive)"}
# the other side of a message priced at its sender, or time spent waiting for one
NOT_PRICED = RECEIVES | {"wait (requests the profiler did not start)"}
# collective calls -> gmb-bench coll's operation
OPERATIONS = {"MPI_Bcast": "bcast", "MPI_Ibcast": "bcast", "MPI_Reduce": "reduce", "MPI_Allreduce": "allreduce",
              "MPI_Iallreduce": "allreduce", "MPI_Gather": "gather", "MPI_Allgather": "allgather",
              "MPI_Allgatherv": "allgatherv", "MPI_Scatter": "scatter", "MPI_Alltoall": "alltoall",
              "MPI_Alltoallv": "alltoallv", "MPI_Reduce_scatter_block": "reduce_scatter", "MPI_Barrier": "barrier"}


@dataclass(frozen=True)
class Need:
    """A figure a row needs: the benchmark (and operation), the memory of each side, the path (point to point) or
    the ranks and hosts (collectives)."""
    benchmark: str
    operation: str | None
    memory: str
    path: str | None
    ranks: int | None
    hosts: int | None

    def label(self) -> str:
        what = f"{self.benchmark} {self.operation}" if self.operation else self.benchmark
        hosts = f"{self.hosts} host" + ("s" if self.hosts != 1 else "")
        where = f"over {self.path}" if self.path else f"on {self.ranks} ranks ({hosts})"
        return f"{what}, {self.memory} memory, {where}"


def need_of(row: dict) -> Need | None:
    """What prices a profile row; None for a row that is not priced (NOT_PRICED)."""
    call = row["call"]
    if call in SENDS and row["peer"] < 0:
        return None  # to MPI_PROC_NULL: no message (a Sendrecv's time is then its receive's wait)
    if call in SENDS:
        return Need("latency" if call in BLOCKING_SENDS else "bw", None, f"{row['memory']}:{row['peer_memory']}",
                    row["path"], None, None)
    if call in OPERATIONS:
        return Need("coll", OPERATIONS[call], row["memory"], None, row["comm_size"], row["comm_hosts"])
    return None


def needs(profile: dict) -> list[Need]:
    """Every Need of the profile, once."""
    return list(dict.fromkeys(n for n in map(need_of, profile["rows"]) if n is not None))


def where(row: dict) -> str:
    """Where a row's messages went: the path of a point-to-point row, the ranks of a collective's communicator."""
    return row.get("path") or (f"{row['comm_size']} ranks" if row["comm_size"] else "-")


def totals(profile: dict, by_bin: bool) -> dict[tuple, list]:
    """The profile's rows over all ranks by (call, memory, where) and, with ``by_bin``, size bin: [calls, bytes,
    time in the call and waits (s), {bin: calls}]."""
    out: dict[tuple, list] = {}
    for row in profile["rows"]:
        key = (row["call"], row["memory"], where(row), *((row["bin"],) if by_bin else ()))
        acc = out.setdefault(key, [0, 0, 0.0, {}])
        acc[0] += row["count"]
        acc[1] += row["bytes"]
        acc[2] += row["call_s"] + row["wait_s"]
        acc[3][row["bin"]] = acc[3].get(row["bin"], 0) + row["count"]
    return out


def load_profile(path: str | Path) -> dict:
    """A profile.json (or the directory holding it), checked."""
    p = Path(path)
    p = p / "profile.json" if p.is_dir() else p
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise ProfileError(f"{path}: no profile there (gmb profile writes DIR/profile.json)") from None
    except (OSError, ValueError) as exc:
        raise ProfileError(f"{p}: not a profile ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("rows"), list):
        raise ProfileError(f"{p}: not a gmb profile (schema {SCHEMA} expected)")
    return data
