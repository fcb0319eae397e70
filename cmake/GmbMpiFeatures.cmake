# SPDX-License-Identifier: BSD-3-Clause
# Which static GPU-support queries this MPI offers (src/core/awareness.cpp), and which MPI-4 interfaces.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
check_c_source_compiles([=[
#include <mpi.h>
#include <mpi-ext.h>
int main(void) { return MPIX_Query_cuda_support(); }
]=] GMB_HAVE_MPIX_QUERY_CUDA_SUPPORT)
check_c_source_compiles([=[
#include <mpi.h>
int main(void) { int s = 0; return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &s); }
]=] GMB_HAVE_MPIX_GPU_QUERY_SUPPORT)
unset(CMAKE_REQUIRED_LIBRARIES)

# MPI-4 interfaces the engine measures when the library has them (src/core/mpi_features.cpp). Checked by
# compiling and linking a call, not by MPI_VERSION: Open MPI 5 implements both while it reports MPI 3.1, and
# a library may declare what it does not export.
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
check_c_source_compiles([=[
#include <mpi.h>
int main(void) {
  MPI_Request r; int flag = 0;
  MPI_Psend_init(0, 1, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
  MPI_Precv_init(0, 1, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
  MPI_Pready(0, r); MPI_Pready_range(0, 0, r); MPI_Parrived(r, 0, &flag);
  return flag;
}
]=] GMB_HAVE_MPI_PARTITIONED)
check_c_source_compiles([=[
#include <mpi.h>
int main(void) {
  MPI_Request r;
  return MPI_Allreduce_init(0, 0, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r) +
         MPI_Bcast_init(0, 0, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r) +
         MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r);
}
]=] GMB_HAVE_MPI_PERSISTENT_COLLECTIVES)
unset(CMAKE_REQUIRED_LIBRARIES)
