# SPDX-License-Identifier: BSD-3-Clause
"""Whether the machine itself changed between two result sets, told by a figure no library setting moves: the
engine's calibration of a CUDA kernel launch (the time of a touch kernel and a stream synchronisation, measured by
every launch on a GPU before it measures anything; records.md, `calibration.kernel_launch`). On one H100 the quick
campaign run twice, minutes apart with nothing changed, read 10.8 us in the first run and 8.85 us in the second, and
1.3-1.8x on host-memory figures with it: `gmb compare` then calls most points different, rightly, but the cause was
the machine (its CPUs' speed under the hypervisor), not a library. A comparison says so beside its verdicts."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from ..results import inference
from ..results.model import Results
from ..results.significant_digits import ratio_text, significant

# A change of the probe smaller than this is not said: launch-to-launch noise of the calibration is a few percent.
SMALLEST_CHANGE = 0.05
FEWEST_LAUNCHES = 3


@dataclass(frozen=True)
class MachineChange:
    """The probe's geometric mean over each side's engine launches and B / A with its interval."""
    a_us: float
    b_us: float
    a_launches: int
    b_launches: int
    ratio: inference.Ratio


def kernel_launch_us(results: Results) -> list[float]:
    """Each engine launch's calibrated kernel launch (us; the median over its ranks), once per engine launch: the
    blocks of one plan launch carry its calibration each."""
    by_launch: dict[str, float] = {}
    for c in results.contexts:
        k = c.record.get("calibration", {}).get("kernel_launch", {})
        values = [v for v in k.get("per_rank_us") or [] if isinstance(v, (int, float)) and v > 0]
        if k.get("status") == "measured" and values:
            launch = (c.record.get("plan") or {}).get("launch_run_id") or c.run_id
            by_launch[launch] = statistics.median(values)
    return list(by_launch.values())


def machine_change(a: Results, b: Results) -> MachineChange | None:
    """The probe's change from A to B where both sides measured it in FEWEST_LAUNCHES engine launches or more and
    it moved by SMALLEST_CHANGE or more with its 95 % interval apart from 1; None otherwise (unchanged, or not
    measured: no GPU, an engine without the calibration)."""
    va, vb = kernel_launch_us(a), kernel_launch_us(b)
    if min(len(va), len(vb)) < FEWEST_LAUNCHES:
        return None
    r = inference.ratio(vb, va)
    if r.apart == 0 or abs(math.log(r.value)) < math.log(1 + SMALLEST_CHANGE):
        return None
    return MachineChange(statistics.geometric_mean(va), statistics.geometric_mean(vb), len(va), len(vb), r)


def machine_change_text(m: MachineChange) -> str:
    return (f"the machine itself changed between A and B: a CUDA kernel launch (the engine's calibration, which no "
            f"library setting moves) took {significant(m.a_us)} us in A and {significant(m.b_us)} "
            f"us in B, {ratio_text(m.ratio.value, m.ratio.low, m.ratio.high)} over {m.a_launches} and "
            f"{m.b_launches} engine launches: differences above may be the machine's, not the configuration's; "
            f"compare runs made on a steady machine, their launches interleaved (one campaign measuring both)")
