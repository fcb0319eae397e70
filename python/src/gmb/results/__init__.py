# SPDX-License-Identifier: BSD-3-Clause
"""What was measured: record files read (records) and checked (record_checks), what a record says of its point
(result_facts) and of what it ran under (run_conditions), the store (store, its file: store_file), the results model
every report reads (model: the store's rows read once, stored_rows; what a point is, points), the statistics claims
rest on (inference, claim_checks, t_distribution) and their digits (significant_digits), the measured ceilings
(peaks)."""
