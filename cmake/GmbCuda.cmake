# SPDX-License-Identifier: BSD-3-Clause
# Decide whether the CUDA module is built. AUTO builds it when a CUDA compiler is found.
# The default architectures need no GPU at configure time (never "native"): override with
# -DCMAKE_CUDA_ARCHITECTURES=90 on the machine that runs the code.
set(GMB_WITH_CUDA OFF)
if(GMB_ENABLE_CUDA STREQUAL "ON" OR GMB_ENABLE_CUDA STREQUAL "AUTO")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(GMB_WITH_CUDA ON)
  elseif(GMB_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GMB_ENABLE_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER or put nvcc on PATH)")
  endif()
elseif(NOT GMB_ENABLE_CUDA STREQUAL "OFF")
  message(FATAL_ERROR "GMB_ENABLE_CUDA must be AUTO, ON or OFF (got '${GMB_ENABLE_CUDA}')")
endif()

if(GMB_WITH_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures")
  endif()
  # The shared CUDA runtime only: one copy of its state for us, NCCL and the MPI library (nvcc's
  # default static copy would be linked beside it).
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
endif()
