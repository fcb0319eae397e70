# SPDX-License-Identifier: BSD-3-Clause
# Sizes beyond a limit are refused before anything is allocated for them: an unsupported record with the
# reason, the other sizes measured, exit status 3. No test here lets a process grow beyond 256 MB.

# The per-call count of MPI-3 calls (an int): 4 GiB in one MPI_Isend is refused, nothing of it allocated.
gmb_mpi_test(limit_count_bw 2 3 MAX_RSS_MB 256
             POINTS "1024=ok" "4294967296=unsupported=^4 GiB exceeds the 2 GiB - 1 byte per-call count of MPI-3 calls \\(MPI_Isend/MPI_Irecv with MPI_BYTE\\)$"
             ARGS bw --sizes 1K,4G --iters 10 --warmup 2 --validate --out OUT)
gmb_mpi_test(limit_count_latency 2 3 MAX_RSS_MB 256
             POINTS "1024=ok" "2147483648=unsupported=per-call count of MPI-3 calls \\(MPI_Send/MPI_Recv with MPI_BYTE\\)"
             ARGS latency --sizes 1K,2G --iters 10 --warmup 2 --out OUT)
gmb_mpi_test(limit_count_mbw_4 4 3 MAX_RSS_MB 256 POINTS "64=ok" "3221225472=unsupported=per-call count"
             ARGS mbw --sizes 64,3G --iters 5 --warmup 1 --out OUT)
# Collectives: an element count over an int (bytes move as MPI_BYTE).
gmb_mpi_test(limit_count_bcast 2 3 MAX_RSS_MB 256
             POINTS "1024=ok" "4294967296=unsupported=exceeds 2147483647, the per-call count of MPI-3 calls \\(MPI_Bcast\\)"
             ARGS coll bcast --sizes 1K,4G --iters 5 --warmup 1 --out OUT)

# Memory: --memory-limit stands for a small machine. allreduce at 64 MiB holds a send and a receive buffer,
# an input image and, with --validate, a copy of what it received: 256 MiB per rank.
gmb_mpi_test(limit_memory_allreduce 2 3 MAX_RSS_MB 256
             POINTS "1024=ok" "67108864=unsupported=^needs 256 MiB per rank \\(send 64 MiB, recv 64 MiB, input image 64 MiB, received copy 64 MiB\\), over --memory-limit 16 MiB$"
             ARGS coll allreduce --sizes 1K,64M --memory-limit 16M --iters 5 --warmup 1 --validate --out OUT)
gmb_mpi_test(limit_memory_nbc 2 3 MAX_RSS_MB 256 POINTS "1024=ok" "67108864=unsupported=over --memory-limit 16 MiB"
             ARGS nbc allreduce --sizes 1K,64M --memory-limit 16M --iters 5 --warmup 1 --out OUT)
gmb_mpi_test(limit_memory_bibw 2 3 MAX_RSS_MB 256 POINTS "4096=ok" "134217728=unsupported=^needs 256 MiB per rank \\(send 128 MiB, recv 128 MiB\\)"
             ARGS bibw --sizes 4K,128M --memory-limit 1M --iters 5 --warmup 1 --window 4 --out OUT)
gmb_mpi_test(limit_memory_halo 2 3 STATUS unsupported MAX_RSS_MB 256 STDERR "unsupported: needs .* per rank \\(2 fields .*over --memory-limit 1 MiB"
             ARGS halo --dims 3 --grid 128,128,128 --memory-limit 1M --steps 2 --out OUT)
gmb_mpi_test(limit_memory_peaks 1 3 MAX_RSS_MB 256 POINTS "67108864=unsupported=over --memory-limit 1 MiB"
             ARGS peaks --sizes 64M --memory-limit 1M --samples 1 --copies 1 --out OUT)
# Nothing measurable: only unsupported records, exit status 3.
gmb_mpi_test(limit_nothing_measurable 2 3 STATUS unsupported MAX_RSS_MB 256
             ARGS coll allreduce,bcast --sizes 64M,128M --memory-limit 1M --out OUT)
# What the host has: a grid far beyond any machine's memory (16 TiB per rank) is refused with MemAvailable's
# figures (or the memory cgroup's), never allocated.
gmb_mpi_test(limit_host_memory_halo 2 3 STATUS unsupported MAX_RSS_MB 256
             STDERR "unsupported: needs 16.0 TiB of host memory per rank \\(2 fields 16.0 TiB, face buffers 64 MiB\\), .* available to each rank: .*(MemAvailable|memory cgroup limit) less a 10% margin, shared by 2 ranks on host "
             ARGS halo --dims 2 --grid 1048576,1048576 --steps 2 --out OUT)

# What scales with an option rather than the size is checked the same way: a window's requests in flight (the MPI
# library's state for each), one-sided operations before their synchronisation, the samples of --iters. Refused at
# every size with the numbers, in a second, instead of an OOM kill after minutes.
gmb_mpi_test(limit_window_requests_bw 2 3 STATUS unsupported MAX_RSS_MB 256
             POINTS "8=unsupported=^needs [0-9.]+ GiB of host memory per rank \\(send 8 B, recv 8 B, 100000000 requests in flight \\(1 KiB each, the MPI library's state\\) 95\\.4 GiB\\), "
             ARGS bw --sizes 8 --window 100000000 --iters 2 --out OUT)
gmb_mpi_test(limit_window_requests_memory_limit 2 3 MAX_RSS_MB 256
             POINTS "8=unsupported=1048576 requests in flight .* over --memory-limit 512 MiB"
             ARGS bibw --sizes 8 --window 524288 --memory-limit 512M --iters 2 --out OUT)
gmb_mpi_test(limit_window_operations_rma 2 3 STATUS unsupported MAX_RSS_MB 256
             POINTS "8=unsupported=100000000 MPI_Put operations in flight"
             ARGS rma_bw --sizes 8 --window 100000000 --iters 2 --out OUT)
gmb_mpi_test(limit_iteration_samples 2 3 STATUS unsupported MAX_RSS_MB 256
             POINTS "8=unsupported=timing samples 16\\.0 GiB, the slowest rank's samples 16\\.0 GiB"
             ARGS latency --sizes 8 --iters 2147483647 --memory-limit 1G --out OUT)

# Bad limits and sizes: exit status 2 with what is accepted.
gmb_mpi_test(bad_window_both_ways 2 2 STDERR "--window 2000000000: windows both ways keep 2 x 2000000000 messages in flight: 4000000000 requests in flight at once exceed 2147483647, the count one MPI_Waitall takes \\(accepted: a window of at most 1073741823\\)"
             ARGS bibw --window 2000000000 --out OUT)
gmb_mpi_test(bad_memory_limit 2 2 STDERR "--memory-limit: bad memory limit '0' \\(accepted: at least 1 byte" ARGS bw --memory-limit 0 --out OUT)
gmb_mpi_test(bad_size_step 2 2 STDERR "bad size range '1:8:2': a range is MIN:MAX in doubling steps, a step is not accepted \\(accepted: "
             ARGS bw --sizes 1:8:2 --out OUT)
gmb_mpi_test(bad_grid_too_large 1 2 STDERR "bad grid '1048576,1048576,2' \\(accepted: NX,NY or NX,NY,NZ, whole numbers from 1 to 1048576, at most 1099511627776 cells in all\\)"
             ARGS halo --dims 3 --grid 1048576,1048576,2 --out OUT)
gmb_mpi_test(bad_iters_range 2 2 STDERR "--iters: bad iteration count '2147483648' \\(accepted: a whole number from 1 to 2147483647\\)"
             ARGS bw --iters 2147483648 --out OUT)

# Records are valid UTF-8 whatever the environment holds: a stray byte becomes U+FFFD.
gmb_mpi_test(environment_invalid_utf8 2 0 STATUS ok ENV_INVALID_UTF8 GMB_TEST_BYTES ARGS latency --sizes 8 --iters 5 --warmup 1 --out OUT)
