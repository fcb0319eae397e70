# SPDX-License-Identifier: BSD-3-Clause
"""Errors that mean the user asked for something that cannot be done as asked."""


class UsageError(Exception):
    """Bad input from the user: message printed, exit status 2, nothing done."""
