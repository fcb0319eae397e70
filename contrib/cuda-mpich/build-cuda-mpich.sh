#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds a CUDA-aware MPICH (ch4:ucx, yaksa's CUDA backend) into a prefix, from a source tarball or directory
# (e.g. Debian bookworm's mpich_4.0.2.orig.tar.xz: `apt-get source --download-only mpich`), with the patches that
# CUDA 13 and a machine without a system libtool need (patches in this folder, applied in name order):
#   yaksa-cuda13-compute-mode.patch   cudaDeviceProp.computeMode is gone in CUDA 13: ask cudaDevAttrComputeMode
#   yaksa-cudalt-libtool-object.patch yaksa's CUDA objects name libtool in their .lo header even when no `libtool`
#                                     is on PATH (else: "... .lo is not a valid libtool object" when linking)
#
#   contrib/cuda-mpich/build-cuda-mpich.sh SOURCE PREFIX [--cuda DIR] [--ucx DIR] [--sm 90] [--jobs N]
#
# SOURCE: mpich-X.Y.Z.tar.{gz,xz} or an unpacked source directory (built out of tree; it is not modified unless
# the patches are not applied yet). PREFIX: where it installs (bin/mpicc, bin/mpiexec, lib/libmpi.so). --cuda:
# the CUDA toolkit (default: the directory above `nvcc` on PATH). --ucx: a UCX built with CUDA (cuda_copy,
# cuda_ipc); default: MPICH's embedded UCX, which then needs CUDA found at its configure. --sm: the GPU
# architectures yaksa compiles its kernels for (default 90; "all" takes much longer). Logs go to PREFIX.build/.
# A machine without GPU can build it (only the CUDA toolkit is needed: 2 cores took about 25 min); the installation
# then moves to the GPU host at the same PREFIX (its wrappers and run path name it), e.g. after
# `strip --strip-unneeded PREFIX/lib/*.so.*`: `tar cJf mpich-cuda.tar.xz -C $(dirname PREFIX) $(basename PREFIX)`
# (about 12 MB for sm_90). The GPU host needs the same UCX (--ucx) at the same place, and hwloc.
# Only shared libraries are built (libtool would compile every source twice for a static libmpi.a; gmb-bench links
# the shared one). Then: `gmb-bench doctor` against it (cmake -DMPI_C_COMPILER=PREFIX/bin/mpicc), with MPIR_CVAR_ENABLE_GPU=1.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "build-cuda-mpich: error: $*" >&2; exit 2; }
[[ $# -ge 2 ]] || die "usage: $0 SOURCE PREFIX [--cuda DIR] [--ucx DIR] [--sm 90] [--jobs N]"
source_arg=$1 prefix=$2; shift 2
cuda="" ucx="" sm=90 jobs=$(nproc)
while [[ $# -gt 0 ]]; do
  case $1 in
    --cuda) cuda=$2; shift 2 ;;
    --ucx) ucx=$2; shift 2 ;;
    --sm) sm=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) die "unknown option '$1' (accepted: --cuda DIR, --ucx DIR, --sm LIST, --jobs N)" ;;
  esac
done
if [[ -z $cuda ]]; then
  command -v nvcc >/dev/null || die "no nvcc on PATH: give --cuda DIR (the CUDA toolkit)"
  cuda="$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)"
fi
[[ -x $cuda/bin/nvcc ]] || die "$cuda/bin/nvcc not found: --cuda must name a CUDA toolkit"
[[ -z $ucx || -e $ucx/include/ucp/api/ucp.h ]] || die "$ucx/include/ucp/api/ucp.h not found: --ucx must name a UCX installation"
[[ -e $prefix/bin/mpicc ]] && die "$prefix already holds an MPI (bin/mpicc): choose an empty prefix"

work="$prefix.build"
mkdir -p "$work"
log() { echo "build-cuda-mpich: $*" >&2; }

# 1. the source, unpacked once
if [[ -d $source_arg ]]; then
  src="$(cd "$source_arg" && pwd)"
else
  [[ -f $source_arg ]] || die "$source_arg: no such file or directory"
  tar -xf "$source_arg" -C "$work"
  src="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'mpich-*' | head -1)"
  [[ -n $src ]] || die "$source_arg holds no mpich-* directory"
fi
[[ -x $src/configure ]] || die "$src has no configure script: not an MPICH release source"

# 2. the patches CUDA 13 needs (skipped where already applied)
for p in "$here"/*.patch; do
  if patch -d "$src" -p1 --dry-run --forward -s < "$p" >/dev/null 2>&1; then
    log "applying $(basename "$p")"
    patch -d "$src" -p1 --forward -s < "$p"
  else
    log "$(basename "$p"): already applied or not applicable to this source (left as is)"
  fi
done

# 3. configure (out of tree), build, install
mkdir -p "$work/obj" && cd "$work/obj"
options=(--prefix="$prefix" --with-device=ch4:ucx --with-cuda="$cuda" --with-cuda-sm="$sm" --with-pm=hydra
         --disable-fortran --enable-fast=O2 --disable-static)
# The UCX given is linked with a run path: without it the loader takes whatever libucp.so.0 comes first, e.g. a
# distribution's UCX without CUDA transports, and device buffers then crash in its shared-memory transport.
[[ -n $ucx ]] && options+=(--with-ucx="$ucx" LDFLAGS="-Wl,-rpath,$ucx/lib")
log "configure ${options[*]} (log: $work/configure.log)"
"$src/configure" "${options[@]}" > "$work/configure.log" 2>&1 || { tail -30 "$work/configure.log" >&2; die "configure failed ($work/configure.log)"; }
log "make -j $jobs (log: $work/make.log)"
make -j "$jobs" > "$work/make.log" 2>&1 || { grep -E "error|Error" "$work/make.log" | head -20 >&2; die "make failed ($work/make.log)"; }
make install > "$work/install.log" 2>&1 || { tail -20 "$work/install.log" >&2; die "make install failed ($work/install.log)"; }
# mpichversion loads libmpi, which needs the NVIDIA driver's libcuda.so.1: where the build ran without a driver (a
# build host without GPU) the installation is complete but cannot run there
if ! version="$("$prefix/bin/mpichversion" 2>&1)"; then
  log "mpichversion does not run here (${version%%$'\n'*}): expected on a machine without the NVIDIA driver"
else
  sed 's/^/build-cuda-mpich: /' <<< "$version" >&2
fi
log "installed in $prefix; check it: cmake -DMPI_C_COMPILER=$prefix/bin/mpicc ... && $prefix/bin/mpiexec -n 2 -genv MPIR_CVAR_ENABLE_GPU 1 gmb-bench doctor"
