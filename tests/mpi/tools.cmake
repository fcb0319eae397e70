# SPDX-License-Identifier: BSD-3-Clause
# doctor: Debian's Open MPI and MPICH are not CUDA-aware, and doctor must say so from their own
# queries (no device pointer is ever handed to them).
gmb_mpi_test(doctor_not_aware 2 0 STATUS ok STDOUT "GPU awareness: not aware \\(the library's own queries say it has no CUDA support\\)" ARGS doctor --out OUT)
gmb_mpi_test(doctor_single_rank 1 0 STATUS ok STDOUT "GPU awareness: not aware" ARGS doctor --out OUT)
# peaks on a host-only machine: the host-memory copy runs, GPU copies are reported unsupported, and the run measured
# what this machine has (exit 0).
gmb_mpi_test(peaks_host_only 2 0 STDOUT "host-copy, median GB/s" ARGS peaks --sizes 4M --samples 3 --copies 2 --out OUT)
# Every rank's network facts in the context (every host has a loopback interface), and doctor's section of them.
gmb_mpi_test(doctor_network_facts 2 0 STATUS ok INTERFACE lo STDOUT "#   interface lo [a-z]+ 127\\.0\\.0\\.1"
             ARGS doctor --out OUT)
# --nic before MPI_Init: every rank records its card and the variables set; a name (every host has lo) and the
# nearest (here no GPU: an interface that is up, hardware before virtual), and a name the host lacks fails early.
gmb_mpi_test(nic_named 2 0 STATUS ok NIC lo STDOUT "#   NIC pinning \\(--nic lo\\): lo " ARGS doctor --nic lo --out OUT)
gmb_mpi_test(nic_nearest 2 0 STATUS ok NIC nearest ARGS latency --sizes 8 --iters 10 --warmup 2 --nic nearest --out OUT)
gmb_mpi_test(nic_absent 2 2 STDERR "--nic gmb-no-such-nic on host [^ ]+ local rank [01]: gmb-no-such-nic is not on this host"
             ARGS latency --sizes 8 --nic gmb-no-such-nic)
# On one host the network ceiling is not measured: an unsupported record says why (the other copies run).
gmb_mpi_test(peaks_network_one_host 2 0 STDOUT "network +- +- +- +unsupported: all 2 ranks run on one host"
             ARGS peaks --sizes 4M --samples 2 --copies 1 --out OUT)
gmb_mpi_test(peaks_bad_option 1 2 STDERR "peaks takes no positional arguments" ARGS peaks extra)
# The doctor's fresh-buffer check runs only for a library proven CUDA-aware; it says so otherwise.
gmb_mpi_test(doctor_fresh_check_not_run 2 0 STATUS ok STDOUT "device buffers freed and allocated again: not run \\(only for a library proven CUDA-aware" ARGS doctor --out OUT)
# --version: what a site's module or package check asks (no MPI started: the checker's mpiexec is not used)
add_test(NAME cli.version COMMAND ${GMB_BIN} --version)
set_tests_properties(cli.version PROPERTIES PASS_REGULAR_EXPRESSION "^gmb-bench ${PROJECT_VERSION} \\(revision ")
# `list` on a machine without a usable CUDA driver or GPU (a CUDA build on a login node, or this one): it says so in
# plain words ("no CUDA driver or GPU is usable here"), never CUDA's "driver version is insufficient", and lists the
# rest; a host-only build has no GPU line at all.
add_test(NAME cli.list_without_a_gpu COMMAND ${GMB_BIN} list)
set_tests_properties(cli.list_without_a_gpu PROPERTIES ENVIRONMENT "${GMB_MPI_TEST_ENV}"
                     PASS_REGULAR_EXPRESSION "memory kinds:\n  host +pageable host memory \\(malloc\\) +available"
                     FAIL_REGULAR_EXPRESSION "driver version is insufficient")
# The engine's description is the contract the harness reads: it validates against schema/engine.v1.json.
add_test(NAME cli.description_schema
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/mpi/validate_description.py ${GMB_BIN} ${GMB_ENGINE_SCHEMA_FILE})
set_tests_properties(cli.description_schema PROPERTIES ENVIRONMENT "${GMB_MPI_TEST_ENV}")
# --network-tools: an unknown tool is refused with the accepted names, the option named once.
gmb_mpi_test(peaks_network_tools_unknown 1 2
             STDERR "error: --network-tools: unknown network tool 'bogus' \\(accepted: auto, gmb-tcp, iperf3, ucx_perftest, ib_write_bw, fi_pingpong, or a comma"
             ARGS peaks --network-tools gmb-tcp,bogus --out OUT)
gmb_mpi_test(peaks_network_streams_bad 1 2 STDERR "--network-streams: bad stream count '0' in '1,0' \\(accepted: a comma-separated list of whole numbers from 1 to 64"
             ARGS peaks --network-streams 1,0 --out OUT)
