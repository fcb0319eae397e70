# SPDX-License-Identifier: BSD-3-Clause
# Samples and intervals: every size aims at 10 samples; a median's 95% interval exists from 6 samples up and is
# null below (run_mpi_test.py check_intervals checks every record of every test for that). The time caps here are
# hundreds of times what the samples take, so these assert the rule, not a timing.

# A collective from 64 KiB at the generated campaign's options (--iters-large 5): topped up to 10 samples.
gmb_mpi_test(coll_large_at_generated_options_takes_ten_samples 2 0 STATUS ok MIN_SAMPLES 10
             STDOUT "\"sample_minimum\":\\{\"minimum\":10,\"asked\":5,\"taken\":10,"
             ARGS coll allreduce --sizes 4K,64K,1M --iters 200 --warmup 20 --iters-large 5 --warmup-large 1
                  --large-size 64K --validate --format json --out OUT)
# Fixed iterations under 10: topped up; an explicit batch keeps its batch.
gmb_mpi_test(latency_few_iterations_takes_ten_samples 2 0 STATUS ok MIN_SAMPLES 10
             STDOUT "\"batch\":1,.*\"sample_minimum\":\\{\"minimum\":10,\"asked\":3,\"taken\":10,\"max_seconds\":1,\"stopped\":\"minimum reached\"\\}"
             ARGS latency --sizes 8 --iters 3 --warmup 1 --batch 1 --format json --out OUT)
# An iteration cap of 3 samples (adaptive: the cap is hard): no interval, and the record says why.
gmb_mpi_test(three_samples_have_no_interval 2 0 STATUS ok PRECISION 0.05 MAX_ITERATIONS 3
             STDOUT "\"time_us\":\\{\"n\":3,[^}]*\"ci95_low\":null,\"ci95_high\":null,\"ci_note\":\"fewer than 6 samples"
             ARGS latency --precision 0.05 --sizes 8 --iters 3 --warmup 1 --batch 1 --format json --out OUT)
# Six samples: the least with an interval ([min, max], 96.9%).
gmb_mpi_test(six_samples_have_an_interval 2 0 STATUS ok PRECISION 0.05 MAX_ITERATIONS 6
             STDOUT "\"time_us\":\\{\"n\":6,[^}]*\"ci95_low\":[0-9.e+-]+,\"ci95_high\":[0-9.e+-]+\\}"
             ARGS latency --precision 0.05 --sizes 8 --iters 6 --warmup 1 --batch 1 --format json --out OUT)
