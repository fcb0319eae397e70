/* A small CUDA-aware program (not gmb's): pinned host -> device, device -> device, pageable host -> host,
 * managed -> managed, ping-pong of 64 KiB and 1 MiB, 100 round trips each. CUDA is initialised before MPI_Init. */
#include <mpi.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
int main(int argc, char **argv) {
  CK(cudaSetDevice(0)); CK(cudaFree(0));
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const size_t max = 1 << 20;
  void *pinned, *dev, *host = malloc(max), *man;
  CK(cudaMallocHost(&pinned, max)); CK(cudaMalloc(&dev, max)); CK(cudaMallocManaged(&man, max, cudaMemAttachGlobal));
  CK(cudaMemset(dev, 1, max));
  void *send[4] = {pinned, dev, host, man}, *recv[4] = {dev, dev, host, man};
  int sizes[2] = {65536, 1 << 20};
  double t0 = MPI_Wtime();
  for (int k = 0; k < 4; ++k)
    for (int s = 0; s < 2; ++s)
      for (int i = 0; i < 100; ++i) {
        if (rank == 0) {
          MPI_Send(send[k], sizes[s], MPI_BYTE, 1, k, MPI_COMM_WORLD);
          MPI_Recv(send[k], sizes[s], MPI_BYTE, 1, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(recv[k], sizes[s], MPI_BYTE, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(recv[k], sizes[s], MPI_BYTE, 0, k, MPI_COMM_WORLD);
        }
      }
  if (rank == 0) printf("kinds-app: %.3f s\n", MPI_Wtime() - t0);
  MPI_Finalize();
  return 0;
}
