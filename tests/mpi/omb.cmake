# SPDX-License-Identifier: BSD-3-Clause
# OSU Micro-Benchmarks (OMB) command lines mean what they mean in OMB (docs/omb.md): -m [MIN:]MAX from OMB's
# defaults, -d cuda|managed, a bare -f for the full table, OMB's letters gmb lacks refused with their meaning.

set(GMB_OMB_1_TO_4M "1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576,2097152,4194304")
set(GMB_OMB_2_TO_4M "2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576,2097152,4194304")

# `osu_bw -m 4194304` is OMB's 1 B .. 4 MiB (its -m MAX keeps the minimum); rank 0 says how -m was read.
gmb_mpi_test(omb_bw_max_only 2 0 SIZES "${GMB_OMB_1_TO_4M}" STATUS ok
                   STDERR "gmb-bench bw: warning: -m 4194304 read as OMB's \\[MIN:\\]MAX, as in osu_bw: sizes 1 B to 4 MiB in doubling steps \\(23 sizes\\); for 4194304 bytes alone give --sizes 4194304"
                   ARGS bw -m 4194304 -i 4 -x 1 -W 8 H H --out OUT)
# --sizes keeps gmb's meaning: one size.
gmb_mpi_test(omb_sizes_keeps_gmb_meaning 2 0 SIZES "4194304" STATUS ok STDERR "^$"
                   ARGS bw --sizes 4194304 --iters-large 4 --warmup-large 1 -W 8 --out OUT)
# -m MIN: goes up to OMB's default maximum (4 MiB point to point); nothing to warn about.
gmb_mpi_test(omb_latency_min_only 2 0 SIZES "${GMB_OMB_2_TO_4M}" STATUS ok STDERR "^$"
                   ARGS latency -m 2: -i 4 -x 1 --out OUT)
# -m :MAX from OMB's minimum: 0 B for osu_latency.
gmb_mpi_test(omb_latency_max_only_from_zero 2 0 SIZES "0,1,2,4,8,16" STATUS ok
                   STDERR "^$" ARGS latency -m :16 -i 4 -x 1 --out OUT)
# Collectives: OMB's default maximum is 1 MiB.
gmb_mpi_test(omb_coll_min_only 2 0 SIZES "262144,524288,1048576" STATUS ok STDERR "^$"
                   ARGS coll allreduce -m 256K: -i 3 -x 1 --out OUT)
# OMB's collective sizes start at 1 B: the sizes below one float element are measured as one element, once (the
# record of 4 B stands for 1, 2 and 4 B).
gmb_mpi_test(omb_coll_below_one_element 2 0 STATUS ok
             STDOUT "(?s)\"bytes\":4,.*\"requested_bytes\":\\[1,2,4\\],.*\"bytes\":8,.*\"requested_bytes\":\\[8\\],"
             ARGS coll allreduce -m 8 -i 3 -x 1 --format json --out OUT)
# -i / -x are OMB's: every size, the large ones too (iterations recorded per size; 3 asked for, topped up to the
# engine's minimum of 10 samples, which the record says).
gmb_mpi_test(omb_iterations_every_size 2 0 SIZES "1048576,2097152" STATUS ok
                   STDOUT "\"bytes\":2097152,.*\"iterations\":10,\"warmup\":1,.*\"sample_minimum\":\\{\"minimum\":10,\"asked\":3,"
                   ARGS bw -m 1M:2M -i 3 -x 1 -W 4 --format json --out OUT)
# OMB's `-d cuda ... D D` on this GPU-less machine: every size refused as unsupported (exit 3), never a crash.
gmb_mpi_test(omb_bw_cuda_device_unsupported 2 3 SIZES "${GMB_OMB_1_TO_4M}" STATUS unsupported
                   STDERR "unsupported: (memory kind 'device' is not available|no usable CUDA device|refusing to hand device memory)"
                   ARGS bw -d cuda -m 4194304 D D -i 2 -x 1 --out OUT)

# -d: cuda and managed only.
gmb_mpi_test(omb_accelerator_openacc 2 2
             STDERR "error: -d: accelerator 'openacc' is not supported: gmb-bench measures CUDA devices only \\(accepted: cuda, managed\\)"
             ARGS latency -d openacc --out OUT)
gmb_mpi_test(omb_accelerator_rocm_long 2 2 STDERR "--accelerator: accelerator 'rocm' is not supported.*accepted: cuda, managed"
             ARGS bw --accelerator rocm D D --out OUT)
gmb_mpi_test(omb_accelerator_unknown 2 2 STDERR "-d: unknown accelerator 'gpu' \\(accepted: cuda, managed\\)"
             ARGS bw -d gpu --out OUT)
# -d without letters: OMB keeps both buffers on the host; said on stderr, measured on the host.
gmb_mpi_test(omb_accelerator_without_letters 2 0 STATUS ok
             STDERR "warning: -d cuda without buffer letters: both buffers in host memory, as in osu_bw \\(OMB's default H H\\); give D D"
             ARGS bw -d cuda -m 64 -i 3 -x 1 -W 4 --out OUT)
# Collectives: -d cuda is every rank's buffers on the device (refused here as unsupported), and not with --mem.
gmb_mpi_test(omb_coll_cuda_unsupported 2 3 STATUS unsupported STDERR "unsupported: "
             ARGS coll allreduce -d cuda -m 8 -i 2 -x 1 --out OUT)
gmb_mpi_test(omb_coll_cuda_and_mem 2 2 STDERR "-d cuda and --mem both set every rank's memory: give one"
             ARGS coll allreduce -d cuda --mem host --out OUT)
gmb_mpi_test(omb_no_counterpart 2 2 STDERR "-d is OMB's --accelerator, and halo has no OMB counterpart: give --mem"
             ARGS halo -d cuda --out OUT)
gmb_mpi_test(omb_m_no_counterpart 1 2 STDERR "-m is OMB's --message-size, and peaks has no OMB counterpart: give --sizes"
             ARGS peaks -m 64M --out OUT)
gmb_mpi_test(omb_m_and_sizes 2 2 STDERR "give either -m \\(OMB's \\[MIN:\\]MAX\\) or --sizes \\(gmb's sizes\\), not both"
             ARGS bw -m 64 --sizes 8 --out OUT)
gmb_mpi_test(omb_m_list 2 2 STDERR "-m: bad message size '1,8': -m is OMB's \\[MIN:\\]MAX, not a list" ARGS bw -m 1,8 --out OUT)
gmb_mpi_test(omb_m_over_default_max 2 2 STDERR "MIN 8 MiB is greater than MAX 4 MiB \\(the default maximum of osu_bw\\)"
             ARGS bw -m 8M: --out OUT)

# A bare -f is OMB's full listing: min, max and iterations columns, with a note; -f json stays the format.
gmb_mpi_test(omb_full_table 2 0 STATUS ok
             STDOUT "# full statistics \\(OMB's -f\\).*\nsize +median_us +min_us +p95_us +max_us +iterations +status"
             ARGS latency -m 16 -f -i 4 -x 1 H H --out OUT)
gmb_mpi_test(omb_full_table_bw 2 0 STATUS ok STDOUT "min_GB/s +max_GB/s +iterations +status"
             ARGS bw --full -m 64 -i 4 -x 1 -W 4 --out OUT)
gmb_mpi_test(omb_full_coll 2 0 STATUS ok STDOUT "min_us +max_us +iterations +status"
             ARGS coll allreduce -f -m 4:64 -i 3 -x 1 --out OUT)
gmb_mpi_test(omb_f_json_is_format 2 0 STATUS ok STDOUT "^\\{\"schema\":\"gmb.record/1\",\"type\":\"context\""
             ARGS latency -m 8 -f json -i 4 -x 1 --out OUT)

# OMB's collective letters gmb has under other names, and letters it lacks (refused with their meaning).
gmb_mpi_test(omb_nbc_tests_letters 2 0 STATUS ok STDOUT "\"tests\":2"
             ARGS nbc allreduce -t 2 -r cpu -m 4:8 -i 3 -x 1 --format json --out OUT)
gmb_mpi_test(omb_coll_root_in_place 2 0 STATUS ok ARGS coll allreduce,reduce -k fixed:1 -l -m 4:64 -i 3 -x 1 -M 512M --out OUT)
gmb_mpi_test(omb_letter_refused_t 2 2
             STDERR "-t: OMB's -t is the MPI_Test calls of the non-blocking collectives \\(gmb: nbc -t/--tests\\)"
             ARGS latency -t 4 --out OUT)
gmb_mpi_test(omb_letter_refused_z 2 2 STDERR "-z: OMB's --tail-lat percentiles" ARGS latency -z --out OUT)
gmb_mpi_test(omb_letter_refused_W 2 2 STDERR "-W: OMB's --window-size applies to the windowed bandwidth benchmarks"
             ARGS latency -W 16 --out OUT)
# nccl-tests' spelling of a sweep (-b MIN -e MAX -f 2) is told apart from OMB's -b (--buffer-num) and answered with
# gmb's; -b without -e is OMB's letter.
gmb_mpi_test(nccl_tests_size_spelling 2 2 STDERR "error: -b 8 -e 1M: this is nccl-tests' spelling: use --sizes 8:1M\n"
             ARGS coll allreduce -b 8 -e 1M -f 2 --out OUT)
gmb_mpi_test(nccl_tests_size_spelling_factor 2 2
             STDERR "use --sizes 8:1M \\(gmb's ranges double at each step, as -f 2. other steps as a list"
             ARGS coll allreduce -b 8 -e 1M -f 4 --out OUT)
gmb_mpi_test(omb_letter_refused_b 2 2 STDERR "-b: OMB's --buffer-num" ARGS bw -b single --out OUT)
