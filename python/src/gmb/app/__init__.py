# SPDX-License-Identifier: BSD-3-Clause
"""An application's question: its communication profiled (profiling), priced from a store (predict), and run under
each configuration to verify the prediction (commands)."""
