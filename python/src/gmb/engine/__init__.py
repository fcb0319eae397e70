# SPDX-License-Identifier: BSD-3-Clause
"""The engine per library: built or found (build, engines), what it says about itself (description), and what it can do with the machine (doctor)."""
