# SPDX-License-Identifier: BSD-3-Clause
"""Reading gmb record files (JSON Lines, schema ``gmb.record/1``).

A record file holds one ``context`` line followed by ``result`` lines. The contract lives in the repository's
``schema/record.v1.json``, shipped as an identical copy inside the package (``gmb/schema/record.v1.json``, found with
``importlib.resources``; ``$GMB_SCHEMA`` names another file); validation against it is asked for
(``gmb ingest --validate``) and mandatory in the tests. It needs the ``jsonschema`` package, a dependency of gmb:
validation asked for without it is an error, never skipped. Every record read must be able to make a row of the
store (record_checks.row_problem), validated or not.
"""

from __future__ import annotations

import importlib.resources
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import SCHEMA_ID
from .record_checks import implausible_ceiling, measured_nothing, row_problem


class RecordError(ValueError):
    """A record file that cannot be read as gmb records."""


@dataclass
class RecordFile:
    path: Path
    contexts: list[dict] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)
    result_lines: list[int] = field(default_factory=list)  # the line of each result in the file
    # What a reader should be told about the file though it was read (an incomplete last line dropped, results
    # that measured nothing): ingest prints them, a campaign keeps them in the launch's reason and log
    notes: list[str] = field(default_factory=list)

    def runs_without_context(self) -> dict[str, int]:
        """The run ids of results that no context of this file describes, each with the line of its first result
        (its context must be stored already: a result alone does not say what measured it)."""
        described = {c["run_id"] for c in self.contexts}
        out: dict[str, int] = {}
        for rec, line in zip(self.results, self.result_lines):
            if rec["run_id"] not in described:
                out.setdefault(rec["run_id"], line)
        return out


SCHEMA_RESOURCE = ("schema", "record.v1.json")  # package data of gmb (pyproject.toml: package-data)


class MissingDependency(RecordError):
    """A package validation needs is not installed (exit 2, with how to install it)."""


def schema_path() -> Path | None:
    """The record schema: ``$GMB_SCHEMA``, else the one shipped in the package (gmb/schema/record.v1.json), as a
    file path (None when the package's copy is not a plain file, e.g. gmb imported from a zip)."""
    env = os.environ.get("GMB_SCHEMA")
    if env:
        return Path(env)
    resource = importlib.resources.files("gmb").joinpath(*SCHEMA_RESOURCE)
    return Path(str(resource)) if isinstance(resource, Path) and resource.is_file() else None


def load_schema() -> dict:
    env = os.environ.get("GMB_SCHEMA")
    if env:
        if not Path(env).is_file():
            raise RecordError(f"GMB_SCHEMA={env}: no such file (unset it to use the schema shipped with gmb)")
        try:
            return json.loads(Path(env).read_text(errors="replace"))
        except ValueError as exc:
            raise RecordError(f"GMB_SCHEMA={env}: not a JSON schema, not JSON ({exc}) (unset it to use the schema "
                              f"shipped with gmb)") from None
    resource = importlib.resources.files("gmb").joinpath(*SCHEMA_RESOURCE)
    if not resource.is_file():
        raise RecordError(f"the record schema is missing from the gmb package (gmb/"
                          f"{'/'.join(SCHEMA_RESOURCE)}): reinstall gmb (pip install ./python), or set GMB_SCHEMA "
                          f"to its path")
    return json.loads(resource.read_text(encoding="utf-8"))


def validator():
    """A jsonschema validator for one record line. MissingDependency when jsonschema is not installed: validation
    that was asked for is never skipped."""
    try:
        import jsonschema
    except ImportError:
        raise MissingDependency("validating records needs the jsonschema package, which is not installed: "
                                "pip install 'jsonschema>=4' (a dependency of gmb: reinstalling gmb with pip "
                                "installs it)") from None
    schema = load_schema()
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except (jsonschema.SchemaError, TypeError, AttributeError) as exc:
        env = os.environ.get("GMB_SCHEMA")
        raise RecordError(f"{f'GMB_SCHEMA={env}' if env else 'the record schema shipped with gmb'}: not a JSON schema "
                          f"({str(exc).splitlines()[0]})") from None
    return cls(schema)


def schema_violation(errors) -> str | None:
    """The schema's error that names the field at fault, as "at FIELD: what is wrong" (None: no error). Where the
    record is one of several alternatives (a context or a result), the errors of the alternative it came closest to
    (the fewest errors), and within it the best match, down to the deepest such field; never the whole record."""
    from jsonschema.exceptions import best_match

    best = best_match(errors)
    if best is None:
        return None
    while best.context:
        alternatives: dict = {}
        for e in best.context:
            alternatives.setdefault(e.relative_schema_path[0], []).append(e)
        best = best_match(min(alternatives.values(), key=len))
    field = ".".join(map(str, best.absolute_path)) or "the record"
    message = best.message if len(best.message) <= 200 else best.message[:200] + " ..."
    return f"at {field}: {message}"


JSON_WHITESPACE = " \t\r\n"  # what JSON allows between values; any other character on a line makes it no blank line


def _not_json_number(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _finite_or_null(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def read_records(path: str | os.PathLike, validate: bool = False) -> RecordFile:
    """Parse a JSONL record file. Blank lines are skipped; a line that is not a gmb record, or a record that cannot
    make a row (row_problem), raises RecordError naming file, line and what is wrong. A truncated last line from a
    killed launch is dropped, and said in ``notes``, when complete records precede it (a file whose only line is
    broken is not a record file)."""
    path = Path(path)
    out = RecordFile(path)
    check = validator() if validate else None
    # JSON Lines end at "\n" only: str.splitlines() would also break inside a record at characters a JSON string
    # may hold as they are (U+2028, U+0085, U+001C-U+001E), and call a line of them blank
    lines = path.read_text(errors="replace").removesuffix("\n").split("\n")
    nothing_measured = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip(JSON_WHITESPACE):
            continue
        try:
            # NaN, Infinity: not JSON, never stored; a number beyond a double (1e9999): null, as the engine writes a
            # figure that is not finite
            rec = json.loads(line, parse_constant=_not_json_number, parse_float=_finite_or_null)
        except ValueError as exc:
            if lineno == len(lines) and (out.contexts or out.results):  # killed mid-write: keep what is complete
                out.notes.append(f"{path}:{lineno}: the last line is an incomplete record (the file ends in the "
                                 f"middle of it, as when its writer is stopped): dropped")
                break
            raise RecordError(f"{path}:{lineno}: not JSON ({getattr(exc, 'msg', exc)})") from None
        if not isinstance(rec, dict) or rec.get("schema") != SCHEMA_ID:
            raise RecordError(f"{path}:{lineno}: not a {SCHEMA_ID} record")
        if check is not None:
            violation = schema_violation(check.iter_errors(rec))
            if violation:
                raise RecordError(f"{path}:{lineno}: schema violation {violation}")
        kind = rec.get("type")
        if kind not in ("context", "result"):
            raise RecordError(f"{path}:{lineno}: unknown record type {kind!r}")
        problem = row_problem(rec)
        if problem:
            raise RecordError(f"{path}:{lineno}: a {kind} record that cannot be stored: {problem}")
        if kind == "context":
            out.contexts.append(rec)
        else:
            out.results.append(rec)
            out.result_lines.append(lineno)
            if measured_nothing(rec):
                nothing_measured.append(lineno)
            elif implausible_ceiling(rec):
                out.notes.append(f"{path}:{lineno}: {implausible_ceiling(rec)}: stored as unsupported")
    if nothing_measured:
        out.notes.append(f"{path}: {len(nothing_measured)} ok result(s) moved no data (metrics.op_bytes 0, a size "
                         f"below one element; line {', '.join(map(str, nothing_measured[:5]))}"
                         f"{', ...' if len(nothing_measured) > 5 else ''}): stored as unsupported, not as figures")
    return out

