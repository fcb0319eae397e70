# SPDX-License-Identifier: BSD-3-Clause
# Collectives (coll) and non-blocking collectives with overlap (nbc) on host memory: every operation
# validated on 2, 3 and 4 ranks (odd counts matter for the v-variants and reduce_scatter), records
# checked against the schema; then in-place, roots, data types, and bad input.
# Few iterations: MPICH busy-polls, so 3 or 4 ranks on 2 cores make every operation slow. The nbc
# tests run fewer sizes (each overlapped sample also computes for about the pure time).
# The sizes are whole elements per rank for every operation and data type on 2, 3 and 4 ranks (multiples of
# 96 B = 3 x 32 B); the element counts of the v-variants' unequal split are still uneven (24, 288, 12288 floats).
set(GMB_COLL_QUICK --sizes 96,1152,48K --iters 2 --warmup 1 --validate --out OUT)
set(GMB_NBC_QUICK --sizes 96,1152,48K --iters 2 --warmup 0 --validate --out OUT)
# "all" runs every operation of the table in one launch (one launch per rank count keeps the set
# fast on 2 cores); the records say which operation each result is.
foreach(np 2 3 4)
  gmb_mpi_test(coll_all_${np} ${np} 0 STATUS ok ARGS coll all ${GMB_COLL_QUICK})
  gmb_mpi_test(nbc_all_${np} ${np} 0 STATUS ok ARGS nbc all ${GMB_NBC_QUICK})
endforeach()
gmb_mpi_test(coll_one_op 3 0 STATUS ok ARGS coll alltoallv ${GMB_COLL_QUICK})
gmb_mpi_test(nbc_op_list 3 0 STATUS ok ARGS nbc bcast,gatherv,barrier ${GMB_NBC_QUICK})

# In place (every operation that allows it), a root other than 0, other data types.
gmb_mpi_test(coll_in_place_reduce_3 3 0 STATUS ok ARGS coll reduce --in-place --root 0 ${GMB_COLL_QUICK})
# MPICH 4.0 crashes in MPI_Reduce with MPI_IN_PLACE at a root other than 0 from 4 KiB on (it copies
# from the MPI_IN_PLACE address; reproduced with a 10-line C program): gmb refuses those sizes with the
# reason (gmb/known_issues.hpp) and still runs the smaller ones; other libraries run them all.
if(MPI_C_LIBRARY_VERSION_STRING MATCHES "MPICH Version:[ \t]*4\\.0\\.")
  gmb_mpi_test(coll_in_place_reduce_root_1 2 3 STDOUT "(?s)1000 B .*ok \\(validation passed\\).*64 KiB .*unsupported: MPICH 4\\.0\\.[0-9]+ crashes in MPI_Reduce with MPI_IN_PLACE"
               ARGS coll reduce --in-place --root 1 --sizes 1000,64K --iters 2 --warmup 1 --validate)
else()
  gmb_mpi_test(coll_in_place_reduce_root_1 2 0 STATUS ok ARGS coll reduce --in-place --root 1 --sizes 1000,64K --iters 2 --warmup 1 --validate --out OUT)
endif()
gmb_mpi_test(coll_in_place_3 3 0 STATUS ok ARGS coll allreduce,gather,gatherv,allgather,allgatherv,scatter,scatterv,alltoall,alltoallv,reduce_scatter,reduce_scatter_block --in-place --root 2 ${GMB_COLL_QUICK})
gmb_mpi_test(coll_in_place_4 4 0 STATUS ok ARGS coll allreduce,gather,gatherv,allgather,allgatherv,scatter,scatterv,alltoall,alltoallv,reduce_scatter,reduce_scatter_block --in-place --root 1 --dtype double ${GMB_COLL_QUICK})
gmb_mpi_test(nbc_in_place_3 3 0 STATUS ok ARGS nbc reduce,allreduce,gather,gatherv,allgather,allgatherv,scatter,scatterv,alltoall,alltoallv,reduce_scatter,reduce_scatter_block --in-place --dtype int ${GMB_NBC_QUICK})
gmb_mpi_test(coll_allreduce_double_3 3 0 STATUS ok ARGS coll allreduce --dtype double ${GMB_COLL_QUICK})
gmb_mpi_test(coll_reduce_int_root_1 3 0 STATUS ok ARGS coll reduce --dtype int --root 1 ${GMB_COLL_QUICK})
gmb_mpi_test(coll_scatterv_root_3 4 0 STATUS ok ARGS coll scatterv --root 3 --mem-root host --mem-others host ${GMB_COLL_QUICK})
gmb_mpi_test(coll_allreduce_single_size 2 0 STATUS ok ARGS coll allreduce --sizes 1M --iters-large 2 --warmup-large 1 --validate --out OUT)
gmb_mpi_test(coll_json_stdout 2 0 STDERR "^$" ARGS coll alltoall --sizes 8,1K --iters 3 --format json)
# Overlap options on the CPU: MPI_Test calls through the compute, the compute sweep.
gmb_mpi_test(nbc_allreduce_tests_sweep 2 0 STATUS ok ARGS nbc allreduce --tests 8 --compute-sweep --sizes 1K,64K --iters 2 --warmup 1 --validate --out OUT)
# --rotate-offsets (nccl-tests' protocol): every call at the next offset of buffers sized for the largest size;
# validation still checks the first offset's data.
gmb_mpi_test(coll_rotate_offsets_3 3 0 STATUS ok ARGS coll allreduce,bcast,alltoall,gatherv --rotate-offsets --sizes 1536,96K --iters 4 --warmup 1 --validate --out OUT)
gmb_mpi_test(coll_rotate_offsets_persistent 2 2 STDERR "--rotate-offsets with --persistent" ARGS coll allreduce --rotate-offsets --persistent --sizes 8)

# Bad input: exit 2 with a clear message.
gmb_mpi_test(coll_bad_op 2 2 STDERR "unknown collective 'allreduce_v'; did you mean 'allreduce'\\? \\(accepted: bcast, reduce" ARGS coll allreduce_v --out OUT)
gmb_mpi_test(coll_missing_op 2 2 STDERR "expected one operation: gmb-bench coll OP" ARGS coll --out OUT)
# OMB's names of the non-blocking calls: nbc takes them, coll points to nbc.
gmb_mpi_test(nbc_omb_op_name 2 0 STATUS ok ARGS nbc ialltoall --sizes 8 --iters 2 --warmup 1 --out OUT)
gmb_mpi_test(coll_omb_nonblocking_name 2 2 STDERR "unknown collective 'ialltoall': coll measures the blocking MPI_Alltoall; the non-blocking MPI_Ialltoall is gmb-bench nbc alltoall" ARGS coll ialltoall --out OUT)
gmb_mpi_test(coll_bad_root 3 2 STDERR "--root 3 is not a rank of this launch \\(ranks 0..2\\)" ARGS coll bcast --root 3 --out OUT)
gmb_mpi_test(coll_in_place_bcast 2 2 STDERR "--in-place is not allowed for bcast" ARGS coll bcast --in-place --out OUT)
gmb_mpi_test(nbc_in_place_barrier 2 2 STDERR "--in-place is not allowed for barrier" ARGS nbc barrier --in-place --out OUT)
gmb_mpi_test(coll_dtype_not_reduction 2 2 STDERR "--dtype applies to reductions only" ARGS coll alltoall --dtype int --out OUT)
gmb_mpi_test(coll_bad_dtype 2 2 STDERR "bad data type 'half'|'half'" ARGS coll allreduce --dtype half --out OUT)
gmb_mpi_test(coll_bad_kind 2 2 STDERR "unknown memory kind 'gpu'" ARGS coll allreduce --mem-others gpu --out OUT)
gmb_mpi_test(coll_in_place_all 2 2 STDERR "--in-place is not allowed for bcast" ARGS coll all --in-place --out OUT)
gmb_mpi_test(coll_bad_op_in_list 2 2 STDERR "unknown collective 'alltoal'; did you mean 'alltoall'\\?" ARGS coll allreduce,alltoal --out OUT)
gmb_mpi_test(nbc_bad_compute 2 2 STDERR "unknown compute 'fpga'" ARGS nbc allreduce --compute fpga --out OUT)
# What this build or machine lacks: status unsupported, exit 3 (GPU compute and copies in a host-only
# build; device memory with a library that is not CUDA-aware).
if(NOT GMB_WITH_CUDA)
  gmb_mpi_test(nbc_gpu_compute_unsupported 2 3 STATUS unsupported STDERR "unsupported: --compute gpu needs a GPU" ARGS nbc allreduce --compute gpu --sizes 1K --out OUT)
  gmb_mpi_test(nbc_both_compute_unsupported 2 3 STATUS unsupported STDERR "unsupported: --compute both needs a GPU" ARGS nbc barrier --compute both --out OUT)
  gmb_mpi_test(nbc_dummy_copies_unsupported 2 3 STATUS unsupported STDERR "unsupported: --dummy-copies needs a GPU" ARGS nbc bcast --dummy-copies --sizes 1K --out OUT)
endif()
gmb_mpi_test(coll_device_unsupported 2 3 STATUS unsupported STDERR "unsupported: (memory kind 'device' is not available|refusing to hand device memory)" ARGS coll allreduce --mem-root device --sizes 1K --out OUT)

# Validation outside timing: coll keeps its batching with --validate, nbc checks 2 extra operations per size.
# Sizes follow nccl-tests (the whole buffer); equal-block operations also state the block per peer.
gmb_mpi_test(coll_validate_keeps_batching 3 0 STDOUT "\"size_convention\":\"total\",\"requested_bytes\":\\[12288\\],\"bytes_per_peer\":4096,.*\"batch\":4,.*\"validated_iterations\":2"
             ARGS coll alltoall --sizes 12K --iters 20 --warmup 2 --batch 4 --validate --format json --out OUT)
gmb_mpi_test(nbc_validated_iterations 2 0 STATUS ok STDOUT "\"buffer_allocation\":\"once-per-launch\",\"validated_iterations\":2"
             ARGS nbc bcast ${GMB_NBC_QUICK} --format json)
gmb_mpi_test(coll_fresh_buffers 3 0 STATUS ok STDOUT "\"buffer_allocation\":\"fresh-per-size\""
             ARGS coll allgather,alltoallv --sizes 3:48K --iters 5 --warmup 1 --fresh-buffers --validate --format json --out OUT)

# Sizes that are not whole elements (of the data type; of the data type per rank where the operation splits S into
# equal blocks) are measured at the nearest whole size at or below them (the smallest where that is 0), as nccl-tests
# rounds its count: the record's bytes is the size measured, requested_bytes the sizes asked for that it stands for
# (several that round to one size are measured once). Only 0 B, no element at all, is refused.
gmb_mpi_test(coll_allreduce_nearest_whole_elements 2 0 STATUS ok
             STDOUT "(?s)\"bytes\":4,.*\"requested_bytes\":\\[1,3,4\\],.*\"bytes\":8,.*\"requested_bytes\":\\[9\\],"
             ARGS coll allreduce --sizes 1,3,4,9 --iters 2 --warmup 1 --validate --format json --out OUT)
gmb_mpi_test(coll_zero_elements 2 3
             POINTS "0=unsupported=^0 B gives bcast no elements \\(accepted for bcast: 1 B or more\\)$" "1=ok"
             ARGS coll bcast --sizes 0,1 --iters 2 --warmup 1 --validate --out OUT)
gmb_mpi_test(coll_alltoall_blocks_per_rank_3 3 0 STATUS ok
             STDOUT "(?s)\"bytes\":9,.*\"requested_bytes\":\\[10\\],\"bytes_per_peer\":3,.*\"bytes\":12,.*\"requested_bytes\":\\[12\\],\"bytes_per_peer\":4,"
             ARGS coll alltoall --sizes 10,12 --iters 2 --warmup 1 --validate --format json --out OUT)
gmb_mpi_test(coll_reduce_scatter_block_per_rank_4 4 0 STATUS ok
             STDOUT "(?s)# reduce_scatter_block on 4 ranks measures whole blocks \\(multiples of 16 B\\), at the nearest size: 8, 16, 20 B as 16 B"
             ARGS coll reduce_scatter_block --sizes 8,16,20 --iters 2 --warmup 1 --validate --out OUT)
# Unequal counts: every rank gets whole elements whatever the total, some none at small sizes (MPI allows
# counts of zero): 4 B is one float, all of it on the last rank; 6 B is measured as 4 B.
gmb_mpi_test(coll_unequal_counts_small_sizes_4 4 0 STATUS ok
             STDOUT "(?s)\"bytes\":4,.*\"requested_bytes\":\\[4,6\\],"
             ARGS coll reduce_scatter --sizes 4,6 --iters 2 --warmup 1 --validate --format json --out OUT)
gmb_mpi_test(nbc_nearest_whole_elements 2 0 STATUS ok STDOUT "(?s)\"bytes\":4,.*\"requested_bytes\":\\[2,4\\],"
             ARGS nbc allreduce --sizes 2,4 --iters 2 --warmup 1 --validate --format json --out OUT)
# 0 B is refused, and so is the persistent form's.
gmb_mpi_test(coll_persistent_zero_elements 2 3 STATUS unsupported
             STDOUT "(?s)0 B +- .*unsupported: 0 B gives allreduce no elements.*# persistent form: MPI_Allreduce_init.*0 B +- .*unsupported( \\(as above\\)|: the engine's MPI library)"
             ARGS coll allreduce --persistent --sizes 0 --iters 2 --warmup 1 --out OUT)
# Power-of-two sweeps on rank counts that are not powers of two: every size measured (at whole blocks) and validated,
# blocking and non-blocking, on 3 and 6 ranks (oversubscribed where the machine has fewer cores).
set(GMB_EQUAL_BLOCKS gather,scatter,allgather,alltoall,reduce_scatter,reduce_scatter_equal,reduce_scatter_block)
gmb_mpi_test(coll_pow2_sizes_3 3 0 STATUS ok ARGS coll ${GMB_EQUAL_BLOCKS} --sizes 1:64K --iters 2 --warmup 1 --validate --out OUT)
gmb_mpi_test(coll_pow2_sizes_6 6 0 STATUS ok ARGS coll ${GMB_EQUAL_BLOCKS} --sizes 1:64K --iters 2 --warmup 1 --validate --out OUT)
gmb_mpi_test(nbc_pow2_sizes_3 3 0 STATUS ok ARGS nbc ${GMB_EQUAL_BLOCKS} --sizes 1:64K --iters 2 --warmup 0 --validate --out OUT)
# Bus bandwidth of unequal counts: the busiest rank's share of S (parts in proportion to 1, 2 on 2 ranks: 2/3, not
# (n-1)/n = 1/2; to 1, 2, 3 on 3 ranks: 5/6, not 2/3), blocking and non-blocking. 12 B: 12 bytes or 3 ints; 24 B: 24
# bytes or 6 ints.
set(GMB_UNEQUAL gatherv,scatterv,allgatherv,alltoallv,reduce_scatter)
set(GMB_BUSIEST_2 "\"busbw_factor\":0\\.666666667,")
set(GMB_BUSIEST_3 "\"busbw_factor\":0\\.833333333,")
gmb_mpi_test(coll_unequal_busbw_2 2 0 STATUS ok
             STDOUT "(?s)\"bytes\":12,.*\"operation\":\"gatherv\".*${GMB_BUSIEST_2}.*\"operation\":\"scatterv\".*${GMB_BUSIEST_2}.*\"operation\":\"allgatherv\".*${GMB_BUSIEST_2}.*\"operation\":\"alltoallv\".*${GMB_BUSIEST_2}.*\"operation\":\"reduce_scatter\".*${GMB_BUSIEST_2}"
             ARGS coll ${GMB_UNEQUAL} --sizes 12 --dtype int --iters 2 --warmup 1 --validate --format json --out OUT)
gmb_mpi_test(coll_unequal_busbw_3 3 0 STATUS ok
             STDOUT "(?s)\"operation\":\"gatherv\".*${GMB_BUSIEST_3}.*\"operation\":\"scatterv\".*${GMB_BUSIEST_3}.*\"operation\":\"allgatherv\".*${GMB_BUSIEST_3}.*\"operation\":\"alltoallv\".*${GMB_BUSIEST_3}.*\"operation\":\"reduce_scatter\".*${GMB_BUSIEST_3}"
             ARGS coll ${GMB_UNEQUAL} --sizes 24 --dtype int --iters 2 --warmup 1 --validate --format json --out OUT)
gmb_mpi_test(nbc_unequal_busbw_3 3 0 STATUS ok
             STDOUT "(?s)\"operation\":\"gatherv\".*${GMB_BUSIEST_3}"
             ARGS nbc gatherv --sizes 24 --iters 2 --warmup 1 --validate --format json --out OUT)
gmb_mpi_test(coll_barrier_any_size 2 0 STATUS ok ARGS coll barrier --sizes 3 --iters 2 --warmup 1 --out OUT)
# Each record says what its size means and how it is divided among the ranks.
gmb_mpi_test(coll_counts_in_records 3 0 STATUS ok
             STDOUT "(?s)\"operation\":\"reduce_scatter\",.*\"counts\":\\{\"split\":\"unequal\",\"description\":\"bytes = S, each rank's input; unequal counts.*\"operation\":\"reduce_scatter_equal\",.*\"counts\":\\{\"split\":\"equal-blocks\",.*\"size_convention\":\"total\",\"bytes_per_peer\":16,.*\"call\":\"MPI_Reduce_scatter\""
             ARGS coll reduce_scatter,reduce_scatter_equal --sizes 48 --iters 2 --warmup 1 --validate --format json --out OUT)
