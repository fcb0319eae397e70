# SPDX-License-Identifier: BSD-3-Clause
# One-sided (MPI-3 RMA) benchmarks on host memory: every operation, synchronisation and window creation, validated;
# refusals (sizes an operation cannot move, MPI_Win_allocate for a device window) and bad input.
#
# Open MPI 4.1's default one-sided component on one host (osc/rdma) needs the btl/vader single-copy mechanism these
# tests turn off (tests/CMakeLists.txt) and refuses every window without it ("MPI_Win_create over host memory failed:
# MPI_ERR_WIN: invalid window"). The RMA tests choose osc/pt2pt, which carries RMA over point-to-point messages: its
# passive target progresses only inside MPI calls of the target, what the benchmarks must never hang on. MPICH ignores
# OMPI_ variables.
function(gmb_rma_test name)
  gmb_mpi_test(${name} ${ARGN})
  set_tests_properties(mpi.${name} PROPERTIES ENVIRONMENT "${GMB_MPI_TEST_ENV};OMPI_MCA_osc=pt2pt")
endfunction()

# rma_latency: every operation x synchronisation x window creation, validated.
gmb_rma_test(rma_latency_put_fence_create 2 0 STATUS ok ARGS rma_latency --op put --sync fence --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_put_fence_allocate 2 0 STATUS ok ARGS rma_latency --op put --sync fence --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_put_lock_create 2 0 STATUS ok ARGS rma_latency --op put --sync lock --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_put_lock_allocate 2 0 STATUS ok ARGS rma_latency --op put --sync lock --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_put_flush_create 2 0 STATUS ok ARGS rma_latency --op put --sync flush --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_put_flush_allocate 2 0 STATUS ok ARGS rma_latency --op put --sync flush --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_put_pscw_create 2 0 STATUS ok ARGS rma_latency --op put --sync pscw --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_put_pscw_allocate 2 0 STATUS ok ARGS rma_latency --op put --sync pscw --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_fence_create 2 0 STATUS ok ARGS rma_latency --op get --sync fence --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_fence_allocate 2 0 STATUS ok ARGS rma_latency --op get --sync fence --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_lock_create 2 0 STATUS ok ARGS rma_latency --op get --sync lock --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_lock_allocate 2 0 STATUS ok ARGS rma_latency --op get --sync lock --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_flush_create 2 0 STATUS ok ARGS rma_latency --op get --sync flush --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_flush_allocate 2 0 STATUS ok ARGS rma_latency --op get --sync flush --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_pscw_create 2 0 STATUS ok ARGS rma_latency --op get --sync pscw --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_pscw_allocate 2 0 STATUS ok ARGS rma_latency --op get --sync pscw --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_acc_fence_create 2 0 STATUS ok ARGS rma_latency --op acc --sync fence --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_acc_fence_allocate 2 0 STATUS ok ARGS rma_latency --op acc --sync fence --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_acc_lock_create 2 0 STATUS ok ARGS rma_latency --op acc --sync lock --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_acc_lock_allocate 2 0 STATUS ok ARGS rma_latency --op acc --sync lock --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_acc_flush_create 2 0 STATUS ok ARGS rma_latency --op acc --sync flush --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_acc_flush_allocate 2 0 STATUS ok ARGS rma_latency --op acc --sync flush --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_acc_pscw_create 2 0 STATUS ok ARGS rma_latency --op acc --sync pscw --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_acc_pscw_allocate 2 0 STATUS ok ARGS rma_latency --op acc --sync pscw --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_acc_fence_create 2 0 STATUS ok ARGS rma_latency --op get_acc --sync fence --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_acc_fence_allocate 2 0 STATUS ok ARGS rma_latency --op get_acc --sync fence --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_acc_lock_create 2 0 STATUS ok ARGS rma_latency --op get_acc --sync lock --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_acc_lock_allocate 2 0 STATUS ok ARGS rma_latency --op get_acc --sync lock --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_acc_flush_create 2 0 STATUS ok ARGS rma_latency --op get_acc --sync flush --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_acc_flush_allocate 2 0 STATUS ok ARGS rma_latency --op get_acc --sync flush --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_acc_pscw_create 2 0 STATUS ok ARGS rma_latency --op get_acc --sync pscw --win create --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_get_acc_pscw_allocate 2 0 STATUS ok ARGS rma_latency --op get_acc --sync pscw --win allocate --sizes 4:64K --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_fop_fence_create 2 0 STATUS ok ARGS rma_latency --op fop --sync fence --win create --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_fop_fence_allocate 2 0 STATUS ok ARGS rma_latency --op fop --sync fence --win allocate --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_fop_lock_create 2 0 STATUS ok ARGS rma_latency --op fop --sync lock --win create --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_fop_lock_allocate 2 0 STATUS ok ARGS rma_latency --op fop --sync lock --win allocate --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_fop_flush_create 2 0 STATUS ok ARGS rma_latency --op fop --sync flush --win create --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_fop_flush_allocate 2 0 STATUS ok ARGS rma_latency --op fop --sync flush --win allocate --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_fop_pscw_create 2 0 STATUS ok ARGS rma_latency --op fop --sync pscw --win create --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_fop_pscw_allocate 2 0 STATUS ok ARGS rma_latency --op fop --sync pscw --win allocate --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_cas_fence_create 2 0 STATUS ok ARGS rma_latency --op cas --sync fence --win create --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_cas_fence_allocate 2 0 STATUS ok ARGS rma_latency --op cas --sync fence --win allocate --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_cas_lock_create 2 0 STATUS ok ARGS rma_latency --op cas --sync lock --win create --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_cas_lock_allocate 2 0 STATUS ok ARGS rma_latency --op cas --sync lock --win allocate --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_cas_flush_create 2 0 STATUS ok ARGS rma_latency --op cas --sync flush --win create --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_cas_flush_allocate 2 0 STATUS ok ARGS rma_latency --op cas --sync flush --win allocate --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_cas_pscw_create 2 0 STATUS ok ARGS rma_latency --op cas --sync pscw --win create --sizes 8 --iters 20 --warmup 2 --validate --out OUT)
gmb_rma_test(rma_latency_cas_pscw_allocate 2 0 STATUS ok ARGS rma_latency --op cas --sync pscw --win allocate --sizes 8 --iters 20 --warmup 2 --validate --out OUT)

# rma_bw: every operation x synchronisation x window creation, validated.
gmb_rma_test(rma_bw_put_fence_create 2 0 STATUS ok ARGS rma_bw --op put --sync fence --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_put_fence_allocate 2 0 STATUS ok ARGS rma_bw --op put --sync fence --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_put_lock_create 2 0 STATUS ok ARGS rma_bw --op put --sync lock --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_put_lock_allocate 2 0 STATUS ok ARGS rma_bw --op put --sync lock --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_put_flush_create 2 0 STATUS ok ARGS rma_bw --op put --sync flush --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_put_flush_allocate 2 0 STATUS ok ARGS rma_bw --op put --sync flush --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_put_pscw_create 2 0 STATUS ok ARGS rma_bw --op put --sync pscw --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_put_pscw_allocate 2 0 STATUS ok ARGS rma_bw --op put --sync pscw --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_get_fence_create 2 0 STATUS ok ARGS rma_bw --op get --sync fence --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_get_fence_allocate 2 0 STATUS ok ARGS rma_bw --op get --sync fence --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_get_lock_create 2 0 STATUS ok ARGS rma_bw --op get --sync lock --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_get_lock_allocate 2 0 STATUS ok ARGS rma_bw --op get --sync lock --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_get_flush_create 2 0 STATUS ok ARGS rma_bw --op get --sync flush --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_get_flush_allocate 2 0 STATUS ok ARGS rma_bw --op get --sync flush --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_get_pscw_create 2 0 STATUS ok ARGS rma_bw --op get --sync pscw --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_get_pscw_allocate 2 0 STATUS ok ARGS rma_bw --op get --sync pscw --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_acc_fence_create 2 0 STATUS ok ARGS rma_bw --op acc --sync fence --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_acc_fence_allocate 2 0 STATUS ok ARGS rma_bw --op acc --sync fence --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_acc_lock_create 2 0 STATUS ok ARGS rma_bw --op acc --sync lock --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_acc_lock_allocate 2 0 STATUS ok ARGS rma_bw --op acc --sync lock --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_acc_flush_create 2 0 STATUS ok ARGS rma_bw --op acc --sync flush --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_acc_flush_allocate 2 0 STATUS ok ARGS rma_bw --op acc --sync flush --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_acc_pscw_create 2 0 STATUS ok ARGS rma_bw --op acc --sync pscw --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bw_acc_pscw_allocate 2 0 STATUS ok ARGS rma_bw --op acc --sync pscw --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)

# rma_bibw: every operation x synchronisation x window creation, validated.
gmb_rma_test(rma_bibw_put_fence_create 2 0 STATUS ok ARGS rma_bibw --op put --sync fence --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_put_fence_allocate 2 0 STATUS ok ARGS rma_bibw --op put --sync fence --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_put_lock_create 2 0 STATUS ok ARGS rma_bibw --op put --sync lock --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_put_lock_allocate 2 0 STATUS ok ARGS rma_bibw --op put --sync lock --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_put_flush_create 2 0 STATUS ok ARGS rma_bibw --op put --sync flush --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_put_flush_allocate 2 0 STATUS ok ARGS rma_bibw --op put --sync flush --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_put_pscw_create 2 0 STATUS ok ARGS rma_bibw --op put --sync pscw --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_put_pscw_allocate 2 0 STATUS ok ARGS rma_bibw --op put --sync pscw --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_acc_fence_create 2 0 STATUS ok ARGS rma_bibw --op acc --sync fence --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_acc_fence_allocate 2 0 STATUS ok ARGS rma_bibw --op acc --sync fence --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_acc_lock_create 2 0 STATUS ok ARGS rma_bibw --op acc --sync lock --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_acc_lock_allocate 2 0 STATUS ok ARGS rma_bibw --op acc --sync lock --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_acc_flush_create 2 0 STATUS ok ARGS rma_bibw --op acc --sync flush --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_acc_flush_allocate 2 0 STATUS ok ARGS rma_bibw --op acc --sync flush --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_acc_pscw_create 2 0 STATUS ok ARGS rma_bibw --op acc --sync pscw --win create --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
gmb_rma_test(rma_bibw_acc_pscw_allocate 2 0 STATUS ok ARGS rma_bibw --op acc --sync pscw --win allocate --sizes 4:16K --iters 20 --warmup 2 --window 8 --validate --out OUT)
# The defaults (put, flush, create, sizes 4:4M), OMB's spellings (-s, -w, buffer letters), larger sizes, buffers per
# size, adaptive repetitions, and what the records say.
gmb_rma_test(rma_latency_defaults 2 0 STATUS ok ARGS rma_latency --iters 20 --warmup 2 --iters-large 3 --warmup-large 1 --validate --out OUT)
gmb_rma_test(rma_latency_omb_spelling 2 0 STATUS ok ARGS rma_latency -s pscw -w allocate -i 20 -x 2 -c H H --sizes 4:1K --out OUT)
gmb_rma_test(rma_bw_large 2 0 STATUS ok ARGS rma_bw --op get --sizes 1M,4M --iters-large 3 --warmup-large 1 -W 4 --validate --out OUT)
gmb_rma_test(rma_bibw_fresh_buffers 2 0 STATUS ok STDOUT "\"buffer_allocation\":\"fresh-per-size\""
             ARGS rma_bibw --op acc --sync fence --sizes 4,1K,64K --iters 5 --warmup 1 --window 4 --fresh-buffers --validate --format json --out OUT)
gmb_rma_test(rma_latency_precision 2 0 STATUS ok PRECISION 0.05 MAX_ITERATIONS 200
             ARGS rma_latency --sizes 8,1K --iters 200 --warmup 5 --precision 0.05 --out OUT)
gmb_rma_test(rma_records 2 0 STATUS ok
             STDOUT "\"operation\":\"get_acc\",\"variant\":\"pscw allocate\",\"rma\":\\{\"operation\":\"get_acc\",\"call\":\"MPI_Get_accumulate\",\"sync\":\"pscw\",\"window_creation\":\"allocate\",\"datatype\":\"int\"\\},\"memory\":\\{\"send\":\"host\",\"recv\":\"host\"\\},\"size_convention\":\"message\",\"transport\":\"mpi\",\"strategy\":\"direct\""
             ARGS rma_latency --op get_acc --sync pscw --win allocate --sizes 64 --iters 10 --warmup 1 --format json --out OUT)
gmb_rma_test(rma_bw_records 2 0 STATUS ok STDOUT "\"window\":16,.*\"bandwidth_GBps\":\\{\"n\":.*\"metrics\":\\{\"time_us\":\"time per window: rank 0's 16 MPI_Put"
             ARGS rma_bw --sizes 4K --iters 10 --warmup 1 --window 16 --format json --out OUT)

# Sizes an operation cannot move are refused per size with the reason; the others are measured.
gmb_rma_test(rma_acc_sizes_refused 2 3
             POINTS "1=unsupported=positive multiple of 4 bytes" "2=unsupported=positive multiple of 4 bytes"
                    "6=unsupported=positive multiple of 4 bytes" "4=ok" "8=ok" "64=ok"
             ARGS rma_latency --op acc --sizes 1,2,4,6,8,64 --iters 10 --warmup 1 --validate --out OUT)
gmb_rma_test(rma_bw_acc_sizes_refused 2 3
             POINTS "3=unsupported=MPI_Accumulate\\) moves 4-byte MPI_INT elements" "12=ok"
             ARGS rma_bw --op acc --sizes 3,12 --iters 5 --warmup 1 --window 4 --validate --out OUT)
gmb_rma_test(rma_fop_sizes_refused 2 3
             POINTS "4=unsupported=measures 8 bytes only" "16=unsupported=measures 8 bytes only" "8=ok"
             ARGS rma_latency --op fop --sizes 4,8,16 --iters 10 --warmup 1 --validate --out OUT)

# MPI_Win_allocate gives host memory: a device window is refused with the reason (exit 3), before memory kinds.
gmb_rma_test(rma_allocate_device_window_unsupported 2 3 STATUS unsupported
             STDERR "unsupported: MPI_Win_allocate allocates the window itself, in host memory; a device window needs --win create"
             ARGS rma_latency --win allocate --recv device --sizes 8 --out OUT)
gmb_rma_test(rma_allocate_pinned_letters_unsupported 2 3 STATUS unsupported
             STDERR "unsupported: MPI_Win_allocate allocates the window itself, in host memory; a pinned window needs --win create"
             ARGS rma_bw --win allocate H P --sizes 8 --out OUT)
# A device window on a host-only build (or a library not proven CUDA-aware): unsupported with the reason.
gmb_rma_test(rma_device_window_unsupported 2 3 STATUS unsupported
             STDERR "unsupported: (memory kind 'device' is not available|refusing to hand device memory)"
             ARGS rma_bibw D D --sizes 8 --out OUT)

# Bad input: a clear message naming what is accepted, exit status 2, no records.
gmb_rma_test(rma_bad_op 2 2 STDERR "--op: unknown RMA operation 'swap' \\(accepted: put, get, acc, get_acc, fop, cas\\)"
             ARGS rma_latency --op swap --out OUT)
gmb_rma_test(rma_bw_op_not_offered 2 2 STDERR "--op: unknown RMA operation 'fop' \\(accepted: put, get, acc\\)"
             ARGS rma_bw --op fop --out OUT)
gmb_rma_test(rma_bibw_op_not_offered 2 2 STDERR "--op: unknown RMA operation 'get' \\(accepted: put, acc\\)"
             ARGS rma_bibw --op get --out OUT)
gmb_rma_test(rma_bad_sync 2 2 STDERR "-s: unknown synchronisation 'flush_local' \\(accepted: fence, lock, flush, pscw\\)"
             ARGS rma_latency -s flush_local --out OUT)
gmb_rma_test(rma_bad_win 2 2 STDERR "--win: unknown window creation 'dynamic' \\(accepted: create, allocate\\)"
             ARGS rma_bw --win dynamic --out OUT)
gmb_rma_test(rma_managed_placement_refused 2 2 STDERR "memory 'managed:device': the one-sided benchmarks do not place managed memory"
             ARGS rma_latency MD MH --out OUT)
gmb_rma_test(rma_bad_rank_count 3 2 STDERR "rma_latency needs exactly 2 ranks \\(launched with 3\\)" ARGS rma_latency --out OUT)
gmb_rma_test(rma_window_on_latency 2 2 STDERR "unknown option '--window'" ARGS rma_latency --window 4 --out OUT)
# put and get move bytes: any size, 0 included (a window of 0 bytes on the target) for the latency; a bandwidth of
# 0-byte messages is not defined: rma_bw records 0 B unsupported and measures the others ("." for the reason's ";").
gmb_rma_test(rma_latency_bytes_any_size 2 0 STATUS ok ARGS rma_latency --op get --sync fence --sizes 0,1,3 --iters 10 --warmup 1 --validate --out OUT)
gmb_rma_test(rma_bw_bytes_any_size 2 3 POINTS "0=unsupported=^a bandwidth of 0-byte messages is not defined. latency measures 0 B$" "1=ok" "3=ok"
             ARGS rma_bw --op put --win allocate --sizes 0,1,3 --iters 10 --warmup 1 --window 4 --validate --out OUT)
