# SPDX-License-Identifier: BSD-3-Clause
"""The file of a gmb store: its layout, and the checks that refuse what is not a gmb store of this layout before
anything is written into it (another program's SQLite, a file that is not SQLite, a damaged store, another layout
version); SQLite's failures said as what they mean, naming the store (StoreError, OutputError).

One database per results directory (``store.sqlite``). Tables:
  meta      key/value, holds ``schema_version`` (SCHEMA_VERSION, this layout's) so that old stores are recognised
  launches  one row per engine launch planned by a campaign (status: ok, failed, timeout, unsupported,
            validation-failed, interrupted)
  skipped   points the planner decided not to run, with the reason
  engines   each library's engine description (gmb-bench list --format json), what the tables and answers know
            of its benchmarks, memory kinds, strategies and ceilings (engine_facts.py)
  contexts  one row per context record (the full JSON kept in ``json``)
  results   one row per result record: index columns (what the point is: library, benchmark, operation, size,
            memory, strategy, ranks, path) and the record itself (``json``), the one copy of its statistics; its
            ``operation`` is the record's operation and variant as one label (result_facts.operation_label: "put
            flush create", "persistent", "P=16"), so that records of one benchmark that differ by either are never
            merged; its ``config`` is the rest of the point's configuration (run_conditions.configuration: settings,
            options that change the measured work, binding, hosts) as canonical JSON
A launch's ``load`` says how busy this host was while it ran (load.py); ``nodes`` and ``scaling`` the node count it
was planned on and the scaling series it belongs to ("strong", "weak"), for a block over node counts.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from ..outputs import OutputError, disk_full

SCHEMA_VERSION = 4

# the tables of a store, made where they are missing (a store opened again keeps its rows)
TABLES = """
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


class StoreError(RuntimeError):
    """A file that is not a gmb store of this layout, or a read or write of one that failed (its message names the
    store)."""


BUSY_TIMEOUT_S = 5.0  # how long a writer waits for another one (SQLite's busy timeout)


def check_store_file(path: Path, create: bool):
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
            raise damaged_store(path, str(exc)) from None
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
        said = " ".join(ln for ln in damage.splitlines() if not ln.startswith("***"))
        raise damaged_store(path, "SQLite's check: " + said)
    if version is not None:
        return
    if tables:
        raise StoreError(f"{path}: not a gmb store (an SQLite database without meta.schema_version, tables: "
                         f"{', '.join(sorted(tables))}); left untouched")
    if not create:
        raise StoreError(f"{path}: an empty file, not a gmb store; left untouched")


def damaged_store(path: Path, cause: str) -> StoreError:
    return StoreError(f"{path}: a damaged gmb store ({cause}); left untouched: restore it from a copy, or make a new "
                      f"one from its record files (gmb ingest NEW.sqlite RESULTS/raw/*.jsonl RESULTS/engines/*.json)")


def write_error(path: str, what: str, exc: sqlite3.DatabaseError):
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
                         f"{BUSY_TIMEOUT_S:g} s); nothing of it was stored, try again when it is done") from None
    if "malformed" in str(exc):
        raise damaged_store(Path(path), str(exc)) from None
    raise StoreError(f"{path}: cannot {what}: {exc}; nothing of it was stored") from None


def check_version(db: sqlite3.Connection, path: str):
    """Refuse a store of another layout version than SCHEMA_VERSION (one without a version yet passes: a new
    store)."""
    version = _existing_version(db)
    if version is not None and version != SCHEMA_VERSION:
        raise StoreError(f"{path}: store layout version {version}, this gmb reads {SCHEMA_VERSION}"
                         + (": make a new store from its record files (gmb ingest NEW.sqlite RESULTS/raw/*.jsonl "
                            "RESULTS/engines/*.json)" if version < SCHEMA_VERSION else ""))


def _existing_version(db: sqlite3.Connection) -> int | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.DatabaseError:
        return None
    return int(row[0]) if row else None
