#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the harness test suite:   scripts/test-harness.sh [pytest arguments]
# Uses .venv (created, and the harness + its test extras installed, when missing). Tests that need real tools
# (cmake + Debian's Open MPI / MPICH, chromium, a running Slurm) run when those are present and are skipped
# with the reason otherwise; `-rs` lists the reasons. GMB_TEST_CACHE=DIR keeps the engines built by the tests
# between runs (default: a temporary directory per run).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
VENV="$ROOT/.venv"
if [[ ! -x "$VENV/bin/python" ]]; then
  "$PYTHON" -m venv "$VENV" || { rm -rf "$VENV"; echo "test-harness: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 2; }
fi
PY="$VENV/bin/python"
if ! "$PY" -c 'import gmb, pytest, jsonschema, matplotlib' 2>/dev/null; then
  "$PY" -m pip install -q --disable-pip-version-check -e "$ROOT/python[test]"
fi
exec "$PY" -m pytest "$ROOT/python/tests" -rs "$@"
