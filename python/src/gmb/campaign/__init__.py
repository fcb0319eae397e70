# SPDX-License-Identifier: BSD-3-Clause
"""What to run: a campaign file or one generated from the machine (spec, defaults), expanded into launches (plan), with their duration estimated (estimate)."""
