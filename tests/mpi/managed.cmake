# SPDX-License-Identifier: BSD-3-Clause
# Managed (unified) memory placements. A host-only build has no managed memory: every placement is
# refused with the reason (status unsupported, exit 3), for point to point, OMB's letters and
# collectives; um still measures its host-host reference. Bad placements are usage errors in any build.
if(NOT GMB_WITH_CUDA)
  set(GMB_NO_MANAGED "unsupported: memory kind 'managed' is not available: this gmb-bench was built without CUDA")
  gmb_mpi_test(latency_managed_unsupported 2 3 STATUS unsupported STDERR "${GMB_NO_MANAGED}" ARGS latency --send managed:device --recv managed:host --sizes 1,1K --out OUT)
  gmb_mpi_test(bw_managed_omb_letters_unsupported 2 3 STATUS unsupported STDERR "${GMB_NO_MANAGED}" ARGS bw MD MH --sizes 1K --out OUT)
  gmb_mpi_test(bibw_managed_unsupported 2 3 STATUS unsupported STDERR "${GMB_NO_MANAGED}" ARGS bibw --send managed:host --recv managed:host --sizes 1K --out OUT)
  gmb_mpi_test(coll_managed_unsupported 2 3 STATUS unsupported STDERR "${GMB_NO_MANAGED}" ARGS coll bcast,allreduce --mem managed:device --sizes 1K --out OUT)
  # um: the placement is refused, the host-host reference runs, the device-device one is refused.
  gmb_mpi_test(um_host_only 2 3 STDERR "${GMB_NO_MANAGED}" ARGS um --send managed:host --recv managed:device --sizes 8,1K --iters 20 --warmup 2 --validate --out OUT)
  # The memory asked for runs, and so does the host-host reference; the device-device reference is refused
  # with the reason, and a run with a refused point exits 3.
  gmb_mpi_test(latency_references_device_refused 2 3
               STDOUT "(?s)# reference: host - host\n1 B .*ok \\(validation passed\\).*# reference: device - device\n1 B +- .*unsupported: memory kind 'device' is not available"
               ARGS latency --references --sizes 1 --iters 5 --warmup 1 --validate --out OUT)
endif()
gmb_mpi_test(managed_bad_placement 2 2 STDERR "bad placement 'gpu' in memory 'managed:gpu' \\(accepted: managed:host, managed:device, or managed alone\\)" ARGS latency --send managed:gpu --out OUT)
gmb_mpi_test(placement_on_host_memory 2 2 STDERR "memory 'host:device': a placement \\(:host, :device\\) applies to memory that migrates \\(managed\\), not to 'host'" ARGS bw --recv host:device --out OUT)
gmb_mpi_test(managed_bad_letters 2 2 STDERR "unknown buffer letter 'MX'" ARGS latency MX MH --out OUT)
gmb_mpi_test(coll_placement_on_pinned 2 2 STDERR "memory 'pinned:host': a placement" ARGS coll allreduce --mem-root pinned:host --out OUT)
gmb_mpi_test(nbc_managed_placement 2 2 STDERR "managed placements \\(KIND:host, KIND:device\\) are measured by coll; nbc takes the kind alone" ARGS nbc allreduce --mem managed:device --out OUT)
