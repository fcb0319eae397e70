# SPDX-License-Identifier: BSD-3-Clause
# The halo mini-app on host memory: 1, 2 and 4 ranks, 2D and 3D, validated against the
# single-rank reference; records checked against the schema. Small grids, few steps.
gmb_mpi_test(halo_2d_1rank 1 0 STATUS ok ARGS halo --dims 2 --grid 16,12 --steps 5 --warmup 2 --validate --out OUT)
gmb_mpi_test(halo_3d_1rank_periodic 1 0 STATUS ok ARGS halo --dims 3 --grid 8,6,5 --periodic --steps 4 --warmup 1 --validate --out OUT)
gmb_mpi_test(halo_2d_2ranks_all 2 0 ARGS halo --dims 2 --grid 16,12 --halo 2 --strategy all --steps 5 --warmup 2 --validate --out OUT)
gmb_mpi_test(halo_3d_2ranks_periodic 2 0 STATUS ok ARGS halo --dims 3 --grid 8,6,5 --periodic --strategy overlap --steps 4 --warmup 1 --validate --out OUT)
gmb_mpi_test(halo_2d_4ranks_periodic 4 0 ARGS halo --dims 2 --grid 10,9 --periodic --strategy all --steps 5 --warmup 2 --validate --out OUT)
gmb_mpi_test(halo_3d_4ranks_all 4 0 ARGS halo --dims 3 --grid 6,5,7 --halo 2 --dtype float --strategy all --steps 4 --warmup 1 --validate --out OUT)
gmb_mpi_test(halo_3d_4ranks_strong 4 0 STATUS ok ARGS halo --dims 3 --grid 13,11,9 --mode strong --strategy direct --steps 4 --warmup 1 --validate --out OUT)
gmb_mpi_test(halo_2d_4ranks_strong_periodic 4 0 STATUS ok ARGS halo --dims 2 --grid 15,13 --mode strong --periodic --strategy overlap --halo 3 --steps 4 --warmup 1 --validate --out OUT)
gmb_mpi_test(halo_json_stdout 2 0 STDERR "^$" ARGS halo --dims 2 --grid 8,8 --steps 3 --warmup 1 --format json)

# Bad input: a clear message, exit status 2.
gmb_mpi_test(halo_bad_dims 1 2 STDERR "bad --dims '4' \\(accepted: 2, 3\\)" ARGS halo --dims 4 --out OUT)
gmb_mpi_test(halo_grid_not_matching_dims 1 2 STDERR "--grid has 2 extents but --dims 3 needs 3" ARGS halo --dims 3 --grid 8,8 --out OUT)
gmb_mpi_test(halo_bad_grid 1 2 STDERR "bad grid '8,x'" ARGS halo --dims 2 --grid 8,x --out OUT)
gmb_mpi_test(halo_wider_than_grid 2 2 STDERR "--halo 5 is wider than the grid" ARGS halo --dims 2 --grid 8,4 --halo 5 --out OUT)
gmb_mpi_test(halo_wider_than_strong_share 4 2 STDERR "--halo 3 is wider than the grid: along x a rank has 2 interior cells" ARGS halo --dims 2 --grid 5,40 --mode strong --halo 3 --out OUT)
gmb_mpi_test(halo_unknown_strategy 1 2 STDERR "strategy.*'bogus'" ARGS halo --strategy bogus --out OUT)
gmb_mpi_test(halo_bad_mode 1 2 STDERR "scaling mode.*'medium'" ARGS halo --mode medium --out OUT)
# Refused configurations: a result with status unsupported and the reason, exit 3.
gmb_mpi_test(halo_device_unsupported 2 3 STATUS unsupported STDERR "unsupported: (memory kind 'device' is not available|a device field is updated on the GPU|refusing to hand device memory)" ARGS halo --mem device --dims 2 --grid 8,8 --steps 2 --out OUT)
gmb_mpi_test(halo_pipelined_host_refused 2 3 STATUS unsupported STDERR "unsupported: pipelined overlaps GPU packing" ARGS halo --strategy pipelined --dims 2 --grid 8,8 --steps 2 --out OUT)
