# SPDX-License-Identifier: BSD-3-Clause
# The MPI library the engine links, and a run path that keeps it.
#
# Several MPI installations share a soname (Open MPI's libmpi.so.40, MPICH's libmpi.so.12). A run path
# recorded as DT_RUNPATH (the linker's default) is searched after LD_LIBRARY_PATH, so an environment
# prepared for another MPI (a module, a vendor's env script) silently swaps the library under an engine
# built for this one. GMB_PIN_MPI_LIBRARY=ON (default) records the directories of this MPI's libraries
# as DT_RPATH, which the loader searches before LD_LIBRARY_PATH, in the build tree and when installed.
# The directories are the ones the compiler wrapper reports (FindMPI reads them from -showme / -show),
# plus the directory each library file really lives in (Debian's openmpi/lib holds only symbolic links).
#
# Sets GMB_MPI_LIBRARY / GMB_MPI_LIBRARY_REALPATH (recorded in every context record) and
# GMB_MPI_LIBRARY_DIRS, and defines gmb_pin_mpi_library(target).
option(GMB_PIN_MPI_LIBRARY "Search this MPI's library directories before LD_LIBRARY_PATH (DT_RPATH)" ON)

set(GMB_MPI_LIBRARY "")
set(GMB_MPI_LIBRARY_DIRS "")
foreach(lib IN LISTS MPI_C_LIBRARIES)
  if(NOT IS_ABSOLUTE "${lib}")
    continue()
  endif()
  get_filename_component(name "${lib}" NAME)
  get_filename_component(dir "${lib}" DIRECTORY)
  get_filename_component(real "${lib}" REALPATH)
  get_filename_component(real_dir "${real}" DIRECTORY)
  # The core MPI library (libmpi, libmpich, libmpi_abi), not language bindings or helpers it drags in.
  if(GMB_MPI_LIBRARY STREQUAL "" AND name MATCHES "^lib(mpi|mpich|mpi_abi)\\.(so|a|dylib)")
    set(GMB_MPI_LIBRARY "${lib}")
    set(GMB_MPI_LIBRARY_REALPATH "${real}")
  endif()
  if(name MATCHES "\\.so")
    list(APPEND GMB_MPI_LIBRARY_DIRS "${dir}" "${real_dir}")
  endif()
endforeach()
list(REMOVE_DUPLICATES GMB_MPI_LIBRARY_DIRS)
if(GMB_MPI_LIBRARY STREQUAL "")
  message(WARNING "gmb: none of MPI_C_LIBRARIES (${MPI_C_LIBRARIES}) looks like the MPI library itself; "
                  "records will not name the library the engine was built against")
endif()

function(gmb_pin_mpi_library target)
  if(NOT GMB_PIN_MPI_LIBRARY OR GMB_MPI_LIBRARY_DIRS STREQUAL "" OR APPLE)
    return()
  endif()
  # CMake leaves the toolchain's implicit directories (/usr/lib/x86_64-linux-gnu) out of the run paths it
  # computes; named here, they are kept, and searched before LD_LIBRARY_PATH like the others.
  set_property(TARGET ${target} APPEND PROPERTY BUILD_RPATH ${GMB_MPI_LIBRARY_DIRS})
  set_property(TARGET ${target} APPEND PROPERTY INSTALL_RPATH ${GMB_MPI_LIBRARY_DIRS})
  # Among the link libraries, so it follows the wrapper's own link flags (a wrapper may pass
  # -Wl,--enable-new-dtags, and the linker takes the last word).
  target_link_libraries(${target} PRIVATE "-Wl,--disable-new-dtags")
endfunction()
