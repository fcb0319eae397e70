# SPDX-License-Identifier: BSD-3-Clause
# gmb-bench against the independently written reference program on host memory (reference/crosscheck.py): the
# same operations, sizes and launches, both validated; the ratio of their times is reported and must lie
# within a bound. This machine may be 2 busy virtual cores, where launches of one program fall into a fast
# and a slow mode (seen: 64 KiB ping-pong 3.1 or 9-11 us, from launch to launch, either program): each
# tool's fastest of 5 launches is compared, ranks unbound, the tests alone, within a bound loose enough for
# those modes. It catches a gross disagreement (a figure timing the wrong thing); the GPU cross-check in
# docs/validation.md holds 0.95..1.05.
set(GMB_CROSSCHECK ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/reference/crosscheck.py --gmb $<TARGET_FILE:gmb-bench>
    --reference $<TARGET_FILE:gmb-reference> --launcher ${MPIEXEC_EXECUTABLE} --iters 50 --warmup 5 --window 16
    --launches 5 --over-launches min --bound 0.2:5 "--launcher-args=--bind-to none")
add_test(NAME mpi.crosscheck_host COMMAND ${GMB_CROSSCHECK} --config host-2 --sizes 1,64K,1M,4M)
# 3 ranks: alltoall's sizes differ by convention (per peer vs whole buffer); both must move the same bytes.
add_test(NAME mpi.crosscheck_host_3 COMMAND ${GMB_CROSSCHECK} --config host-3 --np 3 --benchmarks bcast,allreduce,alltoall
         --sizes 64K,1M)
set_tests_properties(mpi.crosscheck_host mpi.crosscheck_host_3 PROPERTIES ENVIRONMENT "${GMB_MPI_TEST_ENV}" LABELS mpi
                     TIMEOUT 300 RUN_SERIAL TRUE)
