#!/usr/bin/env bash
# Compile-only check of every native source against libtorch 2.x's headers, as a GPU build sees
# them (CUDA and NCCL on, no Gloo: PyTorch's wheels ship no Gloo headers). The local build and
# CI use Debian bookworm's libtorch 1.13, so the `TORCH_VERSION_MAJOR >= 2` paths (SDPA, ...) and
# any name 2.x moved (the first GPU run found at::NoGradGuard gone) otherwise meet a compiler
# only on a GPU machine, where device time is scarce.
#
# The headers are Debian trixie's libtorch-dev (2.6), unpacked, never installed, into
# $SWERL_TORCH2_HEADERS (default ~/.cache/swerl/libtorch2-headers). cuBLAS, cuSPARSE, cuSOLVER
# and NCCL are declared by .ci/cuda-stubs (their README says why); nothing here links or runs.
set -euo pipefail
cd "$(dirname "$0")/.."

root=${SWERL_TORCH2_HEADERS:-$HOME/.cache/swerl/libtorch2-headers}
include=$root/usr/include
if [ ! -f "$include/torch/csrc/api/include/torch/version.h" ]; then
  mirror=${SWERL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  index=$mirror/dists/trixie/main/binary-amd64/Packages.xz
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  deb=""
  if curl -fsSL -o "$tmp/Packages.xz" "$index"; then
    deb=$(xz -dc "$tmp/Packages.xz" | awk '/^Package: libtorch-dev$/ {p = 1} p && !done && /^Filename:/ {print $2; done = 1}')
  fi
  if [ -z "$deb" ]; then
    echo "check-torch2: could not find libtorch-dev in $index (set SWERL_DEBIAN_MIRROR to a reachable Debian mirror, or SWERL_TORCH2_HEADERS to an unpacked libtorch-dev 2.x)" >&2
    exit 1
  fi
  curl -fsSL -o "$tmp/libtorch-dev.deb" "$mirror/$deb"
  mkdir -p "$root.partial"
  dpkg-deb -x "$tmp/libtorch-dev.deb" "$root.partial"
  rm -rf "$root"
  mv "$root.partial" "$root"
fi
version=$(awk '/define TORCH_VERSION_(MAJOR|MINOR|PATCH) / {v = v (v ? "." : "") $3} END {print v}' \
  "$include/torch/csrc/api/include/torch/version.h")
cuda_include=${CUDA_HOME:-/usr/local/cuda}/include
[ -f "$cuda_include/cuda_runtime_api.h" ] || { echo "check-torch2: no CUDA headers in $cuda_include (install the CUDA toolkit or set CUDA_HOME)" >&2; exit 1; }

shopt -s nullglob
sources=(native/src/*/*.cc native/tools/*.cc)
echo "check-torch2: ${#sources[@]} sources against libtorch $version headers ($include)"
flags=(-std=gnu++17 -Wall -Wno-unused-parameter
  -DSWERL_WITH_CUDA=1 -DSWERL_WITH_NCCL=1 -DUSE_C10D_NCCL=1
  '-DSWERL_TORCH_SOURCE="check-torch2"' '-DSWERL_TORCH_DIR="none"' '-DSWERL_TORCH_LIB_DIR="none"'
  -DNAPI_VERSION=8 -DNODE_ADDON_API_DISABLE_DEPRECATED -DNAPI_CPP_EXCEPTIONS
  -I.ci/cuda-stubs -Inative/src -isystem "$include" -isystem "$include/torch/csrc/api/include" -I"$cuda_include"
  -Inode_modules/node-addon-api -I"$(dirname "$(dirname "$(command -v node)")")/include/node")
# Parsing libtorch's headers is most of each file's time (~25 s of ~26 on a 2-core machine):
# they are parsed once into a precompiled header that every file includes first (~6 s a file
# after). Only the ATen and autograd headers every source uses anyway go in it, so a source
# that misses a CUDA or c10d include still fails here as it would on a GPU machine.
pch_dir=$(mktemp -d)
trap 'rm -rf "$pch_dir" ${tmp:+"$tmp"}' EXIT
printf '#include <%s>\n' ATen/ATen.h torch/csrc/autograd/autograd.h torch/csrc/autograd/custom_function.h > "$pch_dir/torch2.h"
g++ "${flags[@]}" -x c++-header "$pch_dir/torch2.h" -o "$pch_dir/torch2.h.gch"
flags+=(-fsyntax-only -Winvalid-pch -include "$pch_dir/torch2.h")
printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -I{} sh -c 'g++ "$@" {} || { echo "check-torch2: {} does not compile against libtorch '"$version"'" >&2; exit 1; }' g++ "${flags[@]}" || exit 1
echo "check-torch2: every source compiles against libtorch $version"
