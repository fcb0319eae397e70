# SPDX-License-Identifier: BSD-3-Clause
"""Errors that mean the user asked for something that cannot be done as asked, and the hint such a message gives."""
from __future__ import annotations

import difflib
from collections.abc import Iterable


class UsageError(Exception):
    """Bad input from the user: message printed, exit status 2, nothing done."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """"; did you mean 'x'?" naming the entry of ``known`` closest to a mistyped ``name``, or "" when none is close:
    what every "unknown ..." message appends."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
