#!/bin/bash
# The GPU-machine session behind the issue notes: builds the engines with the harness (`gmb build`: the lab's
# CUDA-aware Open MPI 5.0.7 with NCCL, and the machine's CUDA-unaware Open MPI 4.1.6), then runs the checks
# and measurements of the engine issues, phase by phase, within a deadline. Everything lands in $OUT:
# summary.txt (one line per launch: exit status and seconds), log.txt (all output), records.tar.gz (every
# record file, nccl-tests output included), packed again after every launch so a cut-short session keeps
# what it measured.
#   bash .gpu-lab/setup.sh && source /opt/lab/env.sh && bash scripts/gpu-lab-run.sh [PHASES]
# PHASES (default: all, in this order): build doctor peaks strategies hostdevice sysmpi coll nbc nccl managed
# Environment: GMB_DEADLINE (seconds for the whole script, default 560), GMB_CACHE (engine cache, default
# build/gmb-cache: a later `gmb run` on the same machine reuses the engines), NCCL_TESTS_BIN (a directory
# with nccl-tests' *_perf binaries built against the engine's libnccl, found in NCCL_TESTS_LIB at run time;
# the nccl phase compares with them when present).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/gmb-out}
RECORDS=/tmp/gmb-records
mkdir -p "$OUT" "$RECORDS"
LOG=$OUT/log.txt
SUMMARY=$OUT/summary.txt
DEADLINE=$((SECONDS + ${GMB_DEADLINE:-560}))
PHASES=${*:-build doctor peaks strategies hostdevice sysmpi coll nbc nccl managed}
NGPU=$(nvidia-smi -L | wc -l)
export PYTHONPATH="$ROOT/python/src${PYTHONPATH:+:$PYTHONPATH}"
export GMB_CACHE=${GMB_CACHE:-$ROOT/build/gmb-cache}
has() { [[ " $PHASES " == *" $1 "* ]]; }
say() { echo "$*" | tee -a "$SUMMARY"; }
pack() { tar czf "$OUT/records.tar.gz" -C "$(dirname "$RECORDS")" "$(basename "$RECORDS")"; }
# run NAME CMD...: runs with a timeout that never passes the deadline, logs everything, records the exit
# status; never stops the script.
run() {
  local name=$1; shift
  local left=$((DEADLINE - SECONDS)) limit=${RUN_TIMEOUT:-90}
  if ((left < 8)); then say "[$name] skipped: session deadline"; return 0; fi
  ((limit > left)) && limit=$left
  echo "=== $name: $*" >> "$LOG"
  local t0=$SECONDS
  timeout "$limit" "$@" >> "$LOG" 2>&1
  say "[$name] exit $? ($((SECONDS - t0)) s)"
  pack
}
rec() { echo "$RECORDS/$1.jsonl"; }

LAB="mpirun --allow-run-as-root --bind-to none"
UCX="--mca pml ucx"
OB1="--mca pml ob1 --mca btl smcuda,self"
# The system Open MPI must not see the lab's libraries (same soname); the CUDA driver's directory stays.
SYS_LD=$(echo "${LD_LIBRARY_PATH:-}" | tr ':' '\n' | grep -v '^/opt/lab' | paste -sd:)
SYS="env LD_LIBRARY_PATH=$SYS_LD PATH=/usr/local/bin:/usr/bin:/bin /usr/bin/mpirun --allow-run-as-root --bind-to none"
ITERS="--iters 100 --warmup 10 --iters-large 10 --warmup-large 2"

say "# gmb GPU lab run $(date -u +%FT%TZ) on $(hostname), $NGPU GPU(s), phases: $PHASES"
nvidia-smi -L | tee -a "$SUMMARY"
nvidia-smi topo -m >> "$SUMMARY" 2>&1

if has build; then
  RUN_TIMEOUT=240 run build python3 -m gmb build --config scripts/gpu-lab-libraries.toml --no-detect \
    --cmake-arg=-DGMB_ENABLE_NCCL=ON --jobs "$(nproc)"
fi
engine() {  # the engine the harness built for a library of the lab config
  python3 -c "import sys; from gmb import build, mpilibs
print(next(build.engine_path(l) for l in mpilibs.load_config('scripts/gpu-lab-libraries.toml') if l.name == sys.argv[1]))" "$1"
}
BIN=$(engine ompi-ob1)
SYSBIN=$(engine system-ompi)
say "engines: lab $BIN; system $SYSBIN"
[ -x "$BIN" ] && $BIN list >> "$SUMMARY" 2>&1

if has doctor; then
  run doctor-ob1 $LAB -np 2 $OB1 $BIN doctor --out "$(rec doctor-ob1)"
  # pml ucx under the settings tried: UCX's defaults; its memory-type cache off (what made device memory move);
  # and also its CUDA IPC handle cache off (stale handles on reallocated buffers).
  for settings in "" "UCX_MEMTYPE_CACHE=n" "UCX_MEMTYPE_CACHE=n UCX_CUDA_IPC_CACHE=n"; do
    name="doctor-ucx-${settings:-default}"; name=${name//[^A-Za-z0-9_-]/_}
    RUN_TIMEOUT=45 run "$name" env $settings $LAB -np 2 $UCX $BIN doctor --out "$(rec "$name")"
    grep -ao '"verdict":"[a-z ]*"' "$(rec "$name")" 2>/dev/null | head -1 | sed "s/^/  $name: /" | tee -a "$SUMMARY"
  done
fi

if has peaks; then
  run peaks $LAB -np "$NGPU" $OB1 $BIN peaks --sizes 1M,64M --out "$(rec peaks)"
  grep -A6 "median GB/s at" "$LOG" | grep "^#" | tail -40 >> "$SUMMARY"
fi

# Issue 3: device-to-device latency and bandwidth for every strategy that stages device memory.
if has strategies; then
  for s in direct staged-pageable staged-pinned pipelined; do
    extra=""; [ $s = pipelined ] && extra="--chunks 4,16"
    run "strat-latency-$s" $LAB -np 2 $OB1 $BIN latency --send device --recv device --strategy $s $extra \
      --sizes 1,64K,1M,16M,64M $ITERS --validate --out "$(rec "strat-latency-$s")"
    run "strat-bw-$s" $LAB -np 2 $OB1 $BIN bw --send device --recv device --strategy $s $extra --window 16 \
      --sizes 1,64K,1M,16M,64M $ITERS --validate --out "$(rec "strat-bw-$s")"
  done
fi

# Issue 3: host <-> device, the library's direct path against the pipelines through host memory and through
# the GPU; host-host for what the library's host path moves.
if has hostdevice; then
  for kinds in "pinned device" "device pinned" "host device"; do
    set -- $kinds
    for s in direct pipelined pipelined-gpu; do
      extra=""; [ $s != direct ] && extra="--chunks 4,16"
      run "hd-bw-$1-$2-$s" $LAB -np 2 $OB1 $BIN bw --send $1 --recv $2 --strategy $s $extra --window 16 \
        --sizes 1M,16M,64M $ITERS --validate --out "$(rec "hd-bw-$1-$2-$s")"
    done
  done
  run "hh-bw-pinned" $LAB -np 2 $OB1 $BIN bw --send pinned --recv pinned --window 16 --sizes 1M,16M,64M $ITERS \
    --validate --out "$(rec hh-bw-pinned)"
  run "hh-bw-pinned-pipelined-gpu" $LAB -np 2 $OB1 $BIN bw --send pinned --recv pinned --strategy pipelined-gpu \
    --chunks 4 --window 16 --sizes 1M,16M,64M $ITERS --validate --out "$(rec hh-bw-pinned-pipelined-gpu)"
fi

# Issue 3: the machine's CUDA-unaware Open MPI: doctor says so, device pointers are refused, staging runs.
if has sysmpi; then
  run sys-doctor $SYS -np 2 $SYSBIN doctor --out "$(rec sys-doctor)"
  run sys-direct-refused $SYS -np 2 $SYSBIN bw --send device --recv device --sizes 1K,1M --out "$(rec sys-direct-refused)"
  run sys-pipelined-gpu-refused $SYS -np 2 $SYSBIN bw --send pinned --recv device --strategy pipelined-gpu \
    --sizes 1M --out "$(rec sys-pipelined-gpu-refused)"
  run sys-host-bw $SYS -np 2 $SYSBIN bw --sizes 1M,64M $ITERS --validate --out "$(rec sys-host-bw)"
  for s in staged-pageable staged-pinned pipelined; do
    run "sys-bw-$s" $SYS -np 2 $SYSBIN bw --send device --recv device --strategy $s --window 16 --sizes 1K,1M,64M \
      $ITERS --validate --out "$(rec "sys-bw-$s")"
  done
  run sys-latency-pipelined $SYS -np 2 $SYSBIN latency --send device --recv device --strategy pipelined \
    --sizes 1,1M,64M $ITERS --validate --out "$(rec sys-latency-pipelined)"
  grep -h "unsupported:" "$LOG" | sort -u | head -4 >> "$SUMMARY"
fi

# Issue 4: blocking collectives on device memory, 1 B to 64 MiB, on every GPU.
if has coll; then
  run "coll-$NGPU" $LAB -np "$NGPU" $OB1 $BIN coll allreduce,bcast,allgather,alltoall --mem device --sizes 1:64M \
    --iters 50 --warmup 5 --iters-large 10 --warmup-large 2 --validate --out "$(rec "coll-$NGPU")"
fi

# Issue 4: overlap of ibcast, ialltoall and iallreduce with CPU and GPU compute (iallreduce on device memory is
# refused under Open MPI 5.0: it also runs on pinned memory), MPI_Test calls, and the compute sweep.
if has nbc; then
  NBC="--sizes 1K,64K,1M,16M --iters 20 --warmup 3 --iters-large 10 --warmup-large 2 --validate"
  for c in cpu gpu; do
    run "nbc-device-$c" $LAB -np "$NGPU" $OB1 $BIN nbc bcast,alltoall,allreduce --mem device --compute $c $NBC \
      --out "$(rec "nbc-device-$c")"
    run "nbc-pinned-allreduce-$c" $LAB -np "$NGPU" $OB1 $BIN nbc allreduce --mem pinned --compute $c $NBC \
      --out "$(rec "nbc-pinned-allreduce-$c")"
  done
  run "nbc-device-gpu-tests" $LAB -np "$NGPU" $OB1 $BIN nbc bcast,alltoall --mem device --compute gpu --tests 100 $NBC \
    --out "$(rec nbc-device-gpu-tests)"
  run "nbc-sweep-ialltoall" $LAB -np "$NGPU" $OB1 $BIN nbc alltoall --mem device --compute gpu --compute-sweep \
    --sizes 16M --iters-large 10 --warmup-large 2 --out "$(rec nbc-sweep-ialltoall)"
fi

# Issue 8: NCCL and the CUDA-aware MPI on the same operations, 8 B to 1 GiB; nccl-tests on the same libnccl.
if has nccl; then
  NCCL_OPS="allreduce,allgather,reduce_scatter_block,alltoall,bcast"
  NTOUT=$RECORDS/nccl-tests; mkdir -p "$NTOUT"
  if [ -n "${NCCL_TESTS_BIN:-}" ] && [ -x "$NCCL_TESTS_BIN/all_reduce_perf" ]; then
    for t in all_reduce all_gather reduce_scatter alltoall broadcast; do
      # MPI only bootstraps nccl-tests; btl smcuda refuses a process that has not touched CUDA before
      # MPI_Init (nccl-tests: "unable to reach each other"), so its host path is sm.
      run "nccl-tests-$t" bash -c "$LAB -np $NGPU --mca pml ob1 --mca btl self,sm -x LD_LIBRARY_PATH=${NCCL_TESTS_LIB:-}:$LD_LIBRARY_PATH \
        $NCCL_TESTS_BIN/${t}_perf -b 8 -e 1G -f 2 -g 1 -w 5 -n 20 > $NTOUT/$t-$NGPU.txt"
    done
  else
    say "nccl-tests: NCCL_TESTS_BIN not given; no comparison"
  fi
  run "nccl-validate" $LAB -np "$NGPU" $OB1 $BIN coll $NCCL_OPS,reduce,gather,gatherv,allgatherv,scatter,scatterv,alltoallv \
    --transport nccl --mem device --sizes 1,7,1K,1M,64M --iters 5 --warmup 1 --iters-large 3 --warmup-large 1 --validate \
    --out "$(rec nccl-validate)"
  run "nccl-coll" $LAB -np "$NGPU" $OB1 $BIN coll $NCCL_OPS --transport nccl --mem device --sizes 8:1G --batch 20 \
    --iters 100 --warmup 20 --iters-large 100 --warmup-large 20 --out "$(rec nccl-coll)"
  RUN_TIMEOUT=120 run "mpi-coll" $LAB -np "$NGPU" $OB1 $BIN coll $NCCL_OPS --mem device --sizes 8:1G \
    --iters 20 --warmup 3 --iters-large 3 --warmup-large 1 --out "$(rec mpi-coll)"
  if ls "$NTOUT"/*.txt > /dev/null 2>&1; then
    refs=""
    for f in "$NTOUT"/*.txt; do b=$(basename "$f" .txt); refs="$refs --nccl-tests ${b%-*}@${b##*-}=$f"; done
    python3 bench/nccl_tests_compare.py $refs --records "$(rec nccl-coll)" "$(rec mpi-coll)" --min-bytes 64M \
      > "$OUT/nccl-compare.md" 2>&1
    say "nccl-tests comparison exit $?: $(tail -1 "$OUT/nccl-compare.md")"
  fi
fi

# Issue 5: managed placements under both pmls (latency, bw, bibw; MH-MH and MD-MD with the HH and DD references
# in the same launch), page faults counted; and the timings with CUPTI absent, to see whether counting costs.
if has managed; then
  UM="--sizes 1,64K,1M,64M --iters 30 --warmup 3 --iters-large 5 --warmup-large 1"
  for pml in ob1 ucx; do
    # pml ucx with UCX's defaults crashed in the awareness proof; UCX_MEMTYPE_CACHE=n is what works (doctor phase)
    opts=$OB1; [ $pml = ucx ] && opts="-x UCX_MEMTYPE_CACHE=n $UCX"
    for b in latency bw bibw; do
      win=""; [ $b != latency ] && win="--window 8"
      for p in "MH MH" "MD MH" "MH MD" "MD MD"; do
        refs=""; [[ "$p" == "MD MD" || "$p" == "MH MH" ]] && refs="--references"
        run "um-$b-$pml-${p// /}" $LAB -np 2 $opts $BIN $b $p $refs $win $UM --out "$(rec "um-$b-$pml-${p// /}")"
      done
    done
  done
  run "um-latency-ob1-MDMD-nocupti" env GMB_CUPTI_LIBRARY=/nonexistent $LAB -np 2 $OB1 $BIN latency MD MD $UM \
    --out "$(rec um-latency-ob1-MDMD-nocupti)"
fi

pack
say "# done at $SECONDS s"
