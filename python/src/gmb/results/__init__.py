# SPDX-License-Identifier: BSD-3-Clause
"""What was measured: records read and checked (records), the store (store), the results model every report reads
(model: records parsed once, what a point is), the measured ceilings (peaks)."""
