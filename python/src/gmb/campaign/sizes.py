# SPDX-License-Identifier: BSD-3-Clause
"""Message sizes and counts as the engine reads them (``--sizes``, ``--iters`` ...), checked before a campaign
runs."""

from __future__ import annotations

import json
import re

SIZES_ACCEPTED = ("accepted: a byte count with optional K, M or G suffix (powers of 1024), e.g. 8, 4K, 1M; a range "
                  "MIN:MAX in doubling steps, e.g. 1:4M; or a list, e.g. 1,8,4K")
_SIZE = re.compile(r"\s*(\d+)\s*(|B|K|KB|KIB|M|MB|MIB|G|GB|GIB)\s*", re.IGNORECASE)
INT_MAX = 2**31 - 1
# The engine's counts every benchmark takes (gmb-bench BENCH --help), with the least each accepts.
COUNT_OPTIONS = {"iters": 1, "iters-large": 1, "batch": 1, "warmup": 0, "warmup-large": 0}


def parse_size(text: str) -> int:
    """Bytes of one size of the engine's --sizes (8, 4K, 1M, 2GiB ...), or ValueError saying what is accepted."""
    m = _SIZE.fullmatch(text)
    if not m:
        raise ValueError(f"bad size '{text}' ({SIZES_ACCEPTED})")
    return int(m.group(1)) << {"": 0, "B": 0, "K": 10, "M": 20, "G": 30}[m.group(2)[:1].upper()]


def parse_sizes(text: str) -> list[int]:
    """The sizes of a --sizes text as the engine reads them (a range MIN:MAX doubles from MIN, 0 first when MIN is
    0), or ValueError saying what is accepted."""
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 2:
            raise ValueError(f"sizes '{text}': a range is MIN:MAX, sizes doubling from MIN (a step is not "
                             f"accepted; {SIZES_ACCEPTED})")
        lo, hi = (parse_size(t) for t in parts)
        if lo > hi:
            raise ValueError(f"sizes '{text}': MIN is greater than MAX ({SIZES_ACCEPTED})")
        out, s = ([0] if lo == 0 else []), max(lo, 1)
        while s <= hi:
            out.append(s)
            s *= 2
        return out
    sizes = [parse_size(t) for t in text.split(",")]
    for i, n in enumerate(sizes):
        if n in sizes[:i]:  # measured twice, stored once: the engine refuses it too
            raise ValueError(f"sizes '{text}': {n} bytes is listed twice (each size once; {SIZES_ACCEPTED})")
    return sizes


def check_counts(options: dict):
    """The shared counts among a block's options (iters = 0 would run, and fail, every launch)."""
    for key, value in options.items():
        least = COUNT_OPTIONS.get(key.replace("_", "-"))
        if least is None:
            continue
        n = value if isinstance(value, int) and not isinstance(value, bool) else \
            int(value) if isinstance(value, str) and value.strip().isdigit() else None
        if n is None or not least <= n <= INT_MAX:
            raise ValueError(f"options.{key} = {json.dumps(value)}: must be a whole number from {least} to {INT_MAX}")
    for key in ("large-size", "large_size"):
        if key in options:
            parse_size(str(options[key]))
