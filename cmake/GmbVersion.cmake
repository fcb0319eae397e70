# SPDX-License-Identifier: BSD-3-Clause
# The git revision is read at configure time; "unknown" outside a checkout.
execute_process(COMMAND git -C "${CMAKE_SOURCE_DIR}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE GMB_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE git_result)
if(NOT git_result EQUAL 0 OR GMB_GIT_REVISION STREQUAL "")
  set(GMB_GIT_REVISION "unknown")
endif()
set(GMB_COMPILER "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
if(GMB_WITH_CUDA)
  set(GMB_WITH_CUDA_BOOL true)
else()
  set(GMB_WITH_CUDA_BOOL false)
endif()
if(GMB_WITH_NCCL)
  set(GMB_WITH_NCCL_BOOL true)
else()
  set(GMB_WITH_NCCL_BOOL false)
endif()
configure_file(${CMAKE_SOURCE_DIR}/src/core/build_info.cpp.in ${CMAKE_BINARY_DIR}/generated/build_info.cpp @ONLY)
