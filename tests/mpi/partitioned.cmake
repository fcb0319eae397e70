# SPDX-License-Identifier: BSD-3-Clause
# MPI-4 partitioned point-to-point on host memory. Where the library has it (MPICH 4.0), every partition
# count validates; where it has not (Open MPI 4.1), every point is recorded unsupported with the reason.
if(GMB_HAVE_MPI_PARTITIONED)
  gmb_mpi_test(part_latency_host 2 0 STATUS ok STDOUT "(?s)partitions: 1.*partitions: 4.*partitions: 16"
               ARGS part_latency --sizes 1K:64K --partitions 1,4,16 --iters 20 --warmup 2 --validate --out OUT)
  gmb_mpi_test(part_bw_host 2 0 STATUS ok
               ARGS part_bw --sizes 4K:256K --partitions 1,8 --window 8 --iters 5 --warmup 1 --validate --out OUT)
  gmb_mpi_test(part_latency_pinned_letters 2 0 ARGS part_latency H H --sizes 64 --partitions 64 --iters 10 --out OUT)
  # A size that does not split into equal partitions is refused on its own; the others are measured.
  gmb_mpi_test(part_latency_uneven_size 2 3 POINTS "3=unsupported=3 bytes do not split into 4 equal" "8=ok"
               ARGS part_latency --sizes 3,8 --partitions 4 --iters 10 --out OUT)
else()
  gmb_mpi_test(part_latency_no_mpi4 2 3 STATUS unsupported STDERR "has no MPI_Psend_init.*MPI-4.0 partitioned communication"
               ARGS part_latency --sizes 1K --iters 5 --out OUT)
  gmb_mpi_test(part_bw_no_mpi4 2 3 STATUS unsupported STDERR "has no MPI_Psend_init"
               ARGS part_bw --sizes 1K --iters 5 --out OUT)
endif()
# The overlap benchmark runs a producer kernel: a host-only engine refuses it with the reason.
if(NOT GMB_WITH_CUDA)
  gmb_mpi_test(part_overlap_no_gpu 2 3 STATUS unsupported STDERR "unsupported: "
               ARGS part_overlap --sizes 64K --iters 5 --out OUT)
endif()
gmb_mpi_test(part_bad_partitions 2 2 STDERR "partition count" ARGS part_latency --partitions 0 --out OUT)
gmb_mpi_test(part_bad_ready 2 2 STDERR "ready mode.*after-kernel, per-block, both" ARGS part_overlap --ready later --out OUT)
gmb_mpi_test(part_bad_placement 2 2 STDERR "managed placements" ARGS part_latency --send managed:device --out OUT)
gmb_mpi_test(part_bad_rank_count 3 2 STDERR "part_latency needs exactly 2 ranks" ARGS part_latency --out OUT)
