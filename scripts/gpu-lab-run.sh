#!/bin/bash
# The GPU-machine session: builds gmb-bench against the CUDA-aware Open MPI of the lab bundle and
# against the machine's own (CUDA-unaware) Open MPI, then runs the checks and measurements the
# issues ask for. Everything lands in $OUT (summary.txt, log.txt, records.tar.gz).
#   bash .gpu-lab/setup.sh && source /opt/lab/env.sh && bash scripts/gpu-lab-run.sh [PHASES]
# PHASES: any of build wheelcheck doctor peaks p2p sysmpi strategies hdpipe coll nbc nbctests managed nccl halo
# overhead (default: all)
set -u
OUT=${OUT:-/tmp/gmb-out}
RECORDS=/tmp/gmb-records
mkdir -p "$OUT" "$RECORDS"
LOG=$OUT/log.txt
SUMMARY=$OUT/summary.txt
PHASES=${*:-build wheelcheck doctor peaks p2p sysmpi strategies hdpipe coll nbc nbctests managed umfaults nccl halo overhead}
NGPU=$(nvidia-smi -L | wc -l)
has() { [[ " $PHASES " == *" $1 "* ]]; }
say() { echo "$*" | tee -a "$SUMMARY"; }
# run NAME CMD...: runs, logs everything, records exit status; never stops the script.
run() {
  local name=$1; shift
  echo "=== $name: $*" >> "$LOG"
  local t0=$SECONDS
  timeout ${RUN_TIMEOUT:-120} "$@" >> "$LOG" 2>&1
  local rc=$?
  say "[$name] exit $rc ($((SECONDS - t0)) s)"
  # Re-pack after every launch: if the session is cut short, what was measured still comes back.
  tar czf "$OUT/records.tar.gz" -C "$(dirname "$RECORDS")" "$(basename "$RECORDS")"
  return 0
}
LAB="mpirun --allow-run-as-root --bind-to none"
UCX="--mca pml ucx"
OB1="--mca pml ob1 --mca btl smcuda,self"
BIN=build/lab/gmb-bench
SYSBIN=build/sys/gmb-bench
rec() { echo "$RECORDS/$1.jsonl"; }

say "# gmb GPU lab run $(date -u +%FT%TZ) on $(hostname), $NGPU GPU(s)"
nvidia-smi -L | tee -a "$SUMMARY"
nvidia-smi topo -m >> "$SUMMARY" 2>&1

if has build; then
  say "NCCL libraries here: $(find /usr /opt /root -name 'libnccl.so*' 2>/dev/null | head -4 | tr '\n' ' ')"
  run build-lab bash -c "cmake -S . -B build/lab -DCMAKE_BUILD_TYPE=Release -DGMB_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGMB_BUILD_TESTS=OFF -DMPI_C_COMPILER=/opt/lab/ompi/bin/mpicc -DMPIEXEC_EXECUTABLE=/opt/lab/ompi/bin/mpirun && cmake --build build/lab -j 16"
  run build-sys env -u LD_LIBRARY_PATH bash -c "PATH=/usr/bin:\$PATH cmake -S . -B build/sys -DCMAKE_BUILD_TYPE=Release -DGMB_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGMB_BUILD_TESTS=OFF -DMPI_C_COMPILER=/usr/bin/mpicc.openmpi -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.openmpi && cmake --build build/sys -j 16"
  $BIN list >> "$SUMMARY" 2>&1
  grep -h "gmb: NCCL\|gmb: CUDA" build/lab/CMakeCache.txt "$LOG" 2>/dev/null | sort -u | head -3 >> "$SUMMARY"
fi

# Does the build find NCCL in a Python environment's nvidia-nccl wheel (configure only)?
if has wheelcheck; then
  for py in /opt/torch/.venv/bin/python3 $(command -v python3); do
    [ -x "$py" ] || continue
    wheel=$($py -c "import importlib.util as u; s = u.find_spec('nvidia.nccl'); print(list(s.submodule_search_locations)[0] if s else '')" 2>/dev/null)
    [ -n "$wheel" ] || continue
    rm -rf /tmp/wheelcheck
    found=$(cmake -S . -B /tmp/wheelcheck -DGMB_ENABLE_CUDA=ON -DGMB_ENABLE_NCCL=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGMB_BUILD_TESTS=OFF -DPython3_EXECUTABLE=$py -DMPI_C_COMPILER=/opt/lab/ompi/bin/mpicc 2>&1 | grep "gmb: NCCL")
    say "NCCL wheel of $py at $wheel; configure found: $found"
  done
fi

P2P_SIZES=1,8K,1M,64M
P2P_ITERS="--iters 100 --warmup 10 --iters-large 10 --warmup-large 2"

UCX_OK=0
if has doctor; then
  run doctor-ob1 $LAB -np 2 $OB1 $BIN doctor --out "$(rec doctor-ob1)"
  # pml ucx: find settings under which device memory moves (the proof has a deadline). UCX's
  # memory-type cache decides "host" for pointers it never saw allocated; turning it off makes UCX
  # ask the CUDA driver about every pointer.
  for settings in "" "UCX_MEMTYPE_CACHE=n" "UCX_MEMTYPE_CACHE=n UCX_TLS=self,sm,cuda_copy,cuda_ipc"; do
    name="doctor-ucx-${settings:-default}"; name=${name//[^A-Za-z0-9_-]/_}
    RUN_TIMEOUT=40 run "$name" env $settings $LAB -np 2 $UCX $BIN doctor --out "$(rec $name)"
    if grep -q '"verdict":"aware"' "$(rec $name)" 2>/dev/null; then
      UCX_OK=1
      for kv in $settings; do export "$kv"; done
      say "pml ucx proven CUDA-aware with settings: ${settings:-default}"
      break
    fi
  done
  [ $UCX_OK = 1 ] && [ "$NGPU" -ge 4 ] && run doctor-ucx-4 $LAB -np 4 $UCX $BIN doctor --out "$(rec doctor-ucx-4)"
fi
PMLS="ob1"; [ $UCX_OK = 1 ] && PMLS="ucx ob1"
# The pml of the collective, strategy, overlap and halo runs: ob1. Under pml ucx (UCX_MEMTYPE_CACHE=n) the
# doctor's first exchange passed but messages on reallocated device buffers arrived wrong (--validate), so ucx
# appears only where the two pmls are compared.
MAIN=$OB1

if has peaks; then
  run peaks $LAB -np "$NGPU" $OB1 $BIN peaks --sizes 64M --out "$(rec peaks)"
fi

if has p2p; then
  for pml in $PMLS; do
    opts=$UCX; [ $pml = ob1 ] && opts=$OB1
    for b in latency bw bibw; do
      for kinds in "device device" "host device" "device host" "host host" "pinned device" "device pinned"; do
        set -- $kinds
        run "$b-$pml-$1-$2" $LAB -np 2 $opts $BIN $b --send $1 --recv $2 --sizes $P2P_SIZES $P2P_ITERS --validate --out "$(rec $b-$pml-$1-$2)"
      done
      # Both ranks on one GPU.
      run "$b-$pml-samegpu" env CUDA_VISIBLE_DEVICES=0 $LAB -np 2 $opts $BIN $b --send device --recv device --sizes $P2P_SIZES $P2P_ITERS --validate --out "$(rec $b-$pml-samegpu)"
    done
  done
fi

if has strategies; then
  for s in direct staged-pageable staged-pinned pipelined; do
    for b in latency bw; do
      extra=""; [ $s = pipelined ] && extra="--chunks 2,8,32"
      win=""; [ $b = bw ] && win="--window 16"
      run "strat-$b-$s" $LAB -np 2 $MAIN $BIN $b --send device --recv device --strategy $s $extra $win --sizes 1,1K,64K,1M,16M,64M $P2P_ITERS --validate --out "$(rec strat-$b-$s)"
    done
  done
  for kinds in "host device" "device host"; do
    set -- $kinds
    for s in direct pipelined; do
      extra=""; [ $s = pipelined ] && extra="--chunks 4,16"
      run "hd-bw-$1-$2-$s" $LAB -np 2 $MAIN $BIN bw --send $1 --recv $2 --strategy $s $extra --window 16 --sizes 1M,16M,64M $P2P_ITERS --validate --out "$(rec hd-bw-$1-$2-$s)"
    done
  done
fi

if has sysmpi; then
  SYS="env -u LD_LIBRARY_PATH PATH=/usr/bin:/bin /usr/bin/mpirun.openmpi --allow-run-as-root --bind-to none"
  run sys-doctor $SYS -np 2 $SYSBIN doctor --out "$(rec sys-doctor)"
  run sys-direct-refused $SYS -np 2 $SYSBIN bw --send device --recv device --sizes 1K,1M --out "$(rec sys-direct-refused)"
  run sys-host-bw $SYS -np 2 $SYSBIN bw --sizes 1K,1M,64M $P2P_ITERS --validate --out "$(rec sys-host-bw)"
  for s in staged-pinned pipelined; do
    run "sys-bw-$s" $SYS -np 2 $SYSBIN bw --send device --recv device --strategy $s --sizes 1K,1M,64M $P2P_ITERS --validate --out "$(rec sys-bw-$s)"
  done

fi

if has coll && $BIN list | grep -q "^  coll "; then
  for n in 2 4; do
    [ "$n" -gt "$NGPU" ] && continue
    run "coll-$n" $LAB -np $n $MAIN $BIN coll allreduce,bcast,allgather,alltoall --mem device --sizes 1,1K,64K,1M,16M,64M --iters 50 --warmup 5 --iters-large 10 --warmup-large 2 --validate --out "$(rec coll-$n)"
  done
fi

if has nbc && $BIN list | grep -q "^  nbc "; then
  # One launch per operation and memory kind: Open MPI 5.0's libnbc reduces on the CPU, so
  # MPI_Iallreduce on device memory may crash inside the library; that must not hide the others.
  NBC_ITERS="--sizes 1K,1M,16M --iters 20 --warmup 3 --iters-large 10 --warmup-large 2"
  for n in 2 4; do
    [ "$n" -gt "$NGPU" ] && continue
    for c in cpu gpu; do
      for op in bcast alltoall allreduce; do
        run "nbc-$op-device-$c-$n" $LAB -np $n $MAIN $BIN nbc $op --mem device --compute $c $NBC_ITERS --out "$(rec nbc-$op-device-$c-$n)"
      done
      run "nbc-allreduce-pinned-$c-$n" $LAB -np $n $MAIN $BIN nbc allreduce --mem pinned --compute $c $NBC_ITERS --out "$(rec nbc-allreduce-pinned-$c-$n)"
    done
    run "nbc-sweep-ialltoall-$n" $LAB -np $n $MAIN $BIN nbc alltoall --mem device --compute gpu --compute-sweep --sizes 16M --iters-large 10 --warmup-large 2 --out "$(rec nbc-sweep-ialltoall-$n)"
  done
fi

# Overlap with MPI_Test calls spread through the compute (the library progresses only when called),
# and what a library crash looks like now (Open MPI 5.0's libnbc reduces device memory on the CPU).
if has nbctests; then
  NBC_ITERS="--sizes 1K,1M,16M --iters 20 --warmup 3 --iters-large 10 --warmup-large 2"
  for n in 2 4; do
    [ "$n" -gt "$NGPU" ] && continue
    for op in bcast alltoall; do
      run "nbc-$op-device-gpu-tests-$n" $LAB -np $n $MAIN $BIN nbc $op --mem device --compute gpu --tests 100 $NBC_ITERS --out "$(rec nbc-$op-device-gpu-tests-$n)"
    done
    run "nbc-allreduce-pinned-cpu-tests-$n" $LAB -np $n $MAIN $BIN nbc allreduce --mem pinned --compute cpu --tests 100 $NBC_ITERS --out "$(rec nbc-allreduce-pinned-cpu-tests-$n)"
  done
  run "nbc-allreduce-device-crash-report" $LAB -np 2 $MAIN $BIN nbc allreduce --mem device --compute cpu --sizes 1K --iters 5 --warmup 1 --out "$(rec nbc-allreduce-device-crash-report)"
  grep -a "while running" "$LOG" | tail -2 >> "$SUMMARY"
fi

# Unified memory: the four placements with page-fault counts, and HH/DD references in the same run.
if has managed; then
  UM_SIZES="--sizes 1,16,256,4K,64K,1M,16M,64M --iters 50 --warmup 5 --iters-large 5 --warmup-large 1"
  for pml in $PMLS; do
    opts=$UCX; [ $pml = ob1 ] && opts=$OB1
    run "um-latency-validate-$pml" $LAB -np 2 $opts $BIN latency MD MH --sizes 1,4K,1M --iters 10 --warmup 2 --validate --out "$(rec um-latency-validate-$pml)"
    for b in latency bw bibw; do
      win=""; [ $b != latency ] && win="--window 16"
      for p in "MH MH" "MD MH" "MH MD"; do
        run "um-$b-$pml-${p// /}" $LAB -np 2 $opts $BIN $b $p $win $UM_SIZES --out "$(rec um-$b-$pml-${p// /})"
      done
      run "um-$b-$pml-MDMD-refs" $LAB -np 2 $opts $BIN $b MD MD --references $win $UM_SIZES --out "$(rec um-$b-$pml-MDMD-refs)"
    done
    run "um-coll-$pml" $LAB -np 2 $opts $BIN coll bcast,allreduce --mem managed:device $UM_SIZES --out "$(rec um-coll-$pml)"
  done
fi

# Page-fault counts on the placements that differ most between the two pmls (a short rerun).
if has umfaults; then
  for pml in $PMLS; do
    opts=$UCX; [ $pml = ob1 ] && opts=$OB1
    run "umf-latency-$pml-MDMD" $LAB -np 2 $opts $BIN latency MD MD --sizes 4K,1M,64M --iters 20 --warmup 2 --iters-large 5 --warmup-large 1 --out "$(rec umf-latency-$pml-MDMD)"
    run "umf-bw-$pml-MDMH" $LAB -np 2 $opts $BIN bw MD MH --window 16 --sizes 4K,1M,64M --iters 20 --warmup 2 --iters-large 5 --warmup-large 1 --out "$(rec umf-bw-$pml-MDMH)"
  done
fi

if has nccl; then
  # NCCL next to the CUDA-aware MPI, and next to NCCL's own tests built against the same libnccl.
  NCCL_LIB=$(ldd $BIN | awk '/libnccl/ {print $3}')
  if [ -z "$NCCL_LIB" ]; then
    say "gmb-bench was built without NCCL: $($BIN list | head -1)"
  else
    say "NCCL library: $NCCL_LIB"
    NCCL_HOME_DIR=/tmp/ncclhome; mkdir -p $NCCL_HOME_DIR/lib
    ln -sfn "$(dirname "$(dirname "$NCCL_LIB")")/include" $NCCL_HOME_DIR/include
    ln -sf "$NCCL_LIB" $NCCL_HOME_DIR/lib/libnccl.so; ln -sf "$NCCL_LIB" $NCCL_HOME_DIR/lib/libnccl.so.2
    NT=/tmp/nccl-tests; NTOUT=$RECORDS/nccl-tests; mkdir -p "$NTOUT"  # packed with the records
    RUN_TIMEOUT=300 run build-nccl-tests make -C "${NCCL_TESTS_SRC:-../.nccl-tests}" -j16 MPI=1 MPI_HOME=/opt/lab/ompi NCCL_HOME=$NCCL_HOME_DIR CUDA_HOME=/usr/local/cuda NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 BUILDDIR=$NT src.build
    NCCL_OPS="allreduce,allgather,reduce_scatter_block,alltoall,bcast"
    for n in 2 4; do
      [ "$n" -gt "$NGPU" ] && continue
      for t in all_reduce all_gather reduce_scatter alltoall broadcast; do
        run "nccl-tests-$t-$n" bash -c "$LAB -np $n -x LD_LIBRARY_PATH=$NCCL_HOME_DIR/lib:\$LD_LIBRARY_PATH $NT/${t}_perf -b 8 -e 1G -f 2 -g 1 > $NTOUT/$t-$n.txt"
      done
      run "nccl-validate-$n" $LAB -np $n $OB1 $BIN coll $NCCL_OPS,gather,gatherv,allgatherv,scatter,scatterv,alltoallv,reduce --transport nccl --mem device --sizes 1,7,1K,1M,64M --iters 5 --warmup 1 --iters-large 3 --warmup-large 1 --validate --out "$(rec nccl-validate-$n)"
      run "nccl-coll-$n" $LAB -np $n $OB1 $BIN coll $NCCL_OPS --transport nccl --mem device --sizes 8:1G --batch 20 --iters 200 --warmup 20 --iters-large 200 --warmup-large 20 --out "$(rec nccl-coll-$n)"
      [ "${SKIP_MPI_COLL:-0}" = 1 ] || RUN_TIMEOUT=240 run "mpi-coll-$n" $LAB -np $n $OB1 $BIN coll $NCCL_OPS --mem device --sizes 8:1G --iters 20 --warmup 3 --iters-large 3 --warmup-large 1 --out "$(rec mpi-coll-$n)"
    done
    for b in latency bw bibw; do
      run "nccl-$b" $LAB -np 2 $OB1 $BIN $b --transport nccl --send device --recv device --sizes 1,8K,1M,64M $P2P_ITERS --validate --out "$(rec nccl-$b)"
    done
    refs=""
    for f in "$NTOUT"/*.txt; do b=$(basename "$f" .txt); refs="$refs --nccl-tests ${b%-*}@${b##*-}=$f"; done
    python3 bench/nccl_tests_compare.py $refs --records $RECORDS/nccl-coll-*.jsonl $RECORDS/mpi-coll-*.jsonl --min-bytes 64M > "$OUT/nccl-compare.md" 2>&1
    say "nccl-tests comparison exit $?: $(tail -1 "$OUT/nccl-compare.md")"
  fi
fi

if has halo && $BIN list | grep -q "^  halo "; then
  for n in 2 4; do
    [ "$n" -gt "$NGPU" ] && continue
    run "halo-3d-$n" $LAB -np $n $MAIN $BIN halo --dims 3 --grid 256,256,256 --mem device --strategy all --steps 20 --validate --out "$(rec halo-3d-$n)"
  done
  SYS="env -u LD_LIBRARY_PATH PATH=/usr/bin:/bin /usr/bin/mpirun.openmpi --allow-run-as-root --bind-to none"
  run "halo-sys" $SYS -np 2 $SYSBIN halo --dims 3 --grid 128,128,128 --mem device --strategy all --steps 10 --validate --out "$(rec halo-sys)"
fi

if has overhead; then
  python3 bench/overhead.py --build build/lab --mpiexec /opt/lab/ompi/bin/mpirun --extra "--allow-run-as-root --bind-to core" --launches 3 2>&1 | tee -a "$SUMMARY"
fi

say "# done"

# A host side under the pipelined strategy chunks like its GPU peer (the fix for MPI_ERR_TRUNCATE).
if has hdpipe; then
  for kinds in "host device" "device host"; do
    set -- $kinds
    run "hd-bw-$1-$2-pipelined" $LAB -np 2 $MAIN $BIN bw --send $1 --recv $2 --strategy pipelined --chunks 4,16 --sizes 1M,64M $P2P_ITERS --validate --out "$(rec hd-bw-$1-$2-pipelined)"
  done
fi
