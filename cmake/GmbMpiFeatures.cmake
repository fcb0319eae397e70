# SPDX-License-Identifier: BSD-3-Clause
# Which static GPU-support queries this MPI offers. Used only by src/core/gpu_awareness.cpp.
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
