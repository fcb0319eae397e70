"""Measured ceilings ("achievable peak") and which one bounds a given MPI path.

The engine's ``peaks`` benchmark writes one result per copy kind (operation) measured without MPI:
h2d-pinned, d2h-pinned, h2d-pageable, d2d, p2p-ce, p2p-ipc, p2p-sm, host-copy (older engines: host-stream) ... Each MPI result has a
path class (same-gpu, nvlink, pcie, host-device, host, cross-socket, inter-node) and memory kinds; this
module picks the ceiling that bounds that transfer.

Bidirectional bandwidth (bibw) is compared with twice the one-way ceiling unless the engine measured a
bidirectional ceiling itself (operation name ending in ``-bidir``).
"""

from __future__ import annotations

from statistics import median

from .store import Store

# Ceiling candidates per path class, best first; the first one measured is used.
_CEILING_BY_PATH = {
    "same-gpu": ["d2d"],
    "nvlink": ["p2p-ipc", "p2p-ce", "p2p-sm"],
    "pcie": ["p2p-ipc", "p2p-ce", "p2p-sm"],
    "host": ["host-copy", "host-stream"],
    "cross-socket": ["host-copy-remote", "host-stream-remote", "host-copy", "host-stream"],
    "inter-node": ["network", "ucx-perftest"],
}


def ceilings(store: Store) -> dict[str, float]:
    """operation -> measured ceiling in GB/s (median over repetitions, best over libraries/hosts)."""
    by_op: dict[tuple[str, str], list[float]] = {}
    for r in store.results("peaks"):
        if r["bw_median"] is None:
            continue
        by_op.setdefault((r["operation"], r["library"]), []).append(r["bw_median"])
    out: dict[str, float] = {}
    for (op, _lib), values in by_op.items():
        out[op] = max(out.get(op, 0.0), median(values))
    return out


def ceiling_operation(path_class: str | None, mem_send: str | None, mem_recv: str | None,
                      available: dict[str, float]) -> str | None:
    """Name of the peaks operation that bounds a transfer, or None when none was measured."""
    if path_class == "host-device":
        host_side = mem_send if mem_send in ("host", "pinned", "managed:host") else mem_recv
        direction = "h2d" if mem_send in ("host", "pinned", "managed:host") else "d2h"
        kind = "pinned" if host_side == "pinned" else "pageable"
        candidates = [f"{direction}-{kind}", f"{direction}-pinned" if kind == "pageable" else None]
        # a pageable d2h ceiling is often not measured; fall back to the pinned one
        candidates = [c for c in candidates if c]
    else:
        candidates = _CEILING_BY_PATH.get(path_class or "", [])
    for c in candidates:
        if c in available:
            return c
    return None


def ceiling_for(benchmark: str, path_class, mem_send, mem_recv, available: dict[str, float]):
    """(operation, GB/s) bounding this benchmark's bandwidth on that path, or (None, None)."""
    op = ceiling_operation(path_class, mem_send, mem_recv, available)
    if op is None:
        return None, None
    if benchmark == "bibw":
        if op + "-bidir" in available:
            return op + "-bidir", available[op + "-bidir"]
        return op + " x2", 2 * available[op]
    return op, available[op]
