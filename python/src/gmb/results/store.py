# SPDX-License-Identifier: BSD-3-Clause
"""SQLite store of gmb records.

One database per results directory (``store.sqlite``). Tables:
  meta      key/value, holds ``schema_version`` (this module's layout) so that old stores are recognised
  launches  one row per engine launch planned by a campaign (status: ok, failed, timeout, unsupported,
            validation-failed, interrupted)
  skipped   points the planner decided not to run, with the reason
  engines   each library's engine description (gmb-bench list --format json), what the tables and answers know
            of its benchmarks, memory kinds, strategies and ceilings (engine_facts.py)
  contexts  one row per context record (the full JSON kept in ``json``)
  results   one row per result record: index columns (what the point is: library, benchmark, operation, size,
            memory, strategy, ranks, path) and the record itself (``json``), the one copy of its statistics; its
            ``operation`` is the record's operation and variant as one label (records.operation_label: "put flush
            create", "persistent", "P=16"), so that records of one benchmark that differ by either are never merged;
            its ``config`` is the rest of the point's configuration (records.configuration: settings, options that
            change the measured work, binding, hosts) as canonical JSON
A launch's ``load`` says how busy this host was while it ran (load.py); ``nodes`` and ``scaling`` the node count it
was planned on and the scaling series it belongs to ("strong", "weak"), for a block over node counts.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from ..outputs import OutputError, disk_full
from ..machine.identity import library_label, nccl_label
from .engine_facts import read_engine_file
from .records import (STAT_OBJECTS, RecordError, RecordFile, configuration, is_ceiling, memory_label,
                      not_a_figure, operation_label, read_records)

SCHEMA_VERSION = 4

# statistics object of a record -> the short name a point's metric goes by ("t", "bw", ...)
STAT_COLUMNS = {"time_us": "t", "bandwidth_GBps": "bw", "busbw_GBps": "busbw", "message_rate_Mps": "rate"}

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS launches (
  launch_id TEXT PRIMARY KEY, campaign TEXT, library TEXT, benchmark TEXT, repetition INTEGER,
  memory TEXT, strategy TEXT, ranks INTEGER, planned_path TEXT, argv TEXT, status TEXT, rc INTEGER,
  reason TEXT, started_utc TEXT, wall_s REAL, raw_file TEXT, log_file TEXT, load TEXT, nodes INTEGER, scaling TEXT);
CREATE TABLE IF NOT EXISTS skipped (campaign TEXT, library TEXT, what TEXT, reason TEXT);
CREATE TABLE IF NOT EXISTS engines (library TEXT PRIMARY KEY, description TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS contexts (
  run_id TEXT, launch_id TEXT, library TEXT, repetition INTEGER, benchmark TEXT, world_size INTEGER,
  library_version TEXT, gpu_awareness TEXT, source TEXT, json TEXT);
CREATE TABLE IF NOT EXISTS results (
  id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, launch_id TEXT, library TEXT, repetition INTEGER,
  benchmark TEXT, operation TEXT, status TEXT, reason TEXT, bytes INTEGER, mem_send TEXT, mem_recv TEXT,
  memory TEXT, strategy TEXT, ranks INTEGER, path_class TEXT, path_link TEXT, nominal_GBps REAL,
  metrics TEXT, config TEXT, json TEXT);
CREATE INDEX IF NOT EXISTS results_key ON results(benchmark, library, bytes);
CREATE INDEX IF NOT EXISTS results_run ON results(run_id);
"""


def result_key(result: dict) -> str:
    """A result's identity within its run: every field but its figures (the statistics objects), as canonical JSON.
    Which point it is can live anywhere else (``metrics.pair`` names the GPU pair of a copy ceiling). With the run
    id it names one measured result, so the same record stored twice is recognised."""
    return json.dumps({k: v for k, v in result.items() if k not in STAT_OBJECTS}, sort_keys=True)


class StoreError(RuntimeError):
    pass


_BUSY_TIMEOUT_S = 5.0  # how long a writer waits for another one (SQLite's busy timeout)


def _check_store_file(path: Path, create: bool):
    """Refuse a file that is not a gmb store, reading it only (read-only connection): a foreign SQLite database,
    a file that is not SQLite at all, or (``create=False``) an empty or absent file."""
    if not path.exists():
        if create:
            return
        raise StoreError(f"{path}: no such file")
    if path.is_dir():
        raise StoreError(f"{path}: a directory, not a gmb store")
    try:
        ro = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in ro.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            version = (ro.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
                       if "meta" in tables else None)
            # Damage past the first pages shows only when they are read: look at every page now, so that it is
            # said here with the file's name and not by whichever table reads them first
            damage = ro.execute("PRAGMA quick_check(1)").fetchone()[0] if version is not None else "ok"
        finally:
            ro.close()
    except sqlite3.DatabaseError as exc:
        if "malformed" in str(exc):
            raise _damaged(path, str(exc)) from None
        journal = Path(f"{path}-journal")
        if "readonly" in str(exc) and journal.exists():
            # a hot journal: SQLite plays it back before anything is read, which a read-only open cannot do
            why = (f"{path}: cannot be read as it is: beside it lies {journal}, a rollback journal (a writer stopped "
                   f"in the middle of a transaction leaves one) that SQLite must play back first; left untouched: once "
                   f"no process writes the store, open it for writing once (python3 -c \"import sqlite3; "
                   f"sqlite3.connect({str(path)!r}).execute('PRAGMA quick_check')\"), which plays the journal back, "
                   f"or drops it where it is not one")
            raise StoreError(why) from None
        raise StoreError(f"{path}: not a gmb store ({exc}); left untouched") from None
    if damage != "ok":
        raise _damaged(path, "SQLite's check: " + " ".join(ln for ln in damage.splitlines() if not ln.startswith("***")))
    if version is not None:
        return
    if tables:
        raise StoreError(f"{path}: not a gmb store (an SQLite database without meta.schema_version, tables: "
                         f"{', '.join(sorted(tables))}); left untouched")
    if not create:
        raise StoreError(f"{path}: an empty file, not a gmb store; left untouched")


def _damaged(path: Path, cause: str) -> StoreError:
    return StoreError(f"{path}: a damaged gmb store ({cause}); left untouched: restore it from a copy, or make a new "
                      f"one from its record files (gmb ingest NEW.sqlite RESULTS/raw/*.jsonl RESULTS/engines/*.json)")


def _store_write_error(path: str, what: str, exc: sqlite3.DatabaseError):
    """A failed write said as what it means, naming the store: a full disk or a store that cannot be written
    (OutputError, exit 1), a store another process is writing, a damaged one, anything else SQLite says
    (StoreError, exit 2)."""
    if disk_full(exc):
        raise OutputError(f"{path}: cannot {what}: disk full; nothing of it was stored") from None
    if "readonly" in str(exc) or "unable to open" in str(exc):
        raise OutputError(f"{path}: cannot {what}: the store cannot be written ({exc}: a read-only file, directory "
                          f"or file system); nothing of it was stored") from None
    if "locked" in str(exc):
        raise StoreError(f"{path}: cannot {what}: another process is writing to the store (still locked after "
                         f"{_BUSY_TIMEOUT_S:g} s); nothing of it was stored, try again when it is done") from None
    if "malformed" in str(exc):
        raise _damaged(Path(path), str(exc)) from None
    raise StoreError(f"{path}: cannot {what}: {exc}; nothing of it was stored") from None


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
            _check_store_file(Path(path), create)
        if not (create or self.path == ":memory:"):
            self.db = sqlite3.connect(f"file:{quote(str(Path(path).resolve()))}?mode=ro", uri=True)
            self.db.row_factory = sqlite3.Row
            self._check_version()
            return
        try:
            self.db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S)
        except sqlite3.OperationalError as exc:
            _store_write_error(self.path, "open the store for writing", exc)
        self.db.row_factory = sqlite3.Row
        self._check_version()
        try:
            self.db.executescript(_DDL)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            self.db.commit()
        except sqlite3.OperationalError as exc:
            self.db.close()
            if new_file:  # a store that could not be started is not left behind half-made
                for leftover in (Path(path), Path(f"{path}-journal")):
                    leftover.unlink(missing_ok=True)
            _store_write_error(self.path, "open the store for writing", exc)

    def _check_version(self):
        version = self._existing_version()
        if version is not None and version != SCHEMA_VERSION:
            raise StoreError(f"{self.path}: store layout version {version}, this gmb reads {SCHEMA_VERSION}"
                             + (": make a new store from its record files (gmb ingest NEW.sqlite RESULTS/raw/*.jsonl RESULTS/engines/*.json)"
                                if version < SCHEMA_VERSION else ""))

    def _existing_version(self):
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.DatabaseError:
            return None
        return int(row[0]) if row else None

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
                _store_write_error(self.path, f"store {what}", exc)
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
            raise (_damaged(Path(self.path), str(exc)) if "malformed" in str(exc) else
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
