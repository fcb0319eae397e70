# SPDX-License-Identifier: BSD-3-Clause
"""How the answers word their figures: significant figures, precisions, ratios and the names of paths."""

from __future__ import annotations

import math

from ..results.result_facts import Sides
from .answers_data import LATENCY_BYTES, Figure
from ..results.claim_checks import BUSY, NO_SPREAD, ONE_LAUNCH, QUANTISED
from ..results.significant_digits import ratio_text
from ..results.inference import Ratio
from .cells import claim_blockers, difference, size_text

# path labels, in the order the answers list them
_GPU_PAIR = {"nvlink": "NVLink pair", "pcie": "PCIe pair", "peer": "GPU pair (peer)",
             "inter-node": "GPUs on two nodes", "same-gpu": "same GPU"}
_HOST_SIDE = {"pinned": "pinned host", "host": "pageable host"}
_HOST_PATH = {"host": "", "cross-socket": ", cross-socket", "inter-node": ", two nodes"}
_ORDER = ["NVLink pair", "PCIe pair", "GPU pair (peer)", "GPUs on two nodes", "same GPU",
          "pinned host -> device", "pageable host -> device", "device -> pinned host", "device -> pageable host",
          "host", "host, cross-socket", "host, two nodes", "host, pinned buffers", "host, pinned buffers, cross-socket"]


def sig3(v: float) -> str:
    """A number with three significant figures, never in exponent form: 1832 -> 1830, 0.35 -> 0.350."""
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else str(v)
    digits = 2 - math.floor(math.log10(abs(v)))
    if digits <= 0:
        return str(int(round(v, digits)))
    return f"{v:.{digits}f}"


def sig3_number(v: float) -> float | int:
    """A number rounded as sig3 writes it, kept a number for tables and CSV: 1.0476 -> 1.05, 771.4 -> 771."""
    text = sig3(v)
    return float(text) if "." in text else int(text)


def sig2(v: float) -> str:
    """Two significant figures, for precisions: 0.481 -> 0.48, 6.74 -> 6.7, 39.0 -> 39."""
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else str(v)
    digits = 1 - math.floor(math.log10(abs(v)))
    return str(int(round(v, digits))) if digits <= 0 else f"{v:.{digits}f}"


def pct(v: float) -> str:
    return f"{v:.1f} %" if abs(v) >= 1 else f"{sig3(v)} %"


def precision_text(precision: float | None, capped: bool) -> str:
    """'+-3.1 %', with ', cap reached' when the launch stopped at its cap."""
    text = f"+-{sig2(100 * precision)} %" if precision is not None else "no interval"
    return text + (", cap reached" if capped else "")


def bounds_text(low: float | None, high: float | None, spec: str = ".4g", sep: str = "-") -> str:
    """An interval's bounds ('1.2-3.4'), or 'no interval' where it has none (one launch of fewer than 6 samples)."""
    return "no interval" if low is None or high is None else f"{low:{spec}}{sep}{high:{spec}}"


def no_difference_text(points) -> str:
    """Why no figure is called apart from another: what keeps one of them out of any claim (one launch, busy
    launches, values on a coarse lattice, launches that agree exactly), a launch without an interval, or a difference
    that its 95 % interval does not prove; with two points, their ratio and its interval."""
    points = list(points)
    blocked = [b for p in points for b in claim_blockers(p)]
    kinds = {b.kind for b in blocked}
    if ONE_LAUNCH in kinds:
        return "one launch: no claim across launches (gmb run --repetitions 3 or more measures the launch-to-launch spread)"
    if BUSY in kinds:
        busy = next(b for b in blocked if b.kind == BUSY)
        return f"no claim: {busy.count} of {busy.of} launches ran on a busy host (their figures may be low)"
    if QUANTISED in kinds:
        return "no claim: the figures sit on a coarse lattice (a timer or scheduler tick), their spread says nothing"
    if NO_SPREAD in kinds:
        return "no claim: the launches agree exactly (rounded or quantised figures: no spread to test a difference by)"
    if not all(p.has_interval for p in points):
        return "no interval to compare: a launch of fewer than 6 samples"
    if len(points) == 2:
        r = difference(points[0], points[1])
        if r.low is not None:
            return f"not proven different: ratio {ratio_text(r.value, r.low, r.high)} (95 %) includes 1"
    return "not proven different: the 95 % interval of their ratio includes 1"


def times(r: float) -> str:
    return f"{sig3(r)}x"


def ratio_said(r: Ratio) -> str:
    """A tested ratio with its 95 % interval: "4.47x [3.02, 6.61]"."""
    return ratio_text(r.value, r.low, r.high)


def path_label(sides: Sides, path_class: str | None) -> str:
    """What a person calls the path of buffers on these sides over a path class: "NVLink pair", "pinned host ->
    device", ..."""
    if not sides.pair:
        return f"{sides.label or 'unknown memory'}" + (f" ({path_class})" if path_class else "")
    send, recv = sides.send, sides.recv
    if send.startswith("managed") or recv.startswith("managed"):
        where = f"managed {send.partition(':')[2] or 'unplaced'} -> {recv.partition(':')[2] or 'unplaced'}"
        return where + (f" ({_GPU_PAIR.get(path_class or '', path_class)})" if path_class else "")
    if send == recv == "device":
        return _GPU_PAIR.get(path_class or "", "device -> device" + (f" ({path_class})" if path_class else ""))
    if send in _HOST_SIDE and recv == "device":
        label = f"{_HOST_SIDE[send]} -> device"
    elif send == "device" and recv in _HOST_SIDE:
        label = f"device -> {_HOST_SIDE[recv]}"
    elif send in _HOST_SIDE and recv in _HOST_SIDE:
        base = ("host" if send == recv == "host" else "host, pinned buffers" if send == recv
                else f"host, {_HOST_SIDE[send].split()[0]} -> {_HOST_SIDE[recv].split()[0]}")
        if path_class in _HOST_PATH:
            return base + _HOST_PATH[path_class]
        return base + (f" ({path_class})" if path_class else "")
    else:
        return sides.label + (f" ({path_class})" if path_class else "")
    return label + (f" ({path_class})" if path_class and path_class != "host-device" else "")


def order(label: str) -> tuple:
    return (_ORDER.index(label) if label in _ORDER else len(_ORDER) + label.startswith("managed"), label)


def short(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    if len(text) <= n:
        return text
    cut = text[: n - 3]
    # end at a word: a word cut in two reads as another word ("not buil...")
    return (cut[: cut.rfind(" ")] if " " in cut else cut).rstrip(" ,;:") + "..."


def who(f: Figure) -> str:
    return f.library + (f" (not CUDA-aware: {f.strategy})" if f.strategy else "")


def pct_of_ceiling_text(f: Figure) -> str:
    """'93.8 % of ceiling' (the answer's), or of the figure's own where it differs: '80.0 % of min(d2h-pinned,
    h2d-pinned) 55.0 GB/s'."""
    return f"{pct(f.pct_of_ceiling)} of {f.own_ceiling or 'ceiling'}"


def figure_text(f: Figure, with_pct: bool, with_latency: bool = True) -> str:
    parts = [precision_text(f.precision, f.capped)]
    if with_pct and f.pct_of_ceiling is not None:
        parts.append(pct_of_ceiling_text(f))
    text = f"{who(f)} {sig3(f.value)} {f.unit} ({', '.join(parts)})"
    if with_latency:
        text += f", {latency_text(f)}"
    return text


def latency_text(f: Figure) -> str:
    if f.latency_us is None:
        return "latency not measured"
    figure = f"{sig3(f.latency_us)} us ({precision_text(f.latency_precision, f.latency_capped)})"
    if f.latency_bytes == LATENCY_BYTES:
        return f"8 B latency {figure}"
    return f"latency {figure} at {size_text(f.latency_bytes)} (8 B not measured)"
