#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Opens a gmb report in headless Chromium and checks that it renders (the screenshot is not blank), that its first
# figure lies within the first screen (1400 x 900), that every <img> loaded (naturalWidth > 0) and that the result
# tables hold numbers.
#   scripts/check-report.sh REPORT.html [--screenshot OUT.png] [--first-screen FIRST.png] [--json]
# Exit status: 0 all checks pass, 1 a check failed, 2 no Chromium (Debian: apt-get install chromium) / bad input.
# Uses .venv's Python when present (numpy/matplotlib read the screenshot), else python3 with python/src.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -lt 1 ]]; then
  echo "usage: $0 REPORT.html [--screenshot OUT.png] [--first-screen FIRST.png] [--json]" >&2
  exit 2
fi
PY="$ROOT/.venv/bin/python"
if [[ -x "$PY" ]] && "$PY" -c 'import gmb.report.checkreport' 2>/dev/null; then
  exec "$PY" -m gmb.report.checkreport "$@"
fi
export PYTHONPATH="$ROOT/python/src${PYTHONPATH:+:$PYTHONPATH}"
exec "${PYTHON:-python3}" -m gmb.report.checkreport "$@"
