# SPDX-License-Identifier: BSD-3-Clause
"""What a record must hold to make a row of the store (row_problem: the fields the store, the tables and the figures
read, of the right type, statistics a measurement can give), and which ok results are kept as "unsupported" rather
than as figures (not_a_figure: an operation that moved no data, an implausible ceiling). Checked on every record
read, with or without schema validation."""

from __future__ import annotations

import json
import math

from .result_facts import STAT_OBJECTS, headline, is_ceiling

def measured_nothing(result: dict) -> str | None:
    """Why an ok result is no measurement: a collective that moved no data (``metrics.op_bytes`` 0, e.g. 3 bytes
    of float, or 1 byte of alltoall over 4 ranks, is no whole element per block) has a time but no transfer, and a
    bandwidth of 0. None for any other result.
    The store keeps such a result as "unsupported" with this reason, never as a figure."""
    metrics = result.get("metrics")
    if result.get("status") != "ok" or not isinstance(metrics, dict) or metrics.get("op_bytes") != 0:
        return None
    dtype = result.get("dtype")
    return (f"the operation moved no data ({result.get('bytes')} B{' of ' + dtype if isinstance(dtype, str) else ''} "
            f"makes no whole element per block: metrics.op_bytes 0), so its figures measure no transfer")


# No link carries more: ten times the fastest per-direction rate of any interconnect known (NVLink 5, 900 GB/s per
# GPU; network cards, 100 GB/s). The engine refuses a network tool printing more (network_tools.hpp,
# kPlausibleNetworkGBps; docs/methodology.md), and the store a record that holds more.
PLAUSIBLE_NETWORK_GBPS = 10_000


def implausible_ceiling(result: dict) -> str | None:
    """Why an ok peaks result is no ceiling: its bandwidth is not finite numbers (null: the engine writes a non-finite
    figure so), its median is not above 0, or a figure between hosts is above PLAUSIBLE_NETWORK_GBPS (a tool that
    printed nonsense). None for any other result. The store keeps such a result as "unsupported" with this reason,
    never as a ceiling."""
    if not is_ceiling(result) or result.get("status") != "ok":
        return None
    bw = result.get("bandwidth_GBps")
    tool = (result.get("metrics") or {}).get("tool") if isinstance(result.get("metrics"), dict) else None
    what = f"{result.get('operation') or 'a copy'}{' by ' + tool if isinstance(tool, str) else ''}"
    if not _statistics(bw) or "median" not in bw:
        return f"an implausible figure ({what}: bandwidth_GBps {_shown(bw)}, not finite numbers): not a ceiling"
    if bw["median"] <= 0:
        return f"an implausible figure ({what}: {bw['median']} GB/s, not above 0): not a ceiling"
    if (result.get("path") or {}).get("class") == "inter-node" and bw["median"] > PLAUSIBLE_NETWORK_GBPS:
        return (f"an implausible figure ({what}: {bw['median']:.6g} GB/s, above {PLAUSIBLE_NETWORK_GBPS} GB/s, ten "
                f"times the fastest link of any interconnect): not a ceiling")
    return None


def not_a_figure(result: dict) -> str | None:
    """Why an ok result is kept as "unsupported" rather than stored as a figure (measured_nothing,
    implausible_ceiling); None for a figure."""
    return measured_nothing(result) or implausible_ceiling(result)


RESULT_STATUSES = ("ok", "unsupported", "failed", "skipped")  # a result's status, as the record schema has it


INT64 = (-2 ** 63, 2 ** 63 - 1)  # what an SQLite INTEGER holds (and Python's sqlite3 binds): larger is no row


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and \
        (isinstance(value, float) or INT64[0] <= value <= INT64[1])


def _integer(least: int):
    """A check: an integer from ``least`` to the largest the store holds."""
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and least <= v <= INT64[1]


def _shown(value) -> str:
    return json.dumps(value)[:60]


def _field_problems(rec: dict, checks: dict) -> str | None:
    """The first field of ``rec`` that is present (required: also absent) and fails its check: "what must be
    (got ...)". An optional field that is null counts as absent, as the store reads it."""
    for key, (required, ok, what) in checks.items():
        if rec.get(key) is None and not required:
            continue
        if key not in rec:
            return f"no {key} ({what})"
        if not ok(rec[key]):
            return f"{key} must be {what} (got {_shown(rec[key])})"
    return None


def _strings(value) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _path(value) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(k, ""), str) for k in ("class", "link")) and \
        (value.get("nominal_GBps") is None or _number(value["nominal_GBps"]))


# The interval of a statistics object: both numbers, or both null where the launch took too few samples for one (the
# engine then says why in ci_note); every other field a number.
_INTERVAL = ("ci95_low", "ci95_high")


def _statistics(value) -> bool:
    if not isinstance(value, dict):
        return False
    interval = [value.get(k) for k in _INTERVAL if k in value]
    return (all(_number(v) for k, v in value.items() if k not in (*_INTERVAL, "ci_note"))
            and (all(_number(v) for v in interval) or all(v is None for v in interval))
            and isinstance(value.get("ci_note", ""), str))


_CONTEXT_FIELDS = {  # the fields of a context the store and the tables read, and what they must be
    "run_id": (True, lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "benchmark": (False, lambda v: isinstance(v, str), "a string"),
    "world_size": (False, _integer(1), "an integer >= 1 and < 2^63"),
    "mpi": (False, lambda v: isinstance(v, dict) and isinstance(v.get("library_version") or "", str) and
            isinstance(v.get("gpu_awareness") or {}, dict),
            "an object (library_version a string, gpu_awareness an object)"),
    "options": (False, lambda v: isinstance(v, dict) and isinstance(v.get("benchmark") or {}, dict),
                "an object (its benchmark an object)"),
    "nccl": (False, lambda v: isinstance(v, dict), "an object"),
}
_RESULT_FIELDS = {  # the fields of a result the store and the tables read, and what they must be
    "run_id": (True, lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "benchmark": (True, lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "status": (True, lambda v: v in RESULT_STATUSES, f"one of {', '.join(RESULT_STATUSES)}"),
    "bytes": (True, _integer(0), "an integer >= 0 and < 2^63"),
    "ranks": (False, _integer(1), "an integer >= 1 and < 2^63"),
    "reason": (False, lambda v: isinstance(v, str), "a string"),
    **{k: (False, lambda v: isinstance(v, str), "a string") for k in ("operation", "variant", "strategy")},
    "headline": (False, lambda v: v in STAT_OBJECTS, f"one of {', '.join(STAT_OBJECTS)}"),
    "memory": (False, _strings, "an object of memory kinds (strings)"),
    "path": (False, _path, "an object (class and link strings, nominal_GBps a number or null)"),
    "metrics": (False, lambda v: isinstance(v, dict), "an object"),
    **{s: (False, _statistics, "an object of finite numbers (n, median, p5, ...; ci95_low and ci95_high both null "
                               "where there is no interval, ci_note a string)") for s in STAT_OBJECTS},
}


def _impossible_statistics(rec: dict) -> str | None:
    """Statistics no measurement gives: a value below zero (times, bandwidths, rates, their count and spread are
    none of them negative), a median time of zero, min above max, a median outside [min, max]."""
    for name in STAT_OBJECTS:
        st = rec.get(name)
        if not isinstance(st, dict):
            continue
        negative = next((k for k, v in st.items() if _number(v) and v < 0), None)
        if negative:
            return f"{name}.{negative} must be >= 0 (got {_shown(st[negative])})"
        if name == "time_us" and st.get("median") == 0:
            return "time_us.median must be > 0 (got 0)"
        low, high, mid = st.get("min"), st.get("max"), st.get("median")
        if low is not None and high is not None and low > high:
            return f"{name}.min must be <= {name}.max (got min {_shown(low)}, max {_shown(high)})"
        if None not in (low, high, mid) and not low <= mid <= high:
            return (f"{name}.median must lie within [min, max] (got median {_shown(mid)}, min {_shown(low)}, "
                    f"max {_shown(high)})")
    return None


def row_problem(rec: dict) -> str | None:
    """Why a record cannot make a row of the store, or None: a field that the store, the tables or the figures read
    is missing or of the wrong type (bytes an integer >= 0, status one the record schema names, statistics objects
    of numbers, ...), its statistics cannot be (_impossible_statistics), or an ok result lacks the statistic it is
    ranked by. Checked on every record read, with or
    without schema validation, so that no such row is stored as a figure."""
    if rec.get("type") == "context":
        return _field_problems(rec, _CONTEXT_FIELDS)
    if implausible_ceiling(rec):  # kept as unsupported, with why: its statistics are what is wrong with it
        return _field_problems(rec, {k: v for k, v in _RESULT_FIELDS.items() if k not in STAT_OBJECTS})
    problem = _field_problems(rec, _RESULT_FIELDS) or _impossible_statistics(rec)
    if problem is None and rec["status"] == "ok":
        stat = headline(rec)
        if not isinstance(rec.get(stat), dict) or "median" not in rec[stat]:
            problem = f"an ok result without its headline statistic {stat} (an object with a median)"
    return problem

