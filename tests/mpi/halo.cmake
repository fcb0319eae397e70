# SPDX-License-Identifier: BSD-3-Clause
# The halo mini-app on host memory: 1, 2 and 4 ranks, 2D and 3D, each rank validated against its host replay;
# records checked against the schema. Small grids, few steps. What fails validation (a wrong or corrupted face, a
# wrong neighbour) is held by tests/unit/test_halo.cpp (Replay*).
gmb_mpi_test(halo_2d_1rank 1 0 STATUS ok ARGS halo --dims 2 --grid 16,12 --steps 5 --warmup 2 --validate --out OUT)
gmb_mpi_test(halo_3d_1rank_periodic 1 0 STATUS ok ARGS halo --dims 3 --grid 8,6,5 --periodic --steps 4 --warmup 1 --validate --out OUT)
gmb_mpi_test(halo_2d_2ranks_all 2 0 ARGS halo --dims 2 --grid 16,12 --halo 2 --strategy all --steps 5 --warmup 2 --validate --out OUT)
gmb_mpi_test(halo_3d_2ranks_periodic 2 0 STATUS ok ARGS halo --dims 3 --grid 8,6,5 --periodic --strategy pipelined-overlap --steps 4 --warmup 1 --validate --out OUT)
gmb_mpi_test(halo_2d_4ranks_periodic 4 0 ARGS halo --dims 2 --grid 10,9 --periodic --strategy all --steps 5 --warmup 2 --validate --out OUT)
gmb_mpi_test(halo_3d_4ranks_all 4 0 ARGS halo --dims 3 --grid 6,5,7 --halo 2 --dtype float --strategy all --steps 4 --warmup 1 --validate --out OUT)
gmb_mpi_test(halo_3d_4ranks_strong 4 0 STATUS ok ARGS halo --dims 3 --grid 13,11,9 --mode strong --strategy direct --steps 4 --warmup 1 --validate --out OUT)
gmb_mpi_test(halo_2d_4ranks_strong_periodic 4 0 STATUS ok ARGS halo --dims 2 --grid 15,13 --mode strong --periodic --strategy pipelined-overlap --halo 3 --steps 4 --warmup 1 --validate --out OUT)
gmb_mpi_test(halo_json_stdout 2 0 STDERR "^$" ARGS halo --dims 2 --grid 8,8 --steps 3 --warmup 1 --format json)
# --validate: every rank compares its field with its own host replay (4 ranks on a 2 x 2 grid, periodic, so every
# side's halo comes from a neighbour and is checked after the replay's first exchange); the record says so.
gmb_mpi_test(halo_validation_replay_4 4 0
             STDOUT "\"validation\":\\{\"max_abs_error\":0,\"tolerance\":0,\"reference\":\"each rank's host replay of its own subdomain, 5 steps \\(warm-up \\+ timed\\) from the initial values, halos exchanged between the replays and checked against the initial values after the first exchange\",\"host_seconds\":[0-9.e+-]+\\}"
             ARGS halo --dims 3 --grid 6,5,4 --halo 2 --periodic --strategy all --steps 3 --warmup 2 --validate --format json --out OUT)
# Strategies are named as the point-to-point ones where they mean the same; the former spellings are accepted
# with a note, and records (and the context's options) carry the canonical name.
gmb_mpi_test(halo_former_spelling_staged 2 0 STATUS ok
             STDERR "^gmb-bench halo: note: --strategy staged is spelled staged-pinned, as the point-to-point strategies; records carry staged-pinned\n$"
             STDOUT "(?s)\"strategy\":\"staged-pinned\".*\"strategy\":\"staged-pinned\",.*\"speedup_vs_staged_pinned\":1,"
             ARGS halo --dims 2 --grid 8,8 --strategy staged --steps 3 --warmup 1 --validate --format json --out OUT)
gmb_mpi_test(halo_former_spelling_overlap 2 0 STATUS ok
             STDERR "note: --strategy overlap is spelled pipelined-overlap" STDOUT "\"strategy\":\"pipelined-overlap\""
             ARGS halo --dims 2 --grid 8,8 --strategy overlap --steps 3 --warmup 1 --validate --format json --out OUT)
# all: every strategy by its canonical name, the speed-up over staged-pinned once it ran.
gmb_mpi_test(halo_all_canonical_names 2 0
             STDOUT "(?s)\"strategy\":\"staged-pinned\",.*\"strategy\":\"direct\",.*\"speedup_vs_staged_pinned\":[0-9].*\"status\":\"unsupported\",[^\n]*\"strategy\":\"pipelined\".*\"strategy\":\"pipelined-overlap\""
             ARGS halo --dims 2 --grid 8,8 --strategy all --steps 3 --warmup 1 --format json --out OUT)

# Bad input: a clear message, exit status 2.
gmb_mpi_test(halo_bad_dims 1 2 STDERR "bad --dims '4' \\(accepted: 2, 3\\)" ARGS halo --dims 4 --out OUT)
gmb_mpi_test(halo_grid_not_matching_dims 1 2 STDERR "--grid has 2 extents but --dims 3 needs 3" ARGS halo --dims 3 --grid 8,8 --out OUT)
gmb_mpi_test(halo_bad_grid 1 2 STDERR "bad grid '8,x'" ARGS halo --dims 2 --grid 8,x --out OUT)
gmb_mpi_test(halo_wider_than_grid 2 2 STDERR "--halo 5 is wider than the grid" ARGS halo --dims 2 --grid 8,4 --halo 5 --out OUT)
gmb_mpi_test(halo_wider_than_strong_share 4 2 STDERR "--halo 3 is wider than the grid: along x a rank has 2 interior cells" ARGS halo --dims 2 --grid 5,40 --mode strong --halo 3 --out OUT)
gmb_mpi_test(halo_unknown_strategy 1 2
             STDERR "unknown strategy 'bogus' \\(accepted: staged-pinned, direct, pipelined, pipelined-overlap, all; former spellings: staged for staged-pinned, overlap for pipelined-overlap\\)"
             ARGS halo --strategy bogus --out OUT)
# staged-pageable is a point-to-point strategy that halo does not have.
gmb_mpi_test(halo_staged_pageable_refused 1 2 STDERR "unknown strategy 'staged-pageable' \\(accepted: staged-pinned"
             ARGS halo --strategy staged-pageable --out OUT)
gmb_mpi_test(halo_bad_mode 1 2 STDERR "scaling mode.*'medium'" ARGS halo --mode medium --out OUT)
# Refused configurations: a result with status unsupported and the reason, exit 3.
gmb_mpi_test(halo_device_unsupported 2 3 STATUS unsupported STDERR "unsupported: (memory kind 'device' is not available|a device field is updated on the GPU|refusing to hand device memory)" ARGS halo --mem device --dims 2 --grid 8,8 --steps 2 --out OUT)
gmb_mpi_test(halo_pipelined_host_refused 2 3 STATUS unsupported STDERR "unsupported: pipelined overlaps GPU packing" ARGS halo --strategy pipelined --dims 2 --grid 8,8 --steps 2 --out OUT)
