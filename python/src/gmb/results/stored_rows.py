# SPDX-License-Identifier: BSD-3-Clause
"""A store's rows as the results model reads them: typed results (Result, with their statistics and run conditions),
contexts, launches and skipped points. A row that is not as the store writes it (a damaged or hand-edited store) is
Unreadable, and the model leaves it out, counted by table and column (readable)."""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass

from .result_facts import Sides, headline, is_ceiling
from .run_conditions import RunConditions
from .store import STAT_COLUMNS, result_key


# The fewest samples with a 95 % order-statistic interval of the median (the engine's kMinSamplesForMedianCi): below,
# the engine records none (null); engines before that recorded [min, max], which is no 95 % interval and not read.
MIN_SAMPLES_FOR_INTERVAL = 6


@dataclass(frozen=True)
class Statistics:
    """One statistics object of a result (time_us, bandwidth_GBps, ...), the figures combine reads. ci95_low and
    ci95_high: the launch's own 95 % interval of the median, None where it has none (fewer than 6 samples)."""
    median: float
    ci95_low: float | None
    ci95_high: float | None
    p5: float | None
    p95: float | None


@dataclass
class Result:
    """One result record, as the store labelled it (library, operation label, memory label, status) and parsed."""
    run_id: str
    launch_id: str | None
    repetition: int | None  # the campaign's repetition (launch) number
    library: str  # the library as declared or found
    benchmark: str
    operation: str | None  # result_facts.operation_label: the operation and its variant
    status: str
    reason: str | None
    bytes: int
    memory: str  # result_facts.memory_label: "send:recv", or a collective's kinds
    mem_send: str | None
    mem_recv: str | None
    strategy: str | None
    ranks: int | None
    path_class: str | None
    nominal_GBps: float | None
    stats: dict[str, Statistics]  # by STAT_COLUMNS prefix ("t", "bw", "busbw", "rate")
    metrics: dict
    record: dict  # the whole record
    config: RunConditions
    configuration: str = ""  # the configuration's name (configuration_labels)
    variant: str = ""  # the options that tell it from the benchmark's other points of that configuration
    launch_load: dict | None = None  # how busy the host was while its launch ran (load.py)
    scaling: str | None = None  # "strong" or "weak": its launch is one node count of a scaling series

    @property
    def headline(self) -> str:
        """The prefix of the statistic it is ranked by (result_facts.headline)."""
        return STAT_COLUMNS[headline(self.record)]

    @property
    def chunks(self) -> int | None:
        return self.record.get("chunks")

    @property
    def ceiling(self) -> bool:
        """A ceiling's record (result_facts.CEILINGS), not a library's figure."""
        return is_ceiling(self.record)

    @property
    def sides(self) -> Sides:
        """Where its buffers were, side by side (its record's memory)."""
        return Sides.of(self.record.get("memory"))

    @property
    def fresh(self) -> bool:
        """Buffers allocated per size (--fresh-buffers, a stress mode)."""
        return self.record.get("buffer_allocation") == "fresh-per-size"

    @property
    def validation(self) -> str | None:
        return self.record.get("validation")


@dataclass
class Context:
    """One context record: the run's library, its CUDA-awareness verdict and the whole record."""
    run_id: str
    launch_id: str | None
    library: str
    library_version: str | None
    gpu_awareness: str | None
    record: dict


@dataclass
class LaunchRecord:
    """One engine launch a campaign planned, and how it ended."""
    launch_id: str
    library: str | None
    benchmark: str | None
    memory: str | None
    strategy: str | None
    planned_path: str | None
    status: str | None
    reason: str | None
    argv: list | None  # the command line, None where not recorded
    load: dict | None


@dataclass
class Skipped:
    """A point the planner decided not to run."""
    library: str
    what: str
    reason: str


class Unreadable(ValueError):
    """A stored row's column that cannot be read as the store writes it (a damaged or hand-edited store); its
    message says which column and how ("bytes not an integer")."""


def column_json(row: dict, column: str, default, required: bool = False, kind: type = dict):
    """A JSON column as the store writes it: an object (``kind``), NULL unless ``required``; else Unreadable."""
    text = row[column]
    if text is None and not required:
        return default
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        raise Unreadable(f"{column} not JSON") from None
    if value is None and not required:
        return default
    if not isinstance(value, kind):
        raise Unreadable(f"{column} not a JSON {'object' if kind is dict else 'list'}")
    return value


_STATISTIC_FIELDS = ("median", "ci95_low", "ci95_high", "p5", "p95", "n")


def _statistics(record: dict) -> dict[str, Statistics]:
    """The statistics objects of a result's record (time_us, bandwidth_GBps, ...) by their STAT_COLUMNS prefix, each
    one with a median; Unreadable names the first field that is not a finite number or null."""
    out = {}
    for key, prefix in STAT_COLUMNS.items():
        st = record.get(key)
        if st is None:
            continue
        if not isinstance(st, dict):
            raise Unreadable(f"json: {key} not an object")
        for field in _STATISTIC_FIELDS:
            value = st.get(field)
            if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool)
                                          and math.isfinite(value)):
                raise Unreadable(f"json: {key}.{field} not a finite number")
        if st.get("median") is not None:
            out[prefix] = Statistics(st["median"], *_launch_ci(st), st.get("p5"), st.get("p95"))
    return out


def _launch_ci(st: dict) -> tuple[float | None, float | None]:
    """A statistics object's own 95 % interval of the median: None, None where it has none (null, or fewer than
    MIN_SAMPLES_FOR_INTERVAL samples: an older engine's [min, max])."""
    low, high, n = st.get("ci95_low"), st.get("ci95_high"), st.get("n")
    if low is None or high is None or (n is not None and n < MIN_SAMPLES_FOR_INTERVAL):
        return None, None
    return low, high


def read_result(row: dict) -> Result:
    """A result row as the model reads it. Unreadable names the first column that is not what the store writes
    (names, an integer size, finite numbers or NULL, JSON objects, an ok result's headline median)."""
    for column in ("library", "benchmark", "status"):
        if not isinstance(row[column], str) or not row[column]:
            raise Unreadable(f"{column} not a name")
    for column, required in (("bytes", True), ("ranks", False), ("repetition", False)):
        value = row[column]
        if (value is None and required) or (value is not None and (not isinstance(value, int) or value < 0)):
            raise Unreadable(f"{column} not an integer")
    value = row["nominal_GBps"]
    if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value)):
        raise Unreadable("nominal_GBps not a finite number")
    record = column_json(row, "json", {}, required=True)
    metrics = column_json(row, "metrics", {})
    column_json(row, "config", {})  # RunConditions.parse reads its text
    stats = _statistics(record)
    if row["status"] == "ok" and STAT_COLUMNS[headline(record)] not in stats:
        raise Unreadable(f"json: {headline(record)}.median null in an ok result (the statistic it is ranked by)")
    return Result(row["run_id"], row["launch_id"], row["repetition"], row["library"], row["benchmark"],
                  row["operation"], row["status"], row["reason"], row["bytes"], row["memory"], row["mem_send"],
                  row["mem_recv"], row["strategy"], row["ranks"], row["path_class"], row["nominal_GBps"],
                  stats, metrics, record, RunConditions.parse(row["config"]),
                  launch_load=row["launch_load"], scaling=row["launch_scaling"])


def read_launch(x: dict) -> LaunchRecord:
    return LaunchRecord(x["launch_id"], x["library"], x["benchmark"], x["memory"], x["strategy"], x["planned_path"],
                        x["status"], x["reason"], column_json(x, "argv", None, kind=list), column_json(x, "load", None))


def readable(rows: list[dict], read, table: str, problems: Counter) -> list:
    """``read`` of each row, the rows it finds Unreadable left out and counted in ``problems`` by table and column."""
    out = []
    for row in rows:
        try:
            out.append(read(row))
        except Unreadable as exc:
            problems[f"{table}.{exc}"] += 1
    return out


def once_each(results: list[Result]) -> tuple[list[Result], int]:
    """The results with every (run, point) once (the first row of each: a measurement stored twice is one launch,
    not two), and how many rows repeated one."""
    seen, out = set(), []
    for r in results:
        key = (r.run_id, result_key(r.record))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out, len(results) - len(out)
