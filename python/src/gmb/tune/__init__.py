# SPDX-License-Identifier: BSD-3-Clause
"""`gmb tune`: which settings of each library move data fastest on each path, found by measurement (session.py runs
it, search.py decides, answer.py says it)."""
