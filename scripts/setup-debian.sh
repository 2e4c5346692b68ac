#!/usr/bin/env bash
# Installs the system packages swerl builds and runs with, on Debian/Ubuntu.
# libtorch-dev: the C++ core's tensor library (CPU). libopenblas0-pthread: Debian's libtorch
# calls whatever libblas.so.3 points at, and OpenBLAS makes its matmuls ~25x faster than the
# reference BLAS. cmake and g++ build the addon; ccache caches its objects, so that a rebuild of
# the same sources (npm ci, then the packed package's install in test/package) is quick.
# libgloo-dev: the headers c10d's Gloo process group (data parallelism) compiles against.
# curl and xz-utils: scripts/check-torch2.sh fetches libtorch 2.x headers to compile against.
# python3 and python3-pytest run the Python repositories' tests that decide rewards; the rest of
# the python3-* list is what the vendored real rows' repositories import (test/fixtures/
# swe-real and swe-breadth: marshmallow, sympy, astroid, pydicom, requests; their SOURCES.md),
# and python-is-python3 gives `python`, which sympy's bin/test names in its first line.
set -euo pipefail

python_packages=(python3 python3-pytest python-is-python3 python3-simplejson python3-tz python3-dateutil python3-mpmath
  python3-lazy-object-proxy python3-wrapt python3-typing-extensions python3-numpy python3-urllib3 python3-idna
  python3-chardet python3-charset-normalizer python3-certifi python3-pytest-httpbin python3-httpbin)
packages=(libtorch-dev curl xz-utils libopenblas0-pthread libgloo-dev cmake g++ make ccache "${python_packages[@]}" git patch bubblewrap podman runc tar procps chromium)
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
