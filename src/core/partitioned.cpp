// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/partitioned.hpp"

#include <climits>
#include <utility>

#include "gmb/error.hpp"
#include "gmb/mpi_features.hpp"

namespace gmb {

#if GMB_HAVE_MPI_PARTITIONED
namespace {

int partition_count(std::size_t bytes, int partitions) {
  if (std::string problem = partition_split_problem(bytes, partitions); !problem.empty()) throw Unsupported(problem);
  return static_cast<int>(bytes / static_cast<std::size_t>(partitions));
}

// The request `init(count per partition, &request)` makes (MPI_Psend_init or MPI_Precv_init, named `call`), with
// errors returned: a size that does not split, or the library's refusal, throws Unsupported with the reason.
template <typename Init>
MPI_Request initialised(const char* call, std::size_t bytes, int partitions, MPI_Comm comm, Init&& init) {
  const int count = partition_count(bytes, partitions);
  MPI_Request request = MPI_REQUEST_NULL;
  const std::string refusal = mpi_refusal(comm, call, [&] { return init(count, &request); });
  if (!refusal.empty()) throw Unsupported(refusal);
  return request;
}

}  // namespace
#endif

std::string partition_split_problem(std::size_t bytes, int partitions) {
  if (partitions < 1) return "the partition count must be at least 1";
  if (bytes == 0 || bytes % static_cast<std::size_t>(partitions) != 0)
    return std::to_string(bytes) + " bytes do not split into " + std::to_string(partitions) +
           " equal, non-empty partitions (give sizes that are multiples of the partition count)";
  if (bytes / static_cast<std::size_t>(partitions) > static_cast<std::size_t>(INT_MAX))
    return "a partition of " + std::to_string(bytes / static_cast<std::size_t>(partitions)) +
           " bytes is beyond MPI's int count (use more partitions)";
  return "";
}

PartitionedRequest PartitionedRequest::send(const void* buffer, std::size_t bytes, int partitions, int peer, int tag,
                                            MPI_Comm comm) {
#if GMB_HAVE_MPI_PARTITIONED
  return PartitionedRequest(initialised("MPI_Psend_init", bytes, partitions, comm,
                                        [&](int count, MPI_Request* request) {
                                          return MPI_Psend_init(buffer, partitions, count, MPI_BYTE, peer, tag, comm,
                                                                MPI_INFO_NULL, request);
                                        }),
                            partitions);
#else
  (void)buffer, (void)bytes, (void)partitions, (void)peer, (void)tag, (void)comm;
  throw Unsupported(mpi_feature_problem(MpiFeature::partitioned));
#endif
}

PartitionedRequest PartitionedRequest::recv(void* buffer, std::size_t bytes, int partitions, int peer, int tag,
                                            MPI_Comm comm) {
#if GMB_HAVE_MPI_PARTITIONED
  return PartitionedRequest(initialised("MPI_Precv_init", bytes, partitions, comm,
                                        [&](int count, MPI_Request* request) {
                                          return MPI_Precv_init(buffer, partitions, count, MPI_BYTE, peer, tag, comm,
                                                                MPI_INFO_NULL, request);
                                        }),
                            partitions);
#else
  (void)buffer, (void)bytes, (void)partitions, (void)peer, (void)tag, (void)comm;
  throw Unsupported(mpi_feature_problem(MpiFeature::partitioned));
#endif
}

PartitionedRequest::PartitionedRequest(PartitionedRequest&& other) noexcept
    : request_(std::exchange(other.request_, MPI_REQUEST_NULL)), partitions_(other.partitions_) {}

PartitionedRequest& PartitionedRequest::operator=(PartitionedRequest&& other) noexcept {
  std::swap(request_, other.request_);
  std::swap(partitions_, other.partitions_);
  return *this;
}

PartitionedRequest::~PartitionedRequest() {
  if (request_ != MPI_REQUEST_NULL) MPI_Request_free(&request_);
}

void PartitionedRequest::start() { GMB_MPI_CHECK(MPI_Start(&request_)); }

void PartitionedRequest::ready(int partition) {
#if GMB_HAVE_MPI_PARTITIONED
  GMB_MPI_CHECK(MPI_Pready(partition, request_));
#else
  (void)partition;
#endif
}

void PartitionedRequest::ready_all() {
  for (int p = 0; p < partitions_; ++p) ready(p);
}

void PartitionedRequest::wait() { GMB_MPI_CHECK(MPI_Wait(&request_, MPI_STATUS_IGNORE)); }

void start_all(std::vector<PartitionedRequest>& requests) {
  for (auto& r : requests) r.start();
}

void wait_all(std::vector<PartitionedRequest>& requests) {
  for (auto& r : requests) r.wait();
}

}  // namespace gmb
