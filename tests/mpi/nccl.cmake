# SPDX-License-Identifier: BSD-3-Clause
# The NCCL transport on a machine without a GPU: every request is a clean refusal (status
# unsupported with the reason, exit 3), and bad combinations are exit 2. The NCCL calls themselves
# need GPUs: run `gmb-bench ... --transport nccl` on a GPU machine (docs/nccl.md).
gmb_mpi_test(nccl_bw_unsupported 2 3 STATUS unsupported STDERR "unsupported: (memory kind 'device' is not available|the NCCL transport is not available)" ARGS bw --transport nccl --send device --recv device --sizes 1K --out OUT)
gmb_mpi_test(nccl_latency_host_refused 2 3 STATUS unsupported STDERR "unsupported: the NCCL transport (is not available|moves device memory only)" ARGS latency --transport nccl --sizes 8 --out OUT)
gmb_mpi_test(nccl_coll_unsupported 3 3 STATUS unsupported STDERR "unsupported: (memory kind 'device' is not available|the NCCL transport is not available)" ARGS coll allreduce,alltoall --transport nccl --mem device --sizes 1K --out OUT)
gmb_mpi_test(nccl_barrier_unsupported 2 3 STATUS unsupported STDERR "unsupported: barrier under the NCCL transport: NCCL has no barrier" ARGS coll barrier --transport nccl --out OUT)
gmb_mpi_test(nccl_reduce_scatter_unsupported 2 3 STATUS unsupported STDERR "NCCL has no reduce-scatter with unequal counts" ARGS coll reduce_scatter --transport nccl --mem device --sizes 1K --out OUT)
gmb_mpi_test(nccl_in_place_alltoall_unsupported 2 3 STATUS unsupported STDERR "in-place with the NCCL transport is supported for reduce, allreduce and allgather only" ARGS coll alltoall --in-place --transport nccl --mem device --sizes 1K --out OUT)
gmb_mpi_test(bad_transport 2 2 STDERR "unknown transport 'ucx' \\(accepted: mpi, nccl\\)" ARGS bw --transport ucx --out OUT)
gmb_mpi_test(bad_transport_coll 2 2 STDERR "unknown transport 'shm'" ARGS coll allreduce --transport shm --out OUT)
gmb_mpi_test(nccl_with_strategy 2 2 STDERR "--strategy pipelined applies to the MPI transport" ARGS bw --transport nccl --strategy pipelined --out OUT)
gmb_mpi_test(nccl_not_for_nbc 2 2 STDERR "unknown option '--transport'" ARGS nbc allreduce --transport nccl --out OUT)
