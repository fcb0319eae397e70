// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/mpi_library.hpp"

#include <dlfcn.h>
#include <mpi.h>
#include <limits.h>
#include <stdlib.h>

#include "gmb/provenance.hpp"

namespace gmb {

namespace {

std::string resolved(const std::string& path) {
  if (path.empty()) return "";
  char buffer[PATH_MAX];
  return realpath(path.c_str(), buffer) ? std::string(buffer) : std::string();
}

}  // namespace

MpiLibraryObject loaded_mpi_library() {
  MpiLibraryObject object;
  object.linked = build_info().mpi_library;
  object.linked_realpath = build_info().mpi_library_realpath;
  // The PMPI entry points live in the MPI library itself, also when a profiling tool is preloaded and
  // defines the MPI_ ones. RTLD_NEXT searches the objects loaded after the engine's executable, so the
  // answer is never the executable's own PLT stub (which a non-PIE build takes a function's address as).
  void* symbol = nullptr;
  for (const char* name : {"PMPI_Get_library_version", "MPI_Get_library_version"}) {
    symbol = dlsym(RTLD_NEXT, name);
    if (symbol) break;
  }
  if (!symbol) {
    const char* error = dlerror();
    object.lookup_error = std::string("no shared object defines PMPI_Get_library_version") +
                          (error ? std::string(" (") + error + ")" : std::string(" (MPI linked statically?)"));
    return object;
  }
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || !info.dli_fname || !*info.dli_fname) {
    object.lookup_error = "dladdr could not name the object defining PMPI_Get_library_version";
    return object;
  }
  object.loaded = info.dli_fname;
  object.loaded_realpath = resolved(object.loaded);
  return object;
}

int mpi_library_version(std::string& text) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int length = 0;
  const int rc = MPI_Get_library_version(version, &length);
  text.assign(version, rc == MPI_SUCCESS && length > 0 ? static_cast<std::size_t>(length) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();  // Open MPI counts its NUL
  return rc;
}

bool MpiLibraryObject::matches_build() const {
  if (loaded_realpath.empty() || linked_realpath.empty()) return false;
  // The linker was given the development name (libmpi.so) and the loader opens the soname (libmpi.so.40):
  // links to one file on most systems, two copies in a wheel (which cannot hold links). The same directory
  // is the same installation.
  auto directory = [](const std::string& path) { return path.substr(0, path.rfind('/')); };
  return loaded_realpath == linked_realpath || directory(loaded_realpath) == directory(linked_realpath);
}

std::string MpiLibraryObject::mismatch() const {
  if (loaded_realpath.empty() || linked_realpath.empty() || matches_build()) return "";
  return "running " + loaded_realpath + " but built against " + linked_realpath;
}

Json MpiLibraryObject::to_json() const {
  Json out = Json::object()
                 .set("loaded", loaded)
                 .set("loaded_realpath", loaded_realpath)
                 .set("linked", linked)
                 .set("linked_realpath", linked_realpath)
                 .set("matches_build", matches_build());
  if (!lookup_error.empty()) out.set("lookup_error", lookup_error);
  return out;
}

}  // namespace gmb
