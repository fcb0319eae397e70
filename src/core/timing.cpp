// SPDX-License-Identifier: BSD-3-Clause
#include "gmb/timing.hpp"

namespace gmb {

std::vector<double> slowest_rank(const std::vector<double>& mine, MPI_Comm comm, int root) {
  int rank = 0;
  GMB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::vector<double> slowest(rank == root ? mine.size() : 0);
  GMB_MPI_CHECK(MPI_Reduce(mine.data(), slowest.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, root, comm));
  return slowest;
}

std::vector<double> slowest_rank_everywhere(const std::vector<double>& mine, MPI_Comm comm) {
  std::vector<double> slowest(mine.size());
  GMB_MPI_CHECK(MPI_Allreduce(mine.data(), slowest.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, comm));
  return slowest;
}

std::vector<std::vector<double>> every_rank(const std::vector<double>& mine, MPI_Comm comm, int root) {
  int rank = 0, size = 1;
  GMB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  GMB_MPI_CHECK(MPI_Comm_size(comm, &size));
  const std::size_t n = mine.size();
  std::vector<double> all(rank == root ? n * static_cast<std::size_t>(size) : 0);
  GMB_MPI_CHECK(MPI_Gather(mine.data(), static_cast<int>(n), MPI_DOUBLE, all.data(), static_cast<int>(n), MPI_DOUBLE, root, comm));
  std::vector<std::vector<double>> by_rank;
  if (rank != root) return by_rank;
  for (int r = 0; r < size; ++r) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(r));
    by_rank.emplace_back(first, first + static_cast<std::ptrdiff_t>(n));
  }
  return by_rank;
}

std::string agree_on_reason(MPI_Comm comm, const std::string& local_reason) {
  int rank = 0, size = 1;
  GMB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  GMB_MPI_CHECK(MPI_Comm_size(comm, &size));
  int mine = local_reason.empty() ? size : rank, first = size;
  GMB_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) return "";
  int length = rank == first ? static_cast<int>(local_reason.size()) : 0;
  GMB_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, first, comm));
  std::string reason(static_cast<std::size_t>(length), '\0');
  if (rank == first) reason = local_reason;
  GMB_MPI_CHECK(MPI_Bcast(reason.data(), length, MPI_CHAR, first, comm));
  return reason;
}

std::string agreed_refusal(MPI_Comm comm, const std::function<void()>& attempt) {
  std::string problem;
  try {
    attempt();
  } catch (const Unsupported& e) {
    problem = e.what();
  }
  return agree_on_reason(comm, problem);
}

}  // namespace gmb
