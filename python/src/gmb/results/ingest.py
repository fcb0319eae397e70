# SPDX-License-Identifier: BSD-3-Clause
"""`gmb ingest`: record files (and their engines' descriptions) added to a store. Every file is read (and checked)
before anything is stored: a file that cannot be read, or whose records name another MPI library than the one
asked for, stores nothing; the files are stored together or not at all."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UsageError
from ..machine import identity, libraries, mpilibs
from . import records, store
from .engine_facts import read_engine_file


def ingest_command(db: Path, files: list[str], library: str | None, config: str | None, no_detect: bool,
                   no_check: bool, validate: bool) -> int:
    """The records of ``files`` (.jsonl; .json: engine files) into the store ``db`` (made where absent), under
    ``library`` where given, checked against it unless ``no_check`` (``config``, ``no_detect``: the libraries gmb
    knows, as for `gmb libs`; ``validate``: every line against the record schema)."""
    if not db.parent.is_dir():
        what = "is not a directory" if db.parent.exists() else "does not exist"
        raise UsageError(f"{db}: the directory {db.parent} {what} (gmb ingest makes the store file, not the directory "
                         f"it goes in)")
    try:
        engines = [read_engine_file(f) for f in files if Path(f).suffix == ".json"]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    read = [records.read_records(f, validate=validate) for f in files if Path(f).suffix != ".json"]
    if library and not no_check:
        _check_library(read, library, config, no_detect)
    for rf in read:
        for note in rf.notes:
            print(f"gmb ingest: note: {note}", file=sys.stderr)
        objects = [identity.library_object(ctx) for ctx in rf.contexts]
        for path in sorted({o.get("loaded_realpath") for o in objects if o.get("matches_build") is False} - {None, ""}):
            print(f"gmb ingest: note: {rf.path}: the engine ran {path}, not the library it was built against; "
                  f"labelled by what ran", file=sys.stderr)
    new = not db.exists()
    try:
        with store.Store(db) as st, st.transaction(f"the records of {', '.join(str(rf.path) for rf in read)}"):
            n = sum(st.ingest(rf, library=library) for rf in read)  # all files or none
            for engine_library, description in engines:
                st.record_engine(library or engine_library, description.raw)
    except records.RecordError:
        if new:  # refused with nothing stored: no empty store is left in its place
            db.unlink(missing_ok=True)
        raise
    already = sum(len(rf.results) for rf in read) - n
    print(f"{n} result records into {db}" +
          (f"; {already} already there (same run and point), not stored again" if already else ""))
    return 0


def _check_library(read: list, library: str, config: str | None, no_detect: bool) -> None:
    """UsageError where the records ran another library than ``library``: for a library gmb knows (`gmb libs`), the
    launch check; for a name it does not know, the name's family and version. A name gmb does not know whose records
    agree with it is stored under it, with a note."""
    try:
        known = {lib.name: lib for lib in libraries.all_libraries(config, detect_libs=not no_detect)}
    except mpilibs.ConfigError as exc:
        raise UsageError(str(exc)) from None
    lib = known.get(library)

    def why_not(ctx):
        return identity.mismatch(lib, ctx) if lib else identity.unknown_name_mismatch(library, ctx)

    wrong = list(dict.fromkeys(f"{rf.path}: {why}" for rf in read for why in map(why_not, rf.contexts) if why))
    if wrong and lib is not None:
        raise UsageError(f"records that ran another library than {library} (nothing stored):\n  "
                         + "\n  ".join(wrong))
    if wrong:
        raise UsageError(f"{library} is not a library gmb found or was declared (gmb libs), and the records "
                         f"say another one (nothing stored):\n  " + "\n  ".join(wrong) + "\n"
                         f"Declare {library} in a libraries file (--config FILE, a [[library]] named "
                         f"{library!r}) so that its records are checked, or store them under this name "
                         f"anyway with --no-check")
    if lib is None:
        said = sorted({identity.library_label(ctx) for rf in read for ctx in rf.contexts})
        print(f"gmb ingest: note: {library} is not a library gmb found or was declared (gmb libs); stored "
              f"under it, as its records say {', '.join(said) or 'nothing of their library'}", file=sys.stderr)
