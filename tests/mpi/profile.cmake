# SPDX-License-Identifier: BSD-3-Clause
# libgmb-profile preloaded into a program whose communication is known call by call (profile_app.cpp): every rank's
# profile counts exactly its calls, sizes, peers and communicators (run_profile_test.py).
add_executable(gmb_profile_app ${CMAKE_CURRENT_SOURCE_DIR}/mpi/profile_app.cpp)
target_link_libraries(gmb_profile_app PRIVATE MPI::MPI_C)
target_compile_definitions(gmb_profile_app PRIVATE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
gmb_pin_mpi_library(gmb_profile_app)
add_test(NAME mpi.profile_counts
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_profile_test.py --mpiexec ${MPIEXEC_EXECUTABLE}
                 --profiler $<TARGET_FILE:gmb-profile> --workdir ${CMAKE_CURRENT_BINARY_DIR}/mpi-work/profile_counts
                 -- $<TARGET_FILE:gmb_profile_app>)
set_tests_properties(mpi.profile_counts PROPERTIES ENVIRONMENT "${GMB_MPI_TEST_ENV}" LABELS mpi TIMEOUT 600)
