# SPDX-License-Identifier: BSD-3-Clause
# The cross-check of crosscheck.cmake (GMB_CROSSCHECK, defined there: the test files are included in name order)
# for two more collectives on 3 ranks: allgather (the reference's size is the block each rank contributes, gmb's
# the whole result) and reduce_scatter_equal, MPI_Reduce_scatter with equal counts as OSU's osu_reduce_scatter
# calls it (sizes in multiples of 4 bytes x 3 ranks).
if(NOT DEFINED GMB_CROSSCHECK)
  message(FATAL_ERROR "tests/mpi/crosscheck_collectives.cmake needs GMB_CROSSCHECK from tests/mpi/crosscheck.cmake")
endif()
add_test(NAME mpi.crosscheck_host_3_allgather_reduce_scatter COMMAND ${GMB_CROSSCHECK} --config host-3 --np 3
         --benchmarks allgather,reduce_scatter_equal --sizes 48K,768K)
set_tests_properties(mpi.crosscheck_host_3_allgather_reduce_scatter PROPERTIES ENVIRONMENT "${GMB_MPI_TEST_ENV}" LABELS mpi
                     TIMEOUT 300 RUN_SERIAL TRUE)
