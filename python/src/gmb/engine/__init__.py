# SPDX-License-Identifier: BSD-3-Clause
"""The engine per library: built or found (build, from its sources, in its build_cache; engines), what it says about
itself (description), and what it can do with the machine (doctor; before a run, its CUDA awareness: awareness)."""
