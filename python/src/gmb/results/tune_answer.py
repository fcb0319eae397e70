# SPDX-License-Identifier: BSD-3-Clause
"""tune.json read back, by `gmb tune --verify` and `gmb run --tuned`: its shape checked first, so that a damaged or
edited file is refused in one line that names it and what is wrong in it (UsageError, exit 2), before anything
runs or a results directory exists. What it checks is what those readers use: the races (their recommendations and
the identity of their records), the comparisons, the tuned configurations (names once each; settings that are
environment variables with string values)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import UsageError
from ..machine.knobs import ENV_NAME

ANSWER_FILE = "tune.json"
# the verdicts a search gives a knob value (tune/confirmation.verdict): the claims (from confirmation launches),
# then what is no claim
SEARCH_VERDICTS = ("better", "mixed", "worse", "selected, not confirmed", "broken", "cut early: no claim",
                   "not measured")
# every verdict a tune.json may give a knob value, in the order the answers list them (tune/answer.py's printout, the
# report's Settings section): a search's, then the words of searches before the confirmation, whose tune.json files
# are still read. tune/ writes them, report/ reads them
VERDICTS = SEARCH_VERDICTS + ("no difference", "cut early (looked better)", "cut early (no difference)",
                              "cut early (looked worse)")


class _Bad(ValueError):
    """What is wrong in the answer, and where."""


_KINDS = {"an object": dict, "a list": list, "a string": str, "true or false": bool}


def _expect(value, kind: str, where: str):
    ok = isinstance(value, int) and not isinstance(value, bool) if kind == "an integer" else \
        isinstance(value, _KINDS[kind])
    if not ok:
        raise _Bad(f"{where} is {json.dumps(value)[:40]}, not {kind}")
    return value


def _fields(obj, where: str, **kinds: str) -> dict:
    """``obj`` is an object with each of ``kinds``' keys, of that kind."""
    _expect(obj, "an object", where)
    for key, kind in kinds.items():
        if key not in obj:
            raise _Bad(f"{where} has no {key!r}")
        _expect(obj[key], kind, f"{where}.{key}")
    return obj


def _settings(value, where: str) -> None:
    _expect(value, "an object", where)
    for name, setting in value.items():
        if not ENV_NAME.fullmatch(name):
            raise _Bad(f"{where}: {name!r} is no environment variable name (letters, digits and _, not first a digit)")
        _expect(setting, "a string", f"{where}.{name}")


def _check_races(races: list) -> None:
    for i, race in enumerate(races):
        where = f"races[{i}]"
        _fields(race, where, configuration="a string", path="a string", metric="a string", unit="a string",
                benchmark="a string", higher_is_better="true or false", arms="a list", recommendation="a list")
        for j, arm in enumerate(race["arms"]):
            _settings(_fields(arm, f"{where}.arms[{j}]", key="a string", settings="an object")["settings"],
                      f"{where}.arms[{j}].settings")
        for j, r in enumerate(race["recommendation"]):
            _fields(r, f"{where}.recommendation[{j}]", arm="a string", settings="an object", sizes="a list")
            _settings(r["settings"], f"{where}.recommendation[{j}].settings")
            for k, size in enumerate(r["sizes"]):
                _fields(size, f"{where}.recommendation[{j}].sizes[{k}]", bytes="an integer")
        if race.get("identity") is not None:
            _settings(_fields(race["identity"], f"{where}.identity", point="an object", settings="an object")
                      ["settings"], f"{where}.identity.settings")


def _check_comparisons(comparisons: list, races: list) -> None:
    raced = {(r["configuration"], r["path"]) for r in races}
    for i, c in enumerate(comparisons):
        where = f"comparisons[{i}]"
        _fields(c, where, path="a string", bytes="an integer", unit="a string", best="a string", ranking="a list")
        for j, entry in enumerate(c["ranking"]):
            _fields(entry, f"{where}.ranking[{j}]", configuration="a string", figure="a list", ahead_of="a list")
        for conf in [c["best"], *(e["configuration"] for e in c["ranking"])]:
            if (conf, c["path"]) not in raced:
                raise _Bad(f"{where} names {conf} on {c['path']}, which is no race of it")


def _check_tuned(tuned: list) -> None:
    names = set()
    for i, t in enumerate(tuned):
        where = f"tuned[{i}]"
        _fields(t, where, name="a string", base="a string", settings="an object", paths="a list")
        _settings(t["settings"], f"{where}.settings")
        if not t["name"] or not t["base"]:
            raise _Bad(f"{where}: an empty name or base")
        if t["name"] in names:
            raise _Bad(f"{where}: a second tuned configuration named {t['name']!r} (each name once)")
        names.add(t["name"])


def read_answer(tune_dir: Path, option: str) -> dict:
    """The answer in ``tune_dir``/tune.json (``option``: the command-line option that named the directory, for the
    messages), its shape checked; UsageError naming the file and what is wrong otherwise."""
    path = tune_dir / ANSWER_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"{option} {tune_dir}: no {ANSWER_FILE} (give the results directory of a `gmb tune`)"
                         ) from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path} cannot be read: {exc}") from None
    try:
        _fields(data, ANSWER_FILE, races="a list", comparisons="a list", tuned="a list")
        _check_races(data["races"])
        _check_comparisons(data["comparisons"], data["races"])
        _check_tuned(data["tuned"])
    except _Bad as exc:
        raise UsageError(f"{path}: {exc} (not an answer as `gmb tune` writes it: search again, or restore the "
                         "file)") from None
    return data
