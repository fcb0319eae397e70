// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/mpi_features.hpp"

#include "gmb/mpi_library.hpp"

namespace gmb {

namespace {

// The first line of MPI_Get_library_version and the standard version MPI_Get_version reports.
std::string library_identity() {
  std::string text;
  if (mpi_library_version(text) != MPI_SUCCESS || text.empty()) text = "an MPI library that does not name itself";
  text = text.substr(0, text.find_first_of("\n,"));
  int major = 0, minor = 0;
  if (MPI_Get_version(&major, &minor) == MPI_SUCCESS)
    text += " (MPI " + std::to_string(major) + "." + std::to_string(minor) + ")";
  return text;
}

}  // namespace

const MpiFeatureInfo& mpi_feature(MpiFeature feature) {
  static const MpiFeatureInfo partitioned{"partitioned", "MPI_Psend_init/MPI_Precv_init/MPI_Pready/MPI_Parrived",
                                          "MPI-4.0", GMB_HAVE_MPI_PARTITIONED != 0};
  static const MpiFeatureInfo persistent{"persistent_collectives", "MPI_Allreduce_init, MPI_Bcast_init, ... (MPI_<op>_init)",
                                         "MPI-4.0", GMB_HAVE_MPI_PERSISTENT_COLLECTIVES != 0};
  return feature == MpiFeature::partitioned ? partitioned : persistent;
}

std::string mpi_feature_problem(MpiFeature feature) {
  const MpiFeatureInfo& info = mpi_feature(feature);
  if (info.built) return "";
  return std::string("the engine's MPI library, ") + library_identity() + ", has no " + info.calls + " (" +
         info.standard + " " + (feature == MpiFeature::partitioned ? "partitioned communication" : "persistent collectives") +
         "): they did not compile and link when the engine was built";
}

Json mpi_features_json() {
  Json out = Json::object();
  for (MpiFeature f : {MpiFeature::partitioned, MpiFeature::persistent_collectives}) {
    const MpiFeatureInfo& info = mpi_feature(f);
    Json entry = Json::object().set("available", info.built).set("calls", info.calls).set("standard", info.standard);
    if (!info.built) entry.set("reason", mpi_feature_problem(f));
    out.set(info.name, entry);
  }
  return out;
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error code " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace gmb
