# SPDX-License-Identifier: BSD-3-Clause
"""What the generated campaign takes from an engine's description: its GPU and host memory kinds, its
point-to-point benchmarks, the operations it lists."""

from __future__ import annotations

from ..engine.description import EngineDescription
from .plan import listed_operations


def gpu_kind(desc: EngineDescription) -> tuple[str | None, str]:
    """The kind of GPU memory (cudaMalloc) and whether it is available: (its name, "") or (None, why not)."""
    k = desc.first_kind(gpu_memory=True, placement=None)
    if k is None:
        return None, "the engine lists no GPU memory kind"
    return (k.name, "") if k.available else (None, k.reason or f"{k.name} memory unavailable")


def host_kind(desc: EngineDescription, page_locked: bool) -> str:
    """The host memory kind, pageable (malloc) or page-locked (pinned)."""
    k = desc.first_kind(host_accessible=True, gpu_backed=False, page_locked=page_locked, placement=None)
    return k.name if k else ("pinned" if page_locked else "host")


def listed(lib, desc, bench: str, operations: list[str] | None, skipped) -> list[str] | None:
    """The operations of this campaign's policy (QUICK_OPERATIONS, NCCL_DEFAULT_OPERATIONS) that the engine lists;
    the others are skipped with the reason. None stays None (the planner's DEFAULT_OPERATIONS)."""
    return None if operations is None else listed_operations(lib, desc, bench, operations, skipped)


def pt2pt_benchmarks(lib, desc, skipped) -> list[str]:
    """The point-to-point benchmarks (one pair of ranks) of the engine, in its order."""
    have = desc.of_family("pt2pt")
    if not have:
        skipped.append((lib.name, "point to point", "the engine lists no benchmark of family pt2pt"))
    return have
