#!/bin/bash
# Issue 7's campaign on the GPU lab machine (4 x H200 NVLink, no internet): the generated default campaign over
# the lab's CUDA-aware Open MPI (pml ucx, pml ob1), the system Open MPI 4.1.6 and NCCL, in one `gmb run`.
#   bash scripts/gpu-lab-campaign.sh [more `gmb run` arguments]        (from the repository root)
# Environment: OUT (default /tmp/gmb-out) receives summary.txt, doctor.txt, run.log, report.html, tables.txt,
# fraction_of_peak.csv, collectives.csv and results.tar.gz (the whole results directory);
# GMB_CMAKE_ARGS: more CMake arguments for the engine builds (e.g. "-DGMB_ENABLE_NCCL=ON");
# GMB_LAUNCH_TIMEOUT: seconds per launch (default 60); GMB_RUN_LIMIT: seconds for the whole `gmb run` (default:
# none). At the limit the run is interrupted like Ctrl-C: finished launches are kept, the report covers them, and
# GMB_RESUME=DIR (a results directory, e.g. unpacked from an earlier results.tar.gz) continues it: `gmb run
# --resume DIR`, engines built again where they are gone (a fresh machine).
# The harness is run from the source tree (PYTHONPATH), so nothing has to be installed: it needs Python >= 3.11
# only; without matplotlib the report has tables and no figures (the script says which).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/gmb-out}
WORK=${GMB_LAB_WORK:-/tmp/gmb-lab}
mkdir -p "$OUT" "$WORK"
SUMMARY=$OUT/summary.txt
say() { echo "$*" | tee -a "$SUMMARY"; }

if [ ! -x /opt/lab/ompi/bin/mpirun ] && [ -f .gpu-lab/setup.sh ]; then
  bash .gpu-lab/setup.sh >> "$SUMMARY" 2>&1
fi
if [ ! -f /opt/lab/env.sh ]; then
  say "gpu-lab-campaign: /opt/lab/env.sh not found: unpack the lab bundle first (bash .gpu-lab/setup.sh)"
  exit 2
fi
. /opt/lab/env.sh

PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  say "gpu-lab-campaign: $PY is older than 3.11 (the harness needs tomllib)"
  exit 2
fi
export PYTHONPATH="$ROOT/python/src${PYTHONPATH:+:$PYTHONPATH}"
export GMB_CACHE=${GMB_CACHE:-$WORK/cache}
GMB=("$PY" -m gmb)
if "$PY" -c 'import matplotlib' 2>/dev/null; then
  say "matplotlib: $("$PY" -c 'import matplotlib; print(matplotlib.__version__)') (figures in the report)"
elif "$PY" -m pip install --no-index --quiet matplotlib >> "$SUMMARY" 2>&1; then
  say "matplotlib: installed from a local wheel cache"
else
  say "matplotlib: not available offline; the report will hold tables only"
fi

say "# gmb GPU lab campaign $(date -u +%FT%TZ) on $(hostname): $(nvidia-smi -L 2>/dev/null | wc -l) GPU(s), $("$PY" --version 2>&1)"
nvidia-smi topo -m >> "$SUMMARY" 2>&1

CONFIG=scripts/gpu-lab-libraries.toml
CMAKE=()
for a in ${GMB_CMAKE_ARGS:-}; do CMAKE+=("--cmake-arg=$a"); done

t0=$SECONDS
"${GMB[@]}" doctor --config "$CONFIG" --no-detect --no-engine > "$OUT/doctor.txt" 2>&1
say "[doctor] exit $? ($((SECONDS - t0)) s)"

t0=$SECONDS
LIMIT=()
[ -n "${GMB_RUN_LIMIT:-}" ] && LIMIT=(timeout -s INT "$GMB_RUN_LIMIT")
if [ -n "${GMB_RESUME:-}" ]; then
  RUN=(run --resume "$GMB_RESUME")
else
  RUN=(run --results "$WORK/results" --timeout "${GMB_LAUNCH_TIMEOUT:-60}")
fi
"${LIMIT[@]}" "${GMB[@]}" "${RUN[@]}" --config "$CONFIG" --no-detect --no-progress --jobs 16 "${CMAKE[@]}" "$@" \
  > "$OUT/run.log" 2>&1
rc=$?
say "[gmb run] exit $rc ($((SECONDS - t0)) s)"
RESULTS=$(sed -n 's/^gmb: results in //p' "$OUT/run.log" | tail -n 1)
if [ -f "$RESULTS/plan.json" ] && [ ! -f "$RESULTS/report.html" ]; then
  "${GMB[@]}" report "$RESULTS" -o "$RESULTS/report.html" >> "$OUT/run.log" 2>&1  # an interrupted run
fi
if [ ! -f "$RESULTS/plan.json" ]; then
  say "gpu-lab-campaign: no results directory (see run.log)"
  tail -n 20 "$OUT/run.log" | tee -a "$SUMMARY"
  exit 1
fi
say "results: $RESULTS"
grep -E "^gmb: (launches|NCCL|skipping .*: all:)" "$OUT/run.log" | tee -a "$SUMMARY"

"${GMB[@]}" tables "$RESULTS" --csv "$WORK/csv-$(basename "$RESULTS")" > "$OUT/tables.txt" 2>&1
for t in fraction_of_peak collectives_bus_bandwidth_at_the_largest_sizes_gb_s; do
  [ -f "$WORK/csv-$(basename "$RESULTS")/$t.csv" ] && cp "$WORK/csv-$(basename "$RESULTS")/$t.csv" "$OUT/${t%%_bus*}.csv"
done
[ -f "$RESULTS/report.html" ] && cp "$RESULTS/report.html" "$OUT/report.html"
tar czf "$OUT/results.tar.gz" -C "$(dirname "$RESULTS")" "$(basename "$RESULTS")"
sed -n '/^Fraction of peak/,/^$/p' "$OUT/tables.txt" | tee -a "$SUMMARY"
exit $rc
