# SPDX-License-Identifier: BSD-3-Clause
# gmb-bench against the independently written reference program on host memory (reference/crosscheck.py): the
# same operations, sizes and launches; the test passes when both programs ran every row, both validated, and the
# table came out. No ratio is judged here: on a shared or busy machine (2 cores under other jobs) the two programs'
# times differ by launch-to-launch modes of 3x and more, whatever either measures. The ratio bound belongs to the
# GPU cross-check in docs/validation.md (--bound 0.95:1.05). Two launches of each, so that the table's
# launch-to-launch columns are computed as on a GPU run; few iterations, since no figure is judged.
set(GMB_CROSSCHECK ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/reference/crosscheck.py --gmb $<TARGET_FILE:gmb-bench>
    --reference $<TARGET_FILE:gmb-reference> --launcher ${MPIEXEC_EXECUTABLE} --iters 10 --warmup 2 --window 16
    --launches 2 "--launcher-args=--bind-to none")
add_test(NAME mpi.crosscheck_host COMMAND ${GMB_CROSSCHECK} --config host-2 --sizes 1,64K,1M,4M)
# 3 ranks: alltoall's sizes differ by convention (per peer vs whole buffer); both must move the same bytes.
add_test(NAME mpi.crosscheck_host_3 COMMAND ${GMB_CROSSCHECK} --config host-3 --np 3 --benchmarks bcast,allreduce,alltoall
         --sizes 64K,1M)
# Limits catch a hang only: crosscheck.py stops a launch after 600 s, and the test's limit leaves room for its
# 20 launches on a slow machine.
set_tests_properties(mpi.crosscheck_host mpi.crosscheck_host_3 PROPERTIES ENVIRONMENT "${GMB_MPI_TEST_ENV}" LABELS mpi
                     TIMEOUT 1200)
