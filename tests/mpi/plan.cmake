# SPDX-License-Identifier: BSD-3-Clause
# gmb-bench plan: several benchmarks in one launch, each block's records as a launch of its own would write them
# (run_plan_test.py says what each case checks).
foreach(case blocks deadline bad-plans)
  add_test(NAME mpi.plan_${case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_plan_test.py --mpiexec ${MPIEXEC_EXECUTABLE}
                   --schema ${GMB_SCHEMA_FILE} --workdir ${CMAKE_CURRENT_BINARY_DIR}/mpi-work/plan_${case}
                   --case ${case} -- ${GMB_BIN})
  set_tests_properties(mpi.plan_${case} PROPERTIES ENVIRONMENT "${GMB_MPI_TEST_ENV}" LABELS mpi TIMEOUT 1200)
endforeach()
