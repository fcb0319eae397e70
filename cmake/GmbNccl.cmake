# SPDX-License-Identifier: BSD-3-Clause
# Decide whether the NCCL module (src/nccl/) is built. AUTO builds it when CUDA is built and NCCL's
# header and library are found; ON makes a missing NCCL an error. Where NCCL is looked for, in order:
#   NCCL_ROOT (CMake or environment variable), NCCL_HOME, the CUDA toolkit, then the NVIDIA Python
#   wheels (nvidia-nccl-cu13 / -cu12, as PyTorch installs them: site-packages/nvidia/nccl/{include,lib},
#   whose library has only the versioned name libnccl.so.2).
# Sets GMB_WITH_NCCL, and GMB_NCCL_ABSENT_REASON (what a build without it says at run time).
set(GMB_WITH_NCCL OFF)
set(GMB_NCCL_ABSENT_REASON "")
if(NOT GMB_ENABLE_NCCL MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "GMB_ENABLE_NCCL must be AUTO, ON or OFF (got '${GMB_ENABLE_NCCL}')")
endif()

if(GMB_ENABLE_NCCL STREQUAL "OFF")
  set(GMB_NCCL_ABSENT_REASON "this gmb-bench was built without NCCL (GMB_ENABLE_NCCL=OFF)")
elseif(NOT GMB_WITH_CUDA)
  if(GMB_ENABLE_NCCL STREQUAL "ON")
    message(FATAL_ERROR "GMB_ENABLE_NCCL=ON needs the CUDA module (GMB_ENABLE_CUDA=ON and a CUDA compiler)")
  endif()
  set(GMB_NCCL_ABSENT_REASON "this gmb-bench was built without CUDA, so without NCCL (reconfigure with -DGMB_ENABLE_CUDA=ON)")
else()
  set(gmb_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR})
  # The Python wheels: ask each interpreter we know of where nvidia.nccl lives.
  find_program(gmb_python3 NAMES python3)
  foreach(python IN ITEMS ${Python3_EXECUTABLE} ${gmb_python3})
    execute_process(
      COMMAND ${python} -c "import importlib.util as u; s = u.find_spec('nvidia.nccl'); print(list(s.submodule_search_locations)[0] if s else '')"
      OUTPUT_VARIABLE gmb_wheel_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(gmb_wheel_dir)
      list(APPEND gmb_nccl_hints ${gmb_wheel_dir})
    endif()
  endforeach()
  find_path(GMB_NCCL_INCLUDE_DIR nccl.h HINTS ${gmb_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
  find_library(GMB_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR HINTS ${gmb_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
               PATH_SUFFIXES lib lib64)
  if(GMB_NCCL_INCLUDE_DIR AND GMB_NCCL_LIBRARY)
    set(GMB_WITH_NCCL ON)
    file(STRINGS "${GMB_NCCL_INCLUDE_DIR}/nccl.h" gmb_nccl_version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
    string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*" "\\1.\\2.\\3"
           GMB_NCCL_HEADER_VERSION "${gmb_nccl_version_lines}")
    message(STATUS "gmb: NCCL ${GMB_NCCL_HEADER_VERSION}: ${GMB_NCCL_LIBRARY} (header ${GMB_NCCL_INCLUDE_DIR})")
  elseif(GMB_ENABLE_NCCL STREQUAL "ON")
    message(FATAL_ERROR "GMB_ENABLE_NCCL=ON but NCCL was not found (nccl.h: ${GMB_NCCL_INCLUDE_DIR}, "
                        "library: ${GMB_NCCL_LIBRARY}); set NCCL_ROOT to its prefix")
  else()
    set(GMB_NCCL_ABSENT_REASON "NCCL was not found when this gmb-bench was configured (set NCCL_ROOT to its prefix and reconfigure)")
  endif()
endif()
