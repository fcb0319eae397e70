# SPDX-License-Identifier: BSD-3-Clause
# Adaptive repetitions (--precision): every measured size says how its repetitions stopped (converged, iteration
# cap, time cap) within the caps. Host timings on a shared CI machine are noise: these tests never assert a
# timing, nor that a point converged; run_mpi_test.py checks the precision objects (PRECISION, MAX_ITERATIONS).
gmb_mpi_test(latency_precision 2 0 STATUS ok PRECISION 0.05 MAX_ITERATIONS 2000
             STDOUT "\"precision\":\\{\"target\":0.05,\"max_seconds\":0.5\\}"
             ARGS latency --precision 0.05 --max-seconds 0.5 --sizes 8,1K --iters 2000 --warmup 10 --format json --out OUT)
# A percentage, the default time cap, large sizes capped by --iters-large, and a cap too small to converge under.
gmb_mpi_test(bw_precision_percent 2 0 STATUS ok PRECISION 0.03 MAX_ITERATIONS 400
             ARGS bw --precision 3% --sizes 8,4K,1M --iters 400 --iters-large 20 --warmup 4 --warmup-large 1 --window 8 --out OUT)
# The iteration cap stops it: the time cap is set far beyond what 30 iterations take on a busy machine (the default
# second would stop a slow run first), and the time cap test below sets it tiny, so each test proves its own cap.
gmb_mpi_test(latency_precision_iteration_cap 2 0 STATUS ok PRECISION 0.0001 MAX_ITERATIONS 30
             STDOUT "\"stopped\":\"(iteration cap|converged)\""
             ARGS latency --precision 0.0001 --max-seconds 3600 --sizes 8 --iters 30 --warmup 2 --format json --out OUT)
gmb_mpi_test(latency_precision_time_cap 2 0 STATUS ok PRECISION 0.0001 MAX_ITERATIONS 100000000
             STDOUT "\"stopped\":\"(time cap|converged)\""
             ARGS latency --precision 0.0001 --max-seconds 0.02 --sizes 64K --iters 100000000 --warmup 2 --format json --out OUT)
# Validation stays outside the timed samples; every rank's samples (mlat) and collectives take it too.
gmb_mpi_test(mlat_precision_validated 2 0 STATUS ok PRECISION 0.05 MAX_ITERATIONS 1000 STDOUT "\"validated_iterations\":2"
             ARGS mlat --precision 0.05 --max-seconds 0.5 --sizes 0,64K --warmup 5 --validate --format json --out OUT)
gmb_mpi_test(coll_precision 3 0 STATUS ok PRECISION 0.05 MAX_ITERATIONS 1000
             ARGS coll allreduce,bcast --precision 0.05 --max-seconds 0.25 --sizes 4,4K --warmup 5 --validate --out OUT)

# Bad input: a clear message, exit status 2, no records.
gmb_mpi_test(bad_precision_zero 2 2 STDERR "--precision: bad precision '0' \\(accepted: a fraction above 0 and at most 0.5"
             ARGS latency --precision 0 --out OUT)
gmb_mpi_test(bad_precision_large 2 2 STDERR "--precision: bad precision '60%' \\(accepted: a fraction above 0 and at most 0.5, e.g. 0.03 for \\+-3%, or a percentage, e.g. 3%\\)"
             ARGS latency --precision 60% --out OUT)
gmb_mpi_test(bad_precision_text 2 2 STDERR "--precision: bad precision 'tight'" ARGS bw --precision tight --out OUT)
gmb_mpi_test(bad_max_seconds 2 2 STDERR "--max-seconds: bad time cap '0' \\(accepted: seconds above 0"
             ARGS latency --precision 0.05 --max-seconds 0 --out OUT)
gmb_mpi_test(max_seconds_without_precision 2 2 STDERR "--max-seconds caps adaptive repetitions and needs --precision"
             ARGS latency --max-seconds 2 --out OUT)
# Benchmarks with their own loops refuse it, naming those that take it.
gmb_mpi_test(precision_refused_nbc 2 2 STDERR "--precision: nbc does not time its points through the size-sweep runner.*accepted by: .*latency"
             ARGS nbc allreduce --precision 0.05 --out OUT)
gmb_mpi_test(precision_refused_halo 2 2 STDERR "--precision: halo does not time its points through the size-sweep runner"
             ARGS halo --precision 0.05 --out OUT)
gmb_mpi_test(precision_refused_peaks 1 2 STDERR "--precision: peaks does not" ARGS peaks --precision 0.05 --out OUT)
gmb_mpi_test(precision_refused_doctor 1 2 STDERR "--precision: doctor does not" ARGS doctor --precision 0.05 --out OUT)
