// SPDX-License-Identifier: BSD-3-Clause
// MPI-4 partitioned point-to-point behind one type, so that benchmarks need no #if: a PartitionedRequest
// is a persistent MPI_Psend_init / MPI_Precv_init request over `partitions` equal parts of a buffer. Where
// the engine was built without partitioned communication, or the library refuses the initialisation (an
// error code, made to return rather than abort), creating one throws Unsupported with the reason.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gmb {

class PartitionedRequest {
 public:
  // MPI_Psend_init of `bytes` from `buffer` in `partitions` parts of bytes / partitions MPI_BYTEs each.
  static PartitionedRequest send(const void* buffer, std::size_t bytes, int partitions, int peer, int tag, MPI_Comm comm);
  // MPI_Precv_init into `buffer`, the same split.
  static PartitionedRequest recv(void* buffer, std::size_t bytes, int partitions, int peer, int tag, MPI_Comm comm);

  PartitionedRequest(PartitionedRequest&& other) noexcept;
  PartitionedRequest& operator=(PartitionedRequest&& other) noexcept;
  PartitionedRequest(const PartitionedRequest&) = delete;
  PartitionedRequest& operator=(const PartitionedRequest&) = delete;
  ~PartitionedRequest();  // MPI_Request_free

  void start();                // MPI_Start
  void ready(int partition);   // MPI_Pready of one partition
  void ready_all();            // MPI_Pready of each partition in order, one call each
  void wait();                 // MPI_Wait
  int partitions() const { return partitions_; }
  MPI_Request* handle() { return &request_; }

 private:
  PartitionedRequest(MPI_Request request, int partitions) : request_(request), partitions_(partitions) {}
  MPI_Request request_ = MPI_REQUEST_NULL;
  int partitions_ = 0;
};

// MPI_Start, then MPI_Wait, of each request in order (as MPI_Startall / MPI_Waitall would).
void start_all(std::vector<PartitionedRequest>& requests);
void wait_all(std::vector<PartitionedRequest>& requests);

// Why `bytes` cannot be split into `partitions` equal partitions of MPI_BYTEs with int counts, or "".
std::string partition_split_problem(std::size_t bytes, int partitions);

// What a rank's `requests` partitioned requests of `partitions` partitions each hold in the MPI library, counted as
// operations in flight (SizeNeeds::add_in_flight): each request and each of its partitions (a library may carry a
// partition as a request of its own, as Open MPI's part/persist does).
inline std::uint64_t partitioned_operations(int requests, int partitions) {
  return static_cast<std::uint64_t>(requests) * (1 + static_cast<std::uint64_t>(partitions));
}

}  // namespace gmb
