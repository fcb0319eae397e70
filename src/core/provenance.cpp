// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/provenance.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <optional>
#include <random>

#include "gmb/error.hpp"
#include "gmb/mpi_features.hpp"
#include "gmb/mpi_library.hpp"
#include "gmb/network.hpp"
#include "gmb/numa.hpp"

extern char** environ;

namespace gmb {

namespace {

std::string hostname() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) return "unknown";
  return host;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string broadcast_string(MPI_Comm comm, std::string value, int root) {
  int length = static_cast<int>(value.size());
  GMB_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, root, comm));
  value.resize(static_cast<std::size_t>(length));
  GMB_MPI_CHECK(MPI_Bcast(value.data(), length, MPI_CHAR, root, comm));
  return value;
}

// Each string length-prefixed in one buffer.
std::vector<std::vector<std::string>> gather_fields(MPI_Comm comm, const std::vector<std::string>& fields) {
  int rank = 0, size = 1;
  GMB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  GMB_MPI_CHECK(MPI_Comm_size(comm, &size));
  std::string packed;
  for (const auto& f : fields) packed += std::to_string(f.size()) + ":" + f;
  int length = static_cast<int>(packed.size());
  std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  GMB_MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm));
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::string all(static_cast<std::size_t>(rank == 0 ? total : 0), '\0');
  GMB_MPI_CHECK(MPI_Gatherv(packed.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm));
  std::vector<std::vector<std::string>> out;
  if (rank != 0) return out;
  for (int r = 0; r < size; ++r) {
    std::vector<std::string> items;
    std::size_t pos = static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]);
    const std::size_t end = pos + static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]);
    while (pos < end) {
      const std::size_t colon = all.find(':', pos);
      const std::size_t n = std::stoul(all.substr(pos, colon - pos));
      items.push_back(all.substr(colon + 1, n));
      pos = colon + 1 + n;
    }
    out.push_back(std::move(items));
  }
  return out;
}

std::vector<RankFacts> gather_rank_facts(MPI_Comm comm, const Platform& platform) {
  GpuInfo gpu;
  if (platform.gpu && platform.gpu_unavailable_reason.empty()) gpu = platform.gpu->current_device();
  const std::vector<std::string> mine = {hostname(), gpu.uuid, gpu.pci_bus_id, std::to_string(this_process_numa_node()),
                                         std::to_string(gpu.pci_bus_id.empty() ? -1 : pci_numa_node(gpu.pci_bus_id))};
  const auto all = gather_fields(comm, mine);
  // Rank 0 packs everyone's facts and broadcasts them: every rank can classify paths.
  std::string packed;
  for (const auto& f : all)
    for (const auto& item : f) packed += std::to_string(item.size()) + ":" + item;
  packed = broadcast_string(comm, packed, 0);
  std::vector<RankFacts> facts;
  std::size_t pos = 0;
  auto next = [&]() {
    const std::size_t colon = packed.find(':', pos);
    const std::size_t n = std::stoul(packed.substr(pos, colon - pos));
    std::string item = packed.substr(colon + 1, n);
    pos = colon + 1 + n;
    return item;
  };
  while (pos < packed.size()) {
    RankFacts f;
    f.host = next();
    f.gpu_uuid = next();
    f.gpu_pci = next();
    f.numa = std::stoi(next());
    f.gpu_numa = std::stoi(next());
    facts.push_back(std::move(f));
  }
  return facts;
}

std::string make_run_id(MPI_Comm comm) {
  int rank = 0;
  GMB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::string id;
  if (rank == 0) {
    std::random_device rd;
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%08x", rd());
    id = utc_now() + "-" + hostname() + "-" + suffix;
  }
  return broadcast_string(comm, id, 0);
}

const std::vector<std::string>& recorded_environment_prefixes() {
  // MPI libraries, their launchers and runtimes (UCX, libfabric, PSM2, UCC, HCOLL), CUDA, NCCL, the schedulers, OpenMP,
  // hwloc and gmb's own: every variable the harness treats as a setting must start with one of these, or two launches
  // that differ in it would be taken for repetitions of one point (the harness checks it against this list).
  static const std::vector<std::string> prefixes = {
      "UCX_",   "OMPI_", "PMIX_", "PRTE_", "MPICH_", "MPIR_", "HYDRA_", "I_MPI_", "MV2_", "FI_",  "PSM2_",  "UCC_",
      "HCOLL_", "CUDA_", "NCCL_", "NVIDIA_", "SLURM_", "PALS_", "FLUX_", "PMI_", "OMP_", "GMB_", "HWLOC_", "LD_LIBRARY_PATH"};
  return prefixes;
}

namespace {

std::vector<std::string> environment_entries() {
  std::vector<std::string> entries;
  for (char** e = environ; e && *e; ++e) entries.emplace_back(*e);
  return entries;
}

std::optional<std::vector<std::string>>& launch_environment() {
  static std::optional<std::vector<std::string>> entries;
  return entries;
}

}  // namespace

void capture_launch_environment() { launch_environment() = environment_entries(); }

Json relevant_environment(const Json& nic_pinning) {
  // The variables --nic set belong to nic_pinning, not to the environment the launch was given.
  std::vector<std::string> set_by_gmb;
  if (const Json* variables = nic_pinning.is_null() ? nullptr : nic_pinning.find("variables"))
    for (const auto& [name, decision] : *variables->as_object())
      if (decision.find("set")) set_by_gmb.push_back(name);
  std::map<std::string, std::string> picked;
  for (const std::string& entry : launch_environment() ? *launch_environment() : environment_entries()) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    if (std::find(set_by_gmb.begin(), set_by_gmb.end(), name) != set_by_gmb.end()) continue;
    for (const std::string& prefix : recorded_environment_prefixes()) {
      if (name.rfind(prefix, 0) == 0) {
        picked[name] = entry.substr(eq + 1);
        break;
      }
    }
  }
  return Json::object_of(picked);
}

namespace {

Json network_facts_of_gpu(const Context& ctx) {
  if (!ctx.platform->gpu || !ctx.platform->gpu_unavailable_reason.empty()) return network_facts("", nullptr, -1);
  const GpuInfo gpu = ctx.platform->gpu->current_device();
  return network_facts(gpu.pci_bus_id, ctx.platform->gpu.get(), gpu.index);
}

}  // namespace

Json rank_network_facts(const Context& ctx) {
  Json facts = network_facts_of_gpu(ctx);
  if (!ctx.nic_pinning.is_null()) facts.set("nic_pinning", ctx.nic_pinning);
  return facts;
}

Json build_context(const Context& ctx, const std::vector<std::string>& command_line, const LocalRank& local,
                   const Json& benchmark_options) {
  GpuInfo gpu;
  if (ctx.platform->gpu && ctx.platform->gpu_unavailable_reason.empty()) gpu = ctx.platform->gpu->current_device();
  // Each rank names the MPI library it loaded: on another host (or with another environment) it can differ.
  const MpiLibraryObject mpi_library = loaded_mpi_library();
  const std::vector<std::string> mine = {hostname(), std::to_string(local.rank), local.source, cpu_binding(),
                                         std::to_string(gpu.index), gpu.name, gpu.uuid, gpu.pci_bus_id,
                                         std::to_string(gpu.memory_bytes), std::to_string(this_process_numa_node()),
                                         std::to_string(gpu.pci_bus_id.empty() ? -1 : pci_numa_node(gpu.pci_bus_id)),
                                         mpi_library.loaded_realpath.empty() ? mpi_library.loaded
                                                                             : mpi_library.loaded_realpath,
                                         rank_network_facts(ctx).dump()};
  const auto all = gather_fields(ctx.comm, mine);
  if (ctx.rank != 0) return Json::object();

  Json ranks = Json::array();
  for (std::size_t r = 0; r < all.size(); ++r) {
    const auto& f = all[r];
    Json gpu_json = nullptr;
    if (std::stoi(f[4]) >= 0) {
      gpu_json = Json::object()
                     .set("index", std::stoi(f[4]))
                     .set("name", f[5])
                     .set("uuid", f[6])
                     .set("pci_bus_id", f[7])
                     .set("memory_bytes", static_cast<long long>(std::stoull(f[8])))
                     .set("numa_node", std::stoi(f[10]) >= 0 ? Json(std::stoi(f[10])) : Json(nullptr));
    }
    ranks.push(Json::object()
                   .set("rank", static_cast<int>(r))
                   .set("host", f[0])
                   .set("local_rank", std::max(0, std::stoi(f[1])))
                   .set("local_rank_source", f[2].empty() ? "none" : f[2])
                   .set("cpu_binding", f[3])
                   .set("numa_node", std::stoi(f[9]) >= 0 ? Json(std::stoi(f[9])) : Json(nullptr))
                   .set("mpi_library", f[11])
                   .set("gpu", gpu_json)
                   .set("network", Json::verbatim(f[12])));
  }

  std::string library_version;
  int major = 0, minor = 0;
  GMB_MPI_CHECK(mpi_library_version(library_version));
  GMB_MPI_CHECK(MPI_Get_version(&major, &minor));

  Json cuda = nullptr;
  if (ctx.platform->gpu) {
    std::string error;
    const int count = ctx.platform->gpu->device_count(&error);
    cuda = Json::object()
               .set("runtime_version", ctx.platform->gpu->runtime_version())
               .set("driver_version", ctx.platform->gpu->driver_version())
               .set("device_count", count);
    if (!error.empty()) cuda.set("error", error);
  }

  const NcclSupport& nccl_support = ctx.platform->nccl;
  Json nccl = Json::object().set("available", nccl_support.available());
  if (nccl_support.available()) nccl.set("version", nccl_support.version);
  else nccl.set("reason", nccl_support.unavailable_reason);

  const BuildInfo& build = build_info();
  return Json::object()
      .set("schema", "gmb.record/1")
      .set("type", "context")
      .set("run_id", ctx.run_id)
      .set("time_utc", utc_now())
      .set("tool", Json::object()
                       .set("name", "gmb-bench")
                       .set("version", build.version)
                       .set("git_revision", build.git_revision)
                       .set("build", Json::object()
                                         .set("cuda", build.cuda)
                                         .set("nccl", build.nccl)
                                         .set("compiler", build.compiler)
                                         .set("cuda_architectures", build.cuda_architectures)))
      .set("command_line", Json::array_of(command_line))
      .set("benchmark", ctx.benchmark)
      .set("world_size", ctx.size)
      .set("environment", relevant_environment(ctx.nic_pinning))
      .set("mpi", Json::object()
                      .set("library_version", library_version)
                      .set("standard_version", std::to_string(major) + "." + std::to_string(minor))
                      .set("library_object", mpi_library.to_json())
                      .set("features", mpi_features_json())
                      .set("gpu_awareness", Json::object()
                                                .set("verdict", to_string(ctx.awareness->verdict))
                                                .set("summary", ctx.awareness->summary)
                                                .set("evidence", ctx.awareness->evidence)))
      .set("cuda", cuda)
      .set("nccl", nccl)
      .set("ranks", ranks)
      .set("calibration", Json::object().set("kernel_launch", ctx.launch_cost.to_json()))
      .set("options", Json::object().set("common", ctx.settings->to_json()).set("benchmark", benchmark_options));
}

}  // namespace gmb
