#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The engine and the harness as a site installs them, used with no checkout around:
#   scripts/test-install.sh
#  1. the engine configured without tests, built and installed with `cmake --install` into a fresh prefix
#     (bin/gmb-bench, share/gmb/schema, share/gmb/campaigns);
#  2. the harness installed from ./python with pip (not editable) into a fresh venv;
#  3. from an empty directory, with the prefix's bin on PATH and no GMB_SOURCE: `gmb run` of a small campaign on
#     the installed engine (no build), its records validated against the schema the harness ships, a report; and
#     `gmb profile` of an MPI program (the installed engine itself) with the installed profiler (lib/).
# Uses the first Open MPI or MPICH found; everything goes to a temporary directory, removed at the end.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gmb-install-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
say() { printf 'test-install: %s\n' "$*" >&2; }
fail() { printf 'test-install: FAILED: %s\n' "$*" >&2; exit 1; }

mpicc="$(command -v mpicc.openmpi || command -v mpicc.mpich || command -v mpicc || true)"
[[ -n "$mpicc" ]] || fail "no MPI compiler wrapper (Debian: apt-get install libopenmpi-dev openmpi-bin)"

say "engine: configure (no tests), build, cmake --install into $WORK/prefix"
cmake -S "$ROOT" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DGMB_ENABLE_CUDA=OFF -DBUILD_TESTING=OFF \
  -DMPI_C_COMPILER="$mpicc" > "$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; fail "configure"; }
cmake --build "$WORK/build" -j "$(nproc)" > "$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; fail "build"; }
cmake --install "$WORK/build" --prefix "$WORK/prefix" > "$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; fail "install"; }
for f in bin/gmb-bench lib*/libgmb-profile.so share/gmb/schema/record.v1.json share/gmb/campaigns/gpu-paper.toml share/doc/gmb/docs/omb.md; do
  compgen -G "$WORK/prefix/$f" > /dev/null || fail "cmake --install did not install $f"  # a pattern: lib/ or lib64/
done

say "harness: pip install $ROOT/python (not editable) into a fresh venv"
"$PYTHON" -m venv "$WORK/venv"
# from a copy: a non-editable install builds in its source directory (python/build), which stays out of the checkout
tar -C "$ROOT" --exclude=python/build --exclude='*.egg-info' --exclude=__pycache__ -cf - python | tar -C "$WORK" -xf -
"$WORK/venv/bin/python" -m pip install -q --disable-pip-version-check "$WORK/python" > "$WORK/pip.log" 2>&1 ||
  { tail -30 "$WORK/pip.log"; fail "pip install ./python"; }

say "a campaign on the installed engine, from an empty directory"
mkdir "$WORK/run" && cd "$WORK/run"
export PATH="$WORK/prefix/bin:$WORK/venv/bin:$PATH"
unset GMB_SOURCE GMB_SCHEMA GMB_ENGINE PYTHONPATH
export GMB_CACHE="$WORK/cache" HOME="$WORK/home"  # no engine cache and no user config to fall back on
mkdir -p "$HOME"
[[ "$(command -v gmb)" == "$WORK/venv/bin/gmb" ]] || fail "gmb is not the installed harness ($(command -v gmb))"
# the library the engine was built with: the family of its compiler wrapper (Open MPI's answers -showme)
family=mpich; "$mpicc" -showme > /dev/null 2>&1 && family=openmpi
lib="$(gmb libs --json | python3 -c 'import json, sys
print(next((l["name"] for l in json.load(sys.stdin) if l["family"] == sys.argv[1]), ""))' "$family")"
[[ -n "$lib" ]] || fail "gmb libs found no MPI library"
cat > campaign.toml <<'TOML'
[campaign]
name = "installed"
repetitions = 1

[[run]]
benchmarks = ["latency", "bw"]
memory = ["host:host"]
sizes = "8,1K"
options = { iters = 50, warmup = 5, validate = true }
TOML
gmb run campaign.toml --library "$lib" --no-build --no-progress --results results > run.out 2> run.err ||
  { cat run.err; fail "gmb run on the installed engine"; }
out="$(tail -n 1 run.out)"
grep -q "$WORK/prefix/bin/gmb-bench" "$out/plan.json" || fail "the run did not use the installed engine ($out/plan.json)"
[[ -f "$out/report.html" ]] || fail "no report written"
gmb ingest "$WORK/check.sqlite" "$out"/raw/*.jsonl --validate > ingest.out 2>&1 || { cat ingest.out; fail "gmb ingest --validate"; }
launcher="$(gmb libs --json | python3 -c 'import json, sys
print(next(l["launcher_path"] for l in json.load(sys.stdin) if l["name"] == sys.argv[1]))' "$lib")"
gmb profile --library "$lib" --no-build --out profile -- "$launcher" -np 2 "$WORK/prefix/bin/gmb-bench" latency \
  --sizes 8 --iters 20 --warmup 2 --out profiled.jsonl > profile.out 2> profile.err ||
  { cat profile.err; fail "gmb profile with the installed profiler"; }
grep -q '"call": "MPI_' profile/profile.json || fail "the profile holds no MPI call (profile/profile.json)"
say "ok: installed engine $WORK/prefix/bin/gmb-bench ran $lib's campaign through the installed harness, and its profiler profiled it"
