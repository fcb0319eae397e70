# SPDX-License-Identifier: BSD-3-Clause
"""`gmb tune`: which settings of each library move data fastest on each path, found by measurement (session.py holds
a session, search.py runs the search, tuner.py its launches, selection.py and confirmation.py decide, answer.py says
it)."""
