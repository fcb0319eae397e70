# SPDX-License-Identifier: BSD-3-Clause
# The release tarball: `cmake --build <build> --target package_source` writes <build>/gmb-<version>.tar.gz, the
# committed files of the checkout (git archive of HEAD: no build trees, results or untracked files), and
# gmb-<version>.tar.gz.sha256 beside it. One commit always gives the same bytes, so Spack and EasyBuild can pin
# its checksum (packaging/, docs/install.md).
if(CMAKE_SCRIPT_MODE_FILE)  # the target's command, run at build time
  execute_process(COMMAND git -C "${SOURCE_DIR}" archive --format=tar.gz "--prefix=${NAME}/" -o "${TARBALL}" HEAD
                  RESULT_VARIABLE git_result ERROR_VARIABLE git_error)
  if(NOT git_result EQUAL 0)
    message(FATAL_ERROR "package_source: the tarball is made from a git checkout of gmb; git archive said: ${git_error}")
  endif()
  file(SHA256 "${TARBALL}" sha256)
  get_filename_component(tarball_name "${TARBALL}" NAME)
  file(WRITE "${TARBALL}.sha256" "${sha256}  ${tarball_name}\n")
  message(STATUS "${TARBALL}\nsha256 ${sha256}")
  return()
endif()

set(GMB_SOURCE_TARBALL "${PROJECT_BINARY_DIR}/gmb-${PROJECT_VERSION}.tar.gz")
add_custom_target(package_source
  COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}" "-DNAME=gmb-${PROJECT_VERSION}"
          "-DTARBALL=${GMB_SOURCE_TARBALL}" -P "${CMAKE_CURRENT_LIST_FILE}"
  COMMENT "Writing the release tarball gmb-${PROJECT_VERSION}.tar.gz and its sha256"
  VERBATIM)
