// SPDX-License-Identifier: BSD-3-Clause
// An MPI program whose communication is known call by call (run_profile_test.py expects it): what libgmb-profile
// must count when preloaded into it. Needs 3 ranks.
#include <mpi.h>

#include <cstdio>
#include <vector>

#define CHECK(call)                                                          \
  do {                                                                       \
    if ((call) != MPI_SUCCESS) {                                             \
      std::fprintf(stderr, "profile_app: %s failed at line %d\n", #call, __LINE__); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                          \
    }                                                                        \
  } while (0)

int main(int argc, char** argv) {
  CHECK(MPI_Init(&argc, &argv));
  int rank = 0, size = 0;
  CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  if (size != 3) {
    if (rank == 0) std::fprintf(stderr, "profile_app: needs 3 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::vector<double> block(100, 1.0);  // 800 B
  std::vector<char> big(4096, 'x');
  // rank 0 -> 1: five blocking sends of 800 B (received from any source) and three non-blocking of 4 KiB
  if (rank == 0) {
    for (int i = 0; i < 5; ++i) CHECK(MPI_Send(block.data(), 100, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD));
    MPI_Request r[3];
    for (int i = 0; i < 3; ++i) CHECK(MPI_Isend(big.data(), 4096, MPI_CHAR, 1, 8 + i, MPI_COMM_WORLD, &r[i]));
    CHECK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
  } else if (rank == 1) {
    for (int i = 0; i < 5; ++i)
      CHECK(MPI_Recv(block.data(), 100, MPI_DOUBLE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    std::vector<char> in(3 * 4096);
    MPI_Request r[3];
    for (int i = 0; i < 3; ++i)
      CHECK(MPI_Irecv(in.data() + i * 4096, 4096, MPI_CHAR, 0, 8 + i, MPI_COMM_WORLD, &r[i]));
    for (int i = 0; i < 3; ++i) CHECK(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
  }
  // every rank: seven allreduces of one int, two broadcasts of 1000 B, a ring sendrecv of 16 B
  int value = rank, sum = 0;
  for (int i = 0; i < 7; ++i) CHECK(MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  std::vector<char> bc(1000);
  for (int i = 0; i < 2; ++i) CHECK(MPI_Bcast(bc.data(), 1000, MPI_CHAR, 0, MPI_COMM_WORLD));
  char out16[16] = {}, in16[16];
  CHECK(MPI_Sendrecv(out16, 16, MPI_CHAR, (rank + 1) % size, 3, in16, 16, MPI_CHAR, (rank + size - 1) % size, 3,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  // the even ranks (0, 2) in a communicator of their own: an allgather of 8 B each (S = 16 B); its rank 1 (world
  // rank 2) sends 24 B to its rank 0 (world rank 0)
  MPI_Comm halves;
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halves));
  if (rank % 2 == 0) {
    double mine = rank, all[2];
    CHECK(MPI_Allgather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, halves));
    char msg[24] = {};
    if (rank == 2) CHECK(MPI_Send(msg, 24, MPI_CHAR, 0, 5, halves));
    if (rank == 0) CHECK(MPI_Recv(msg, 24, MPI_CHAR, 1, 5, halves, MPI_STATUS_IGNORE));
  }
  CHECK(MPI_Comm_free(&halves));
  CHECK(MPI_Finalize());
  return 0;
}
