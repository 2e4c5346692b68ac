#!/usr/bin/env bash
# Installs the system packages swerl builds and runs with, on Debian/Ubuntu.
# libtorch-dev: the C++ core's tensor library (CPU). libopenblas0-pthread: Debian's libtorch
# calls whatever libblas.so.3 points at, and OpenBLAS makes its matmuls ~25x faster than the
# reference BLAS. cmake and g++ build the addon; ccache caches its objects, so that a rebuild of
# the same sources (npm ci, then the packed package's install in test/package) is quick.
# libgloo-dev: the headers c10d's Gloo process group (data parallelism) compiles against.
# curl and xz-utils: scripts/check-torch2.sh fetches libtorch 2.x headers to compile against.
# python3 and python3-pytest run the Python repositories' tests that decide rewards.
set -euo pipefail

packages=(libtorch-dev curl xz-utils libopenblas0-pthread libgloo-dev cmake g++ make ccache python3 python3-pytest python3-simplejson python3-tz git bubblewrap podman runc tar procps chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "swerl: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Make sure libblas.so.3 resolves to OpenBLAS (the alternatives system picks it when installed).
blas=$(readlink -f "/usr/lib/$(gcc -print-multiarch)/libblas.so.3" 2>/dev/null || true)
case "$blas" in
  *openblas*) ;;
  *) echo "swerl: warning: libblas.so.3 is $blas, not OpenBLAS; CPU matmuls will be slow" >&2 ;;
esac
