# SPDX-License-Identifier: BSD-3-Clause
"""The campaign that measures every figure an application profile needs to be priced (`gmb run --for-profile`)."""

from __future__ import annotations

import math

from ..results.profile import Need, ProfileError, load_profile, need_of
from .spec import Block, Campaign


def campaign_for(profile: dict, libraries: list[str] | None = None, repetitions: int = 5) -> Campaign:
    """A campaign that measures every figure the profile needs, from the smallest size to its largest message
    (rounded up to a power of two), on the libraries given (every library where None): one block per memory and path
    of its point-to-point calls (latency and bw together), one per collective operation, memory and ranks."""
    pt2pt: dict[tuple, list] = {}  # (memory, path) -> [benchmarks, largest]
    colls: dict[Need, int] = {}
    for row in profile["rows"]:
        need = need_of(row)
        if need is None:
            continue
        top = row["max_bytes"] or 1
        if need.benchmark == "coll":
            colls[need] = max(colls.get(need, 4), top)
            continue
        entry = pt2pt.setdefault((need.memory, need.path), [[], 1])
        if need.benchmark not in entry[0]:
            entry[0].append(need.benchmark)
        entry[1] = max(entry[1], top)
    opts = {"validate": True, "precision": 0.05, "max-seconds": 0.25}
    blocks = [Block(sorted(benchmarks, key=["latency", "bw"].index), memory=[memory], sizes=f"1:{_pow2(top)}",
                    ranks=[2], path=path, options=dict(opts), libraries=libraries)
              for (memory, path), (benchmarks, top) in pt2pt.items()]
    for need, top in colls.items():
        across = need.hosts is not None and need.hosts > 1
        blocks.append(Block(["coll"], sizes=f"4:{_pow2(top)}", ranks=[need.ranks], operations=[need.operation],
                            options={**opts, "mem": need.memory} if need.memory != "host" else dict(opts),
                            nodes=[need.hosts] if across else None,
                            ranks_per_node=need.ranks // need.hosts if across else None, libraries=libraries))
    return Campaign("for-profile", blocks, repetitions=repetitions, bundle=True)


def _pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1))))


def for_profile_campaign(path: str, libraries: list[str] | None):
    """The campaign `gmb run --for-profile PROFILE` runs: every figure the profile needs."""
    profile = load_profile(path)
    c = campaign_for(profile, libraries)
    if not c.blocks:
        raise ProfileError(f"{path}: the profile has no call gmb can price (no sends, no collectives it measures)")
    return c
