#!/bin/bash
# The GPU-machine session: builds gmb-bench against the CUDA-aware Open MPI of the lab bundle and
# against the machine's own (CUDA-unaware) Open MPI, then runs the checks and measurements the
# issues ask for. Everything lands in $OUT (summary.txt, log.txt, records.tar.gz).
#   bash .gpu-lab/setup.sh && source /opt/lab/env.sh && bash scripts/gpu-lab-run.sh [PHASES]
# PHASES: any of build doctor peaks p2p sysmpi strategies coll nbc halo overhead (default: all)
set -u
OUT=${OUT:-/tmp/gmb-out}
RECORDS=/tmp/gmb-records
mkdir -p "$OUT" "$RECORDS"
LOG=$OUT/log.txt
SUMMARY=$OUT/summary.txt
PHASES=${*:-build doctor peaks p2p sysmpi strategies hdpipe coll nbc halo overhead}
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
  run build-lab bash -c "cmake -S . -B build/lab -DCMAKE_BUILD_TYPE=Release -DGMB_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGMB_BUILD_TESTS=OFF -DMPI_C_COMPILER=/opt/lab/ompi/bin/mpicc -DMPIEXEC_EXECUTABLE=/opt/lab/ompi/bin/mpirun && cmake --build build/lab -j 16"
  run build-sys env -u LD_LIBRARY_PATH bash -c "PATH=/usr/bin:\$PATH cmake -S . -B build/sys -DCMAKE_BUILD_TYPE=Release -DGMB_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGMB_BUILD_TESTS=OFF -DMPI_C_COMPILER=/usr/bin/mpicc.openmpi -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.openmpi && cmake --build build/sys -j 16"
  $BIN list >> "$SUMMARY" 2>&1
fi

P2P_SIZES=1,8K,1M,64M
P2P_ITERS="--iters 100 --warmup 10 --iters-large 10 --warmup-large 2"

UCX_OK=0
if has doctor; then
  run doctor-ob1 $LAB -np 2 $OB1 $BIN doctor --out "$(rec doctor-ob1)"
  # pml ucx: find a transport selection under which device memory moves (the proof has a deadline).
  for tls in "" "self,sm,cuda_copy,cuda_ipc" "^cma" "self,posix,cuda_copy,cuda_ipc" "self,tcp,cuda_copy"; do
    name="doctor-ucx-tls-${tls:-default}"; name=${name//[^A-Za-z0-9_-]/_}
    RUN_TIMEOUT=40 run "$name" env ${tls:+UCX_TLS=$tls} $LAB -np 2 $UCX $BIN doctor --out "$(rec $name)"
    if grep -q '"verdict":"aware"' "$(rec $name)" 2>/dev/null; then
      UCX_OK=1; [ -n "$tls" ] && export UCX_TLS=$tls
      say "pml ucx proven CUDA-aware with UCX_TLS=${tls:-default}"
      break
    fi
  done
  [ $UCX_OK = 1 ] && [ "$NGPU" -ge 4 ] && run doctor-ucx-4 $LAB -np 4 $UCX $BIN doctor --out "$(rec doctor-ucx-4)"
fi
PMLS="ob1"; [ $UCX_OK = 1 ] && PMLS="ucx ob1"
# Which pml the collective, strategy and halo runs use: ucx when it works, else ob1.
MAIN=$OB1; [ $UCX_OK = 1 ] && MAIN=$UCX

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
      extra=""; [ $s = pipelined ] && extra="--chunks 1,2,4,8,16,32"
      run "strat-$b-$s" $LAB -np 2 $MAIN $BIN $b --send device --recv device --strategy $s $extra --sizes 1,1K,64K,1M,16M,64M $P2P_ITERS --validate --out "$(rec strat-$b-$s)"
    done
  done
  for kinds in "host device" "device host"; do
    set -- $kinds
    for s in direct pipelined; do
      extra=""; [ $s = pipelined ] && extra="--chunks 2,4,8,16"
      run "hd-bw-$1-$2-$s" $LAB -np 2 $MAIN $BIN bw --send $1 --recv $2 --strategy $s $extra --sizes 1M,16M,64M $P2P_ITERS --validate --out "$(rec hd-bw-$1-$2-$s)"
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
  for n in 2 4; do
    [ "$n" -gt "$NGPU" ] && continue
    for c in cpu gpu; do
      run "nbc-$c-$n" $LAB -np $n $MAIN $BIN nbc allreduce,bcast,alltoall --mem device --compute $c --sizes 1K,1M,16M --iters 20 --warmup 3 --iters-large 10 --warmup-large 2 --out "$(rec nbc-$c-$n)"
    done
  done
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
