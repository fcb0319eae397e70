#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Quick start, from the repository root:   scripts/quickstart.sh [extra `gmb run` arguments]
#
#  1. creates .venv (python3 -m venv) unless it exists, installs the harness into it (pip install -e python);
#     offline (no package index), runs the harness from python/src with python3's own packages when it has
#     matplotlib;
#  2. finds the MPI libraries of this machine (PATH, Debian's mpirun.openmpi / mpiexec.mpich, /opt, ...);
#     when there is none, installs MPICH from PyPI into .venv (pip install mpich: mpiexec, mpicc, headers);
#  3. gmb run --quick: builds one engine per library (cached in ${GMB_CACHE:-~/.cache/gmb}), runs the quick
#     campaign into a new results/quick-<UTC time>/ and writes report.html there;
#  4. prints where the report is.
# Running it again reuses .venv and the engines and makes a new results directory (nothing is overwritten).
# Needs: python3 (>= 3.11, with venv: Debian's python3-venv), cmake (>= 3.22), a C and C++ compiler (g++).
# Environment: PYTHON (default python3), GMB_QUICKSTART_PYPI_MPI=1 installs and uses the PyPI MPICH even
# when a system MPI exists (tests the fallback), GMB_CACHE (engine cache).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
VENV="$ROOT/.venv"

say() { printf '\033[1mquickstart:\033[0m %s\n' "$*" >&2; }
die() { printf 'quickstart: error: %s\n' "$*" >&2; exit 2; }

command -v "$PYTHON" >/dev/null || die "$PYTHON not found (Debian: apt-get install python3 python3-venv)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die "Python >= 3.11 needed ($("$PYTHON" --version 2>&1))"
command -v cmake >/dev/null || die "cmake not found (Debian: apt-get install cmake)"
command -v c++ >/dev/null || command -v g++ >/dev/null || die "no C++ compiler (Debian: apt-get install g++)"

# 1. environment + harness
if [[ ! -x "$VENV/bin/python" ]]; then
  say "creating $VENV"
  if ! "$PYTHON" -m venv "$VENV"; then
    rm -rf "$VENV"
    die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  fi
fi
PY="$VENV/bin/python"
GMB=("$VENV/bin/gmb")
if ! "$PY" -c 'import gmb, matplotlib' 2>/dev/null || [[ ! -x "$VENV/bin/gmb" ]]; then
  say "installing the harness (pip install -e python)"
  # (PIP_* in the environment: pip's own subprocess, which installs the build dependencies, retries the same)
  if ! PIP_RETRIES=1 PIP_TIMEOUT=15 "$PY" -m pip install -q --disable-pip-version-check -e "$ROOT/python" \
       > "$VENV/.pip-install.log" 2>&1; then
    # no package index reachable (an offline GPU node): the harness runs from the source tree with the packages of
    # this Python, when it has what the harness needs
    if ! "$PYTHON" -c 'import matplotlib' 2>/dev/null; then
      tail -n 15 "$VENV/.pip-install.log" >&2
      die "pip could not install the harness (above; all of it: $VENV/.pip-install.log) and $PYTHON has no matplotlib"
    fi
    say "pip could not install the harness (offline? $VENV/.pip-install.log): running it from $ROOT/python/src" \
        "with $PYTHON's packages"
    PY="$(command -v "$PYTHON")"
    GMB=("$PY" -m gmb)
    export PYTHONPATH="$ROOT/python/src${PYTHONPATH:+:$PYTHONPATH}"
  fi
fi
export VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH"

# 2. an MPI
libs_json() { "${GMB[@]}" libs --json 2>/dev/null || echo '[]'; }
count_libs() { "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
run_args=()
if [[ "${GMB_QUICKSTART_PYPI_MPI:-0}" == 1 ]]; then
  nlibs=0
else
  nlibs="$(libs_json | count_libs)"
fi
if [[ "$nlibs" == 0 ]]; then
  if [[ ! -x "$VENV/bin/mpicc" || ! -x "$VENV/bin/mpiexec" ]]; then
    say "no MPI library found: installing MPICH from PyPI into $VENV (pip install mpich)"
    "$PY" -m pip install -q --disable-pip-version-check mpich \
      || die "pip install mpich failed; install an MPI instead (Debian: apt-get install libopenmpi-dev openmpi-bin)"
  fi
  # use the venv's library only
  name="$("${GMB[@]}" libs --json | "$PY" -c '
import json, sys
venv = sys.argv[1]
libs = [l for l in json.load(sys.stdin) if l["prefix"] == venv]
print(libs[0]["name"] if libs else "")' "$VENV")"
  [[ -n "$name" ]] || die "MPICH from PyPI was installed but gmb does not detect it (see: ${GMB[*]} libs)"
  run_args+=(--library "$name")
fi
say "MPI libraries:"
"${GMB[@]}" libs >&2

# 3. build + quick campaign (a new results directory every time)
say "gmb run --quick ${run_args[*]:-} $*  (builds one engine per library on first use; takes a few minutes)"
set +e
"${GMB[@]}" run --quick "${run_args[@]}" "$@" | tee "$VENV/.quickstart-last.out"
rc=${PIPESTATUS[0]}
set -e

# 4. where the report is
outdir="$(tail -n 1 "$VENV/.quickstart-last.out")"
[[ "$outdir" == /* ]] || outdir="$ROOT/$outdir"
if [[ -f "$outdir/report.html" ]]; then
  say "report: $outdir/report.html"
  say "tables: ${GMB[*]} tables $outdir"
  # the libraries with records: compare takes one library per result set
  mapfile -t measured < <("$PY" -c 'import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}/store.sqlite?mode=ro", uri=True)
print("\n".join(r[0] for r in db.execute("SELECT DISTINCT library FROM launches WHERE status = \"ok\" ORDER BY 1")))
' "$outdir" 2>/dev/null || true)
  if (( ${#measured[@]} > 1 )); then
    say "compare one library with another:" \
        "${GMB[*]} compare $outdir $outdir --a-library ${measured[0]} --b-library ${measured[1]}"
  fi
  if (( ${#measured[@]} > 0 )); then
    say "compare a later run with this one:" \
        "${GMB[*]} compare $outdir LATER_RESULTS --a-library ${measured[0]} --b-library ${measured[0]}"
  fi
  [[ "${GMB[0]}" == "$VENV/bin/gmb" ]] && say "gmb in your shell: source $VENV/bin/activate"
else
  say "no report was written (exit status $rc); see the messages above"
fi
exit "$rc"
