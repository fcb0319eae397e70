# SPDX-License-Identifier: BSD-3-Clause
# Point-to-point benchmarks on host memory, validated, records checked against the schema.
gmb_mpi_test(latency_host 2 0 STATUS ok ARGS latency --sizes 0:64K --iters 50 --warmup 5 --validate --out OUT)
gmb_mpi_test(bw_host 2 0 ARGS bw --sizes 1:4M --iters 10 --warmup 2 --iters-large 4 --warmup-large 1 --validate --out OUT)
gmb_mpi_test(bibw_host 2 0 ARGS bibw --sizes 1:1M --iters 10 --warmup 2 --window 16 --validate --out OUT)
gmb_mpi_test(mbw_host_4 4 0 ARGS mbw --sizes 1:64K --iters 10 --warmup 2 --validate --out OUT)
# several pairs: every pair's ranks, hosts, GPUs and path (what the ceiling of an aggregate figure needs)
gmb_mpi_test(mbw_pair_paths_4 4 0 STATUS ok
             STDOUT "\"pairs\":2,.*\"pair_paths\":\\[\\{\"ranks\":\\[0,2\\],\"hosts\":\\[[^]]*\\],\"gpus\":\\[null,null\\],\"path\":\\{\"class\":\"host\".*\"ranks\":\\[1,3\\]"
             ARGS mbw --sizes 1K --iters 5 --warmup 1 --format json --out OUT)
gmb_mpi_test(mlat_host 2 0 STATUS ok ARGS mlat --sizes 0:64K --iters 50 --warmup 5 --validate --out OUT)
gmb_mpi_test(mlat_host_4 4 0 STATUS ok STDOUT "\"pairs\":2,.*\"mean_pair_us\":\\{\"n\":"
             ARGS mlat --sizes 0:64K --iters 50 --warmup 5 --validate --format json --out OUT)
gmb_mpi_test(latency_omb_spelling 2 0 ARGS latency -m 1:1K -i 20 -x 2 -c H H --out OUT)
gmb_mpi_test(latency_single_size 2 0 ARGS latency --sizes 16M --iters-large 3 --warmup-large 1 --validate --out OUT)
gmb_mpi_test(bw_json_stdout 2 0 STDERR "^$" ARGS bw --sizes 8,1K --iters 5 --format json)
# A reader that stops early (`| head -3`, `| head -1`): the engine stops printing once nobody reads its output, writes
# every record and the launch exits 0. Rank 0's own stdout read a few lines and closed (with no launcher between, the
# outcome does not depend on when the reader goes), and a launcher's stdout whose reader left before the launch: the
# engine must see that through the launcher (Debian's Open MPI 4.1 mpirun dies of a line it forwards into a closed
# pipe, and MPICH's Hydra of SIGPIPE) and print nothing.
gmb_mpi_test(stdout_closed_by_reader 2 0 STATUS ok STDOUT_READER_LINES 3 SIZES "0,1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536"
             ARGS latency --sizes 0:64K --iters 10000 --warmup 2 --out OUT)
gmb_mpi_test(stdout_closed_by_reader_json 2 0 STATUS ok STDOUT_READER_LINES 1 ARGS bw --sizes 1:64K --iters 200 --warmup 2 --format json --out OUT)
gmb_mpi_test(stdout_reader_gone_before_launch 2 0 STATUS ok STDOUT_READER_GONE SIZES "1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536"
             ARGS bw --sizes 1:64K --iters 200 --warmup 2 --out OUT)
# A bandwidth of 0-byte messages is not defined: 0 B is recorded unsupported with the reason (never an ok record
# without its bandwidth), the other sizes measured, exit 3; latency keeps 0 B. (In the reason, "." stands for its ";",
# CMake's list separator.)
foreach(bench bw bibw mbw)
  gmb_mpi_test(${bench}_zero_bytes 2 3 POINTS "0=unsupported=^a bandwidth of 0-byte messages is not defined. latency measures 0 B$" "8=ok"
               ARGS ${bench} --sizes 0,8 --iters 5 --warmup 1 --validate --out OUT)
endforeach()

# Bad input: a clear message, exit status 2, no records.
gmb_mpi_test(bad_size_syntax 2 2 STDERR "bad size" ARGS latency --sizes 1:4Q --out OUT)
gmb_mpi_test(bad_size_range 2 2 STDERR "MIN greater than MAX" ARGS latency --sizes 4K:1 --out OUT)
gmb_mpi_test(bad_size_twice 2 2 STDERR "sizes .8,1,8. name 8 B twice \\(.8. and .8.\\); give each size once \\(accepted: " ARGS coll allreduce --sizes 8,1,8 --out OUT)
gmb_mpi_test(bad_kind 2 2 STDERR "unknown memory kind 'gpu'.*accepted: host, pinned, device, managed" ARGS latency --send gpu --out OUT)
gmb_mpi_test(bad_letter 2 2 STDERR "unknown buffer letter 'X'" ARGS latency X H --out OUT)
gmb_mpi_test(bad_rank_count 3 2 STDERR "latency needs exactly 2 ranks \\(launched with 3\\)" ARGS latency --out OUT)
gmb_mpi_test(bad_rank_count_mbw 3 2 STDERR "mbw needs an even number of ranks" ARGS mbw --out OUT)
gmb_mpi_test(bad_rank_count_mlat 3 2 STDERR "mlat needs an even number of ranks" ARGS mlat --out OUT)
gmb_mpi_test(bad_option 2 2 STDERR "unknown option '--bogus' \\(see --help" ARGS bw --bogus 3 --out OUT)
gmb_mpi_test(misspelt_option 2 2 STDERR "unknown option '--size'; did you mean '--sizes'\\?" ARGS bw --size 8 --out OUT)
gmb_mpi_test(bad_iters 2 2 STDERR "--iters: bad iteration count '0'" ARGS bw --iters 0 --out OUT)
gmb_mpi_test(missing_value 2 2 STDERR "option --window needs a value" ARGS bw --window)
gmb_mpi_test(unknown_benchmark 1 2 STDERR "unknown benchmark 'pingpong' \\(accepted: list, bibw, bw," ARGS pingpong)
gmb_mpi_test(misspelt_benchmark 1 2 STDERR "unknown benchmark 'latenct'; did you mean 'latency'\\?" ARGS latenct)
# A kind this build or machine lacks: a result with status unsupported and the reason, exit 3.
gmb_mpi_test(device_kind_unsupported 2 3 STATUS unsupported STDERR "unsupported: (memory kind 'device' is not available|refusing to hand device memory)" ARGS bw --send device --sizes 1K --out OUT)
# An existing output file is never overwritten.
gmb_mpi_test(existing_output_refused 2 2 PRECREATE_OUT STDERR "already exists; gmb never overwrites" ARGS latency --sizes 8 --out OUT)

# Transfer strategies need a GPU runtime and GPU-backed buffers: on host memory or in a host-only
# build they are refused with the reason (exit 3), never run as something else.
gmb_mpi_test(strategy_on_host_unsupported 2 3 STATUS unsupported STDERR "unsupported: (the staged-pinned strategy (stages device|copies through a GPU runtime))" ARGS bw --strategy staged-pinned --sizes 1K --out OUT)
gmb_mpi_test(pipelined_device_unsupported 2 3 STATUS unsupported STDERR "unsupported: " ARGS bw --strategy pipelined --chunks 2,4 --send device --recv device --sizes 1K --out OUT)
gmb_mpi_test(pipelined_gpu_host_only_unsupported 2 3 STATUS unsupported STDERR "unsupported: the pipelined-gpu strategy copies through a GPU runtime" ARGS bw --strategy pipelined-gpu --chunks 2 --sizes 1K --out OUT)
gmb_mpi_test(bad_strategy 2 2 STDERR "unknown transfer strategy 'zero-copy' \\(accepted: direct, staged-pageable, staged-pinned, pipelined, pipelined-gpu\\)" ARGS bw --strategy zero-copy --out OUT)
gmb_mpi_test(chunks_without_pipelined 2 2 STDERR "--chunks and --chunk-size apply to --strategy pipelined and pipelined-gpu only" ARGS bw --chunks 4 --out OUT)
gmb_mpi_test(bad_chunks 2 2 STDERR "--chunks: bad chunk count '0'" ARGS bw --strategy pipelined --chunks 4,0 --out OUT)

# Buffers: allocated once per launch by default, per size with --fresh-buffers; records say which. Validation
# checks extra, untimed iterations: the timed ones keep their batching (--batch 4 stays 4 with --validate).
gmb_mpi_test(bw_buffers_once 2 0 STDOUT "\"batch\":4,.*\"buffer_allocation\":\"once-per-launch\",\"validated_iterations\":2"
             ARGS bw --sizes 1K --iters 40 --warmup 4 --batch 4 --window 8 --validate --format json --out OUT)
gmb_mpi_test(latency_fresh_buffers 2 0 STATUS ok STDOUT "\"buffer_allocation\":\"fresh-per-size\",\"validated_iterations\":2"
             ARGS latency --sizes 1:64K --iters 20 --warmup 2 --fresh-buffers --validate --format json --out OUT)
gmb_mpi_test(bibw_fresh_buffers 2 0 STATUS ok ARGS bibw --sizes 1,2,4K,1M --iters 5 --warmup 1 --window 8 --fresh-buffers --validate --out OUT)
gmb_mpi_test(fresh_buffers_refused_halo 2 2 STDERR "--fresh-buffers: halo does not sweep sizes over buffers it hands to MPI.*accepted by: .*latency"
             ARGS halo --fresh-buffers --out OUT)
gmb_mpi_test(fresh_buffers_refused_peaks 1 2 STDERR "--fresh-buffers: peaks does not sweep sizes" ARGS peaks --fresh-buffers --out OUT)
