/* A minimal hand-written MPI ping-pong and windowed bandwidth test: the yardstick that
 * bench/overhead.py compares gmb-bench against. Deliberately plain: one timed loop per size.
 *   reference latency MIN MAX ITERS WARMUP          -> "bytes one_way_latency_us"
 *   reference bw      MIN MAX ITERS WARMUP WINDOW   -> "bytes GB/s"                       */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 6) {
    if (rank == 0) fprintf(stderr, "usage: reference latency|bw MIN MAX ITERS WARMUP [WINDOW]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int bw = strcmp(argv[1], "bw") == 0;
  const long min = atol(argv[2]), max = atol(argv[3]);
  const int iters = atoi(argv[4]), warmup = atoi(argv[5]), window = argc > 6 ? atoi(argv[6]) : 64;
  char* sbuf = malloc(max);
  char* rbuf = malloc(max);
  memset(sbuf, 'a', max);
  MPI_Request* req = malloc(sizeof(MPI_Request) * window);
  MPI_Status* statuses = malloc(sizeof(MPI_Status) * window);
  int ack = 0;
  for (long size = min; size <= max; size *= 2) {
    double t0 = 0;
    for (int i = 0; i < iters + warmup; ++i) {
      if (i == warmup) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
      }
      if (!bw) {
        if (rank == 0) {
          MPI_Send(sbuf, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
          MPI_Recv(rbuf, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(rbuf, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(sbuf, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
      } else if (rank == 0) {
        for (int w = 0; w < window; ++w) MPI_Isend(sbuf, size, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &req[w]);
        MPI_Waitall(window, req, statuses);
        MPI_Recv(&ack, 1, MPI_INT, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        for (int w = 0; w < window; ++w) MPI_Irecv(rbuf, size, MPI_BYTE, 0, 100, MPI_COMM_WORLD, &req[w]);
        MPI_Waitall(window, req, statuses);
        MPI_Send(&ack, 1, MPI_INT, 0, 101, MPI_COMM_WORLD);
      }
    }
    const double t = MPI_Wtime() - t0;
    if (rank == 0) {
      if (bw) printf("%ld %.6f\n", size, (double)size * window * iters / t / 1e9);
      else printf("%ld %.6f\n", size, t * 1e6 / iters / 2);
      fflush(stdout);
    }
  }
  free(statuses);
  free(req);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
