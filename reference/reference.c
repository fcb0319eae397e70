/* The yardstick gmb-bench is checked against (reference/crosscheck.py): a plain MPI program, written
 * independently of the engine and deliberately naive. Buffers are allocated once, at the largest size,
 * and filled once; every iteration is MPI_Barrier, then MPI_Wtime around the operation; per iteration the
 * slowest rank's time is kept and the median and mean over iterations are printed. With --loop, the
 * iterations run back to back instead, one MPI_Wtime around all of them after one barrier (as nccl-tests
 * times), and both figures are the slowest rank's total / ITERS. After the timed iterations one more
 * operation is checked (the received bytes equal what was sent).
 *
 *   gmb-reference [--loop] BENCH SEND RECV ITERS WARMUP WINDOW SIZE [SIZE ...]
 *     BENCH   latency (ping-pong, one-way = round trip / 2), bw (WINDOW MPI_Isend / MPI_Irecv, then a
 *             4-byte ack), bcast (root 0), allreduce (MPI_FLOAT, MPI_SUM), alltoall, allgather,
 *             reduce_scatter (MPI_Reduce_scatter of MPI_FLOAT, MPI_SUM, every rank's count the same, as
 *             OSU's osu_reduce_scatter calls it)
 *     SEND    memory of rank 0 (pt2pt) or of every rank (collectives): host, pinned, device
 *     RECV    memory of rank 1 (pt2pt; ignored by collectives)
 *     SIZE    bytes: the message (latency, bw), the vector (bcast, allreduce, reduce_scatter: each rank
 *             receives SIZE / ranks of the sum), the block sent to each peer (alltoall) or by each rank
 *             (allgather): OSU's conventions; their receive buffers hold ranks * SIZE bytes
 *   prints per size: "SIZE median_us mean_us checked" (latency: one-way time; bw: time per window)
 * pinned and device need a build with CUDA (GMB_REFERENCE_CUDA). Exit 2 on bad arguments. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef GMB_REFERENCE_CUDA
#include <cuda_runtime.h>
#endif

static int rank, ranks;

static void die(const char* what) {
  fprintf(stderr, "gmb-reference: rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

#ifdef GMB_REFERENCE_CUDA
static void cuda_check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    fprintf(stderr, "gmb-reference: rank %d: %s: %s\n", rank, what, cudaGetErrorString(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}
#endif

/* host, pinned or device memory of `bytes`, filled with `value` */
static void* allocate(const char* kind, size_t bytes, int value) {
  void* p = NULL;
  if (strcmp(kind, "host") == 0) {
    p = malloc(bytes);
    if (!p) die("out of host memory");
    memset(p, value, bytes);
    return p;
  }
#ifdef GMB_REFERENCE_CUDA
  if (strcmp(kind, "pinned") == 0) {
    cuda_check(cudaMallocHost(&p, bytes), "cudaMallocHost");
    memset(p, value, bytes);
    return p;
  }
  if (strcmp(kind, "device") == 0) {
    cuda_check(cudaMalloc(&p, bytes), "cudaMalloc");
    cuda_check(cudaMemset(p, value, bytes), "cudaMemset");
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return p;
  }
#endif
  die("unknown or unavailable memory kind (host; pinned and device need a CUDA build)");
  return NULL;
}

static void release(const char* kind, void* p) {
#ifdef GMB_REFERENCE_CUDA
  if (strcmp(kind, "pinned") == 0) { cudaFreeHost(p); return; }
  if (strcmp(kind, "device") == 0) { cudaFree(p); return; }
#endif
  (void)kind;
  free(p);
}

/* a host copy of `bytes` of `p` (the caller frees it) */
static unsigned char* to_host(const char* kind, const void* p, size_t bytes) {
  unsigned char* h = malloc(bytes ? bytes : 1);
  if (!h) die("out of host memory");
#ifdef GMB_REFERENCE_CUDA
  if (strcmp(kind, "device") == 0) {
    cuda_check(cudaMemcpy(h, p, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return h;
  }
#endif
  (void)kind;
  memcpy(h, p, bytes);
  return h;
}

static void set_bytes(const char* kind, void* p, int value, size_t bytes) {
#ifdef GMB_REFERENCE_CUDA
  if (strcmp(kind, "device") == 0) {
    cuda_check(cudaMemset(p, value, bytes), "cudaMemset");
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return;
  }
#endif
  (void)kind;
  memset(p, value, bytes);
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Picks the GPU from the launcher's local rank, before MPI_Init, as gmb-bench does. */
static void select_gpu(void) {
#ifdef GMB_REFERENCE_CUDA
  const char* names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                         "PMI_LOCAL_RANK"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k) {
    const char* v = getenv(names[k]);
    int count = 0;
    if (v && cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
      cudaSetDevice(atoi(v) % count);
      return;
    }
  }
#endif
}

int main(int argc, char** argv) {
  select_gpu();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int loop = argc > 1 && strcmp(argv[1], "--loop") == 0;
  if (loop) {
    --argc;
    ++argv;
  }
  if (argc < 8)
    die("usage: gmb-reference [--loop] latency|bw|bcast|allreduce|alltoall|allgather|reduce_scatter SEND RECV ITERS "
        "WARMUP WINDOW SIZE...");
  const char* bench = argv[1];
  const int pt2pt = strcmp(bench, "latency") == 0 || strcmp(bench, "bw") == 0;
  const int summed = strcmp(bench, "allreduce") == 0 || strcmp(bench, "reduce_scatter") == 0;
  const int per_rank_blocks = strcmp(bench, "alltoall") == 0 || strcmp(bench, "allgather") == 0;
  if (!pt2pt && !summed && !per_rank_blocks && strcmp(bench, "bcast")) die("unknown benchmark");
  if (pt2pt && ranks != 2) die("latency and bw need exactly 2 ranks");
  const char* kind = pt2pt ? argv[rank == 0 ? 2 : 3] : argv[2];
  const int iters = atoi(argv[4]), warmup = atoi(argv[5]), window = atoi(argv[6]);
  if (iters < 1 || warmup < 0 || window < 1) die("ITERS and WINDOW must be positive, WARMUP not negative");
  size_t largest = 0;
  for (int a = 7; a < argc; ++a) {
    const long long v = atoll(argv[a]);
    if (v < 0 || (strcmp(bench, "allreduce") == 0 && v % 4)) die("a SIZE is negative, or not a multiple of 4 for allreduce");
    if (strcmp(bench, "reduce_scatter") == 0 && (v == 0 || v % (4LL * ranks)))
      die("a SIZE of reduce_scatter is not a non-zero multiple of 4 bytes times the ranks");
    if ((size_t)v > largest) largest = (size_t)v;
  }
  const size_t span = per_rank_blocks ? largest * (size_t)ranks : largest;
  unsigned char* sbuf = allocate(kind, span ? span : 1, 1 + rank);
  unsigned char* rbuf = allocate(kind, span ? span : 1, 0);
  int* counts = malloc(sizeof(int) * (size_t)ranks); /* reduce_scatter: every rank's count */
  MPI_Request* req = malloc(sizeof(MPI_Request) * (size_t)window);
  double* mine = malloc(sizeof(double) * (size_t)iters);
  double* slowest = malloc(sizeof(double) * (size_t)iters);
  if (!counts || !req || !mine || !slowest) die("out of host memory");
  const int peer = 1 - rank;
  int ack = 0;

  for (int a = 7; a < argc; ++a) {
    const int size = atoi(argv[a]);
    for (int r = 0; r < ranks; ++r) counts[r] = size / 4 / ranks;
    double loop_start = 0;
    for (int i = -warmup; i <= iters; ++i) {
      const int checked = i == iters; /* one untimed operation after the timed ones, checked below */
      if (checked && loop)
        for (int k = 0; k < iters; ++k) mine[k] = (MPI_Wtime() - loop_start) / iters;
      if (checked) set_bytes(kind, rbuf, 0, span ? span : 1);
      if (!loop || i == 0 || checked) MPI_Barrier(MPI_COMM_WORLD);
      if (loop && i == 0) loop_start = MPI_Wtime();
      const double t0 = MPI_Wtime();
      if (strcmp(bench, "latency") == 0) {
        if (rank == 0) {
          MPI_Send(sbuf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
          MPI_Recv(rbuf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(rbuf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(sbuf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
      } else if (strcmp(bench, "bw") == 0) {
        if (rank == 0) {
          for (int w = 0; w < window; ++w) MPI_Isend(sbuf, size, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &req[w]);
          MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
          MPI_Recv(&ack, 1, MPI_INT, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          for (int w = 0; w < window; ++w) MPI_Irecv(rbuf, size, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &req[w]);
          MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
          MPI_Send(&ack, 1, MPI_INT, peer, 101, MPI_COMM_WORLD);
        }
      } else if (strcmp(bench, "bcast") == 0) {
        MPI_Bcast(rank == 0 ? sbuf : rbuf, size, MPI_BYTE, 0, MPI_COMM_WORLD);
      } else if (strcmp(bench, "allreduce") == 0) {
        MPI_Allreduce(sbuf, rbuf, size / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      } else if (strcmp(bench, "reduce_scatter") == 0) {
        MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      } else if (strcmp(bench, "allgather") == 0) {
        MPI_Allgather(sbuf, size, MPI_BYTE, rbuf, size, MPI_BYTE, MPI_COMM_WORLD);
      } else {
        MPI_Alltoall(sbuf, size, MPI_BYTE, rbuf, size, MPI_BYTE, MPI_COMM_WORLD);
      }
      const double t = MPI_Wtime() - t0;
      if (!loop && i >= 0 && i < iters) mine[i] = t;
    }
    /* What the checked operation left: latency and bw deliver the peer's bytes (1 + peer), bcast the root's
     * (1) on every other rank, alltoall and allgather block k from rank k (1 + k), allreduce (the whole
     * vector) and reduce_scatter (this rank's SIZE / ranks) the float sum of every rank's bytes read as
     * floats; the sender of bw and the root of bcast receive nothing. */
    int bad = 0;
    const size_t received = per_rank_blocks ? (size_t)size * ranks
                            : strcmp(bench, "reduce_scatter") == 0 ? (size_t)size / ranks : (size_t)size;
    const int receives = !(rank == 0 && (strcmp(bench, "bcast") == 0 || strcmp(bench, "bw") == 0));
    if (receives && received > 0) {
      unsigned char* got = to_host(kind, rbuf, received);
      if (summed) {
        float want = 0;
        for (int r = 0; r < ranks; ++r) {
          float one;
          unsigned char pattern[4];
          memset(pattern, 1 + r, 4);
          memcpy(&one, pattern, 4);
          want += one;
        }
        for (size_t k = 0; k < received / 4 && !bad; ++k) {  /* the library may sum in another order */
          float v;
          memcpy(&v, got + 4 * k, 4);
          bad = !(v >= want * 0.9999f && v <= want * 1.0001f);
        }
      } else {
        for (size_t k = 0; k < received && !bad; ++k) {
          const int from = per_rank_blocks ? (int)(k / (size_t)size) : strcmp(bench, "bcast") == 0 ? 0 : peer;
          bad = got[k] != (unsigned char)(1 + from);
        }
      }
      free(got);
    }
    int any_bad = 0;
    MPI_Reduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, slowest, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double scale = strcmp(bench, "latency") == 0 ? 0.5e6 : 1e6;
      double sum = 0;
      for (int i = 0; i < iters; ++i) sum += slowest[i];
      qsort(slowest, (size_t)iters, sizeof(double), compare_doubles);
      const double median = iters % 2 ? slowest[iters / 2] : 0.5 * (slowest[iters / 2 - 1] + slowest[iters / 2]);
      printf("%d %.4f %.4f %s\n", size, median * scale, sum / iters * scale, any_bad ? "wrong-data" : "ok");
      fflush(stdout);
    }
  }
  free(slowest);
  free(mine);
  free(req);
  free(counts);
  release(kind, sbuf);
  release(kind, rbuf);
  MPI_Finalize();
  return 0;
}
