# SPDX-License-Identifier: BSD-3-Clause
"""What was measured: records read and checked (records), the store (store), the measured ceilings (peaks)."""
