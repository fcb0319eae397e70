# SPDX-License-Identifier: BSD-3-Clause
"""Shape checks shared by the harness's TOML readers (campaign files, library configs, compare tolerances), and the
one value writer its TOML writers share."""

from __future__ import annotations

import json


def typename(v) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(v), type(v).__name__)


def array_of_tables(data: dict, key: str, source, error: type[Exception], each: str = "") -> list[dict]:
    """``data[key]`` as a list of tables ([] when absent); a single [key] table or anything else raises ``error``
    saying how to write it. ``each``: what one table stands for, e.g. "one per block"."""
    v = data.get(key, [])
    if isinstance(v, dict):
        raise error(f"{source}: [{key}] must be written [[{key}]] (an array of tables{', ' + each if each else ''})")
    if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
        raise error(f"{source}: {key} must be [[{key}]] tables (got {typename(v)}: {json.dumps(v, default=str)[:60]})")
    return v


def toml_value(v) -> str:
    """A value as a TOML line holds it: a table inline ({ k = v, ... }, {} when empty), a list holding tables as a
    list of inline tables; strings, numbers, booleans and lists of them as JSON spells them (the same in TOML)."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }" if v else "{}"
    if isinstance(v, list) and any(isinstance(x, dict) for x in v):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(v)
