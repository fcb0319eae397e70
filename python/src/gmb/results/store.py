# SPDX-License-Identifier: BSD-3-Clause
"""SQLite store of gmb records: record files ingested as rows (each result labelled by its library, its operation
and memory, keyed by result_key so that nothing is stored twice), launches, skipped points and engine descriptions
recorded, rows read back; what the user points at opened as a store (open_results). Its file, layout and checks:
store_file.py.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from ..machine.identity import library_label, nccl_label
from .engine_facts import read_engine_file
from .record_checks import not_a_figure
from .records import RecordError, RecordFile, read_records
from .result_facts import STAT_OBJECTS, is_ceiling, memory_label, operation_label
from .run_conditions import configuration
from .store_file import (BUSY_TIMEOUT_S, SCHEMA_VERSION, TABLES, StoreError, check_store_file, check_version,
                         damaged_store, write_error)

# statistics object of a record -> the short name a point's metric goes by ("t", "bw", ...)
STAT_COLUMNS = {"time_us": "t", "bandwidth_GBps": "bw", "busbw_GBps": "busbw", "message_rate_Mps": "rate"}


def result_key(result: dict) -> str:
    """A result's identity within its run: every field but its figures (the statistics objects), as canonical JSON.
    Which point it is can live anywhere else (``metrics.pair`` names the GPU pair of a copy ceiling). With the run
    id it names one measured result, so the same record stored twice is recognised."""
    return json.dumps({k: v for k, v in result.items() if k not in STAT_OBJECTS}, sort_keys=True)


class Store:
    def __init__(self, path: str | Path = ":memory:", create: bool = True):
        """Open (``create``: or start) a gmb store. An existing file that is not a gmb store (not SQLite, or a
        database without ``meta.schema_version``) is refused before anything is written into it. With
        ``create=False`` the file must already be a gmb store and is opened read-only: a reader never changes
        what the user points at."""
        self.path = str(path)
        self._in_transaction = False
        new_file = self.path != ":memory:" and not Path(path).exists()
        if self.path != ":memory:":
            check_store_file(Path(path), create)
        if not (create or self.path == ":memory:"):
            self.db = sqlite3.connect(f"file:{quote(str(Path(path).resolve()))}?mode=ro", uri=True)
            self.db.row_factory = sqlite3.Row
            check_version(self.db, self.path)
            return
        try:
            self.db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
        except sqlite3.OperationalError as exc:
            write_error(self.path, "open the store for writing", exc)
        self.db.row_factory = sqlite3.Row
        check_version(self.db, self.path)
        try:
            self.db.executescript(TABLES)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            self.db.commit()
        except sqlite3.OperationalError as exc:
            self.db.close()
            if new_file:  # a store that could not be started is not left behind half-made
                for leftover in (Path(path), Path(f"{path}-journal")):
                    leftover.unlink(missing_ok=True)
            write_error(self.path, "open the store for writing", exc)

    def close(self):
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---------------------------------------------------------------- writing
    @contextmanager
    def transaction(self, what: str):
        """Everything written inside is stored together or not at all. A transaction opened inside another is
        part of it. A failed write rolls back and raises OutputError (a full disk, a store that cannot be written) or
        StoreError naming the store and ``what`` was written."""
        if self._in_transaction:
            yield
            return
        self._in_transaction = True
        try:
            yield
            self.db.commit()
        except BaseException as exc:
            self.db.rollback()
            if isinstance(exc, sqlite3.DatabaseError):
                write_error(self.path, f"store {what}", exc)
            raise
        finally:
            self._in_transaction = False

    def set_meta(self, key: str, value: str):
        with self.transaction(f"meta {key}"):
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def meta(self, key: str, default=None):
        rows = self.rows("SELECT value FROM meta WHERE key=?", (key,))
        return rows[0]["value"] if rows else default

    def record_launch(self, **row):
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        vals = [json.dumps(v) if isinstance(v, (list, dict)) else v for v in row.values()]
        with self.transaction(f"launch {row.get('launch_id')}"):
            self.db.execute(f"INSERT OR REPLACE INTO launches ({cols}) VALUES ({marks})", vals)

    def record_skip(self, campaign: str, library: str, what: str, reason: str):
        with self.transaction(f"skipped {what}"):
            self.db.execute("INSERT INTO skipped VALUES (?, ?, ?, ?)", (campaign, library, what, reason))

    def record_engine(self, library: str, description: dict):
        """The description of the engine that runs ``library``; the latest one stored wins (a resumed campaign's
        engine, rebuilt from the same sources, says the same)."""
        with self.transaction(f"the engine description of {library}"):
            self.db.execute("INSERT OR REPLACE INTO engines VALUES (?, ?)",
                            (library, json.dumps(description, sort_keys=True)))

    def ingest_engine_file(self, path: str | Path):
        """Store the description an engines/<library>.json file holds (StoreError naming the file if it is not one)."""
        try:
            library, description = read_engine_file(path)
        except ValueError as exc:
            raise StoreError(str(exc)) from None
        self.record_engine(library, description.raw)

    def forget_launch(self, launch_id: str):
        """Drop what an unfinished launch may have stored, before it runs again (its figures come from the rerun)."""
        with self.transaction(f"the unfinished launch {launch_id}"):
            self.db.execute("DELETE FROM results WHERE launch_id=?", (launch_id,))
            self.db.execute("DELETE FROM contexts WHERE launch_id=?", (launch_id,))

    def ingest(self, source: str | Path | RecordFile, library: str | None = None, repetition: int | None = None,
               launch_id: str | None = None, validate: bool = False) -> int:
        """Add one record file, in one transaction. ``library``: the name the campaign launched it under (a declared
        library, e.g. "nccl" for an NCCL library); without it the name comes from the context (MPI version string,
        or NCCL for a run with --transport nccl: identity.library_label), and a result whose own ``transport`` is
        "nccl" is labelled by NCCL as well. Idempotent: a context whose run id is stored, and a result whose run id
        and identity (result_key) are stored, are not stored again. Returns the number of result rows added."""
        rf = source if isinstance(source, RecordFile) else read_records(source, validate=validate)
        with self.transaction(f"the records of {rf.path}"):
            return self._ingest(rf, library, repetition, launch_id)

    def _ingest(self, rf: RecordFile, library, repetition, launch_id) -> int:
        label_by_run, ctx_by_run = {}, {}
        for run, line in rf.runs_without_context().items():  # checked before anything is written
            stored = self.db.execute("SELECT library, json FROM contexts WHERE run_id=?", (run,)).fetchone()
            if stored is None:
                raise RecordError(f"{rf.path}:{line}: a result of run {run!r} without its context: no context line "
                                  f"of that run in the file, and none in the store (a result alone does not say which "
                                  f"library, hosts and settings measured it); ingest it with the file that holds its "
                                  f"context (that file first)")
            label_by_run[run], ctx_by_run[run] = stored[0], json.loads(stored[1])
        for ctx in rf.contexts:
            ctx_by_run[ctx["run_id"]] = ctx
            lib = library or library_label(ctx)
            label_by_run[ctx["run_id"]] = lib
            if self.db.execute("SELECT 1 FROM contexts WHERE run_id=?", (ctx["run_id"],)).fetchone():
                continue
            mpi = ctx.get("mpi") or {}
            self.db.execute(
                "INSERT INTO contexts VALUES (?,?,?,?,?,?,?,?,?,?)",
                (ctx["run_id"], launch_id, lib, repetition, ctx.get("benchmark"), ctx.get("world_size"),
                 mpi.get("library_version"), (mpi.get("gpu_awareness") or {}).get("verdict"), str(rf.path),
                 json.dumps(ctx, allow_nan=False)))
        planned = None
        if launch_id is not None:  # the campaign's intended path, used when the engine did not classify it
            r = self.db.execute("SELECT planned_path FROM launches WHERE launch_id=?", (launch_id,)).fetchone()
            planned = r[0] if r and r[0] not in ("ceilings", "managed") else None
        stored: dict[str, set[str]] = {}
        n = 0
        for res in rf.results:
            run = res.get("run_id")
            if run not in stored:
                stored[run] = {result_key(json.loads(r[0])) for r in
                               self.db.execute("SELECT json FROM results WHERE run_id=?", (run,))}
            key = result_key(res)
            if key in stored[run]:
                continue
            stored[run].add(key)
            lib = library or label_by_run[run]
            if library is None and res.get("transport") == "nccl":
                lib = nccl_label(ctx_by_run[run])
            row = self._result_row(res, lib, repetition, launch_id, ctx_by_run[run])
            if row["path_class"] is None and planned and not is_ceiling(res):
                row["path_class"] = planned
            cols = ", ".join(row)
            self.db.execute(f"INSERT INTO results ({cols}) VALUES ({', '.join('?' for _ in row)})",
                            list(row.values()))
            n += 1
        return n

    @staticmethod
    def _result_row(res: dict, library: str, repetition, launch_id, context: dict) -> dict:
        mem = res.get("memory") or {}
        path = res.get("path") or {}
        nothing = not_a_figure(res)  # not a figure: kept, with why, but never as an ok row
        row = {"run_id": res.get("run_id"), "launch_id": launch_id, "library": library, "repetition": repetition,
               "benchmark": res.get("benchmark"), "operation": operation_label(res),
               "status": "unsupported" if nothing else res.get("status"), "reason": nothing or res.get("reason"),
               "bytes": res.get("bytes"), "mem_send": mem.get("send"),
               "mem_recv": mem.get("recv"), "memory": memory_label(mem), "strategy": res.get("strategy"),
               "ranks": res.get("ranks"), "path_class": path.get("class"), "path_link": path.get("link"),
               "nominal_GBps": path.get("nominal_GBps"),
               "metrics": json.dumps(res["metrics"], allow_nan=False) if "metrics" in res else None,
               "config": json.dumps(configuration(context, res), sort_keys=True), "json": json.dumps(res, allow_nan=False)}
        return row

    # ---------------------------------------------------------------- reading
    def rows(self, sql: str, params=()) -> list[dict]:
        """Every read of the store: an SQLite error (damage the open did not see, a lock held too long) names the
        store's file."""
        try:
            return [dict(r) for r in self.db.execute(sql, params).fetchall()]
        except sqlite3.DatabaseError as exc:
            raise (damaged_store(Path(self.path), str(exc)) if "malformed" in str(exc) else
                   StoreError(f"{self.path}: {exc}")) from None

    def libraries(self) -> list[str]:
        return [r["library"] for r in self.rows("SELECT DISTINCT library FROM results ORDER BY library")]

    def results(self, benchmark: str | None = None, status: str | None = "ok", **eq) -> list[dict]:
        """Result rows (of that status; None: any), each with its launch's ``launch_load`` (JSON, None for a record
        ingested without a launch). The results model (model.py) reads them."""
        where, params = [], []
        if benchmark is not None:
            where.append("results.benchmark = ?")
            params.append(benchmark)
        if status is not None:
            where.append("results.status = ?")
            params.append(status)
        for k, v in eq.items():
            where.append(f"results.{k} = ?")
            params.append(v)
        sql = ("SELECT results.*, launches.load AS launch_load, launches.scaling AS launch_scaling FROM results "
               "LEFT JOIN launches "
               "ON launches.launch_id = results.launch_id" + (" WHERE " + " AND ".join(where) if where else ""))
        return self.rows(sql + " ORDER BY results.library, results.benchmark, results.memory, results.bytes", params)

    def engines(self) -> dict[str, dict]:
        """Library -> its engine's description as stored."""
        return {r["library"]: json.loads(r["description"]) for r in self.rows("SELECT * FROM engines")}

    def contexts(self) -> list[dict]:
        return self.rows("SELECT * FROM contexts ORDER BY library")

    def launches(self) -> list[dict]:
        return self.rows("SELECT * FROM launches ORDER BY launch_id")

    def skipped(self) -> list[dict]:
        return self.rows("SELECT * FROM skipped")

    def finished_launches(self) -> set[str]:
        """Launches that need not be redone on --resume (anything but interrupted/absent)."""
        return {r["launch_id"] for r in self.rows("SELECT launch_id, status FROM launches")
                if r["status"] not in (None, "interrupted", "running")}


# what makes a directory a results directory (a campaign's or a search's): its store, its plan, or a search's answer
RESULTS_DIRECTORY_FILES = ("store.sqlite", "plan.json", "tune.json")


def is_results_directory(path: Path) -> bool:
    """Whether ``path`` is a results directory, whatever of it is left (RESULTS_DIRECTORY_FILES)."""
    return path.is_dir() and any((path / name).exists() for name in RESULTS_DIRECTORY_FILES)


def open_results(path: str | Path) -> Store:
    """Open what the user points at: a results directory (its store.sqlite), a .sqlite file, a .jsonl file,
    or a directory of .jsonl files (ingested into an in-memory store). A store file is opened read-only and
    must be a gmb store (StoreError otherwise, the file left byte-identical)."""
    p = Path(path)
    if not p.exists():
        raise StoreError(f"{p}: no such file or directory")
    if is_results_directory(p):
        # A results directory is read through its store, which labels each record by the library its campaign
        # launched: reading its raw/ records instead would label them otherwise, without a word
        if not (p / "store.sqlite").is_file():
            what = "is not a file" if (p / "store.sqlite").exists() else "is missing"
            raise StoreError(f"{p / 'store.sqlite'}: {what}; {p} is a results directory, read through its store "
                             f"(its raw/ records, labelled by their own contexts instead: {p / 'raw'})")
        return Store(p / "store.sqlite", create=False)
    if p.is_file() and p.suffix in (".sqlite", ".db"):
        return Store(p, create=False)
    store = Store(":memory:")
    files = [p] if p.is_file() else sorted(p.rglob("*.jsonl"))
    if not files:
        raise StoreError(f"{p}: no store.sqlite and no .jsonl record files")
    for f in files:
        store.ingest(f)
    for f in ([] if p.is_file() else sorted(p.rglob("engines/*.json"))):
        store.ingest_engine_file(f)
    return store
