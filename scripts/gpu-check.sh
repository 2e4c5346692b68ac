#!/usr/bin/env bash
# On a GPU machine (nvcc, and PyTorch with CUDA for python3; Node is not needed): builds the
# CUDA kernels and the native tools against PyTorch's libtorch, then
#   1. swerl_kernel_check --device cuda --large: the kernels against float64 references
#      (poisoned outputs, deterministic reruns, extreme logits, T = 65536 at V = 151936);
#   2. swerl_kernel_check --device cpu: the CPU twin, same build, for comparison;
#   3. swerl_loss_bench: the issue's shapes, fused vs eager libtorch vs cuBLAS GEMMs.
# Logs and JSON go to $OUT if set (the device tool's output folder), else bench/results.
# Extra arguments go to swerl_loss_bench (e.g. --repeats 10 --hidden 4096 --tokens 16384).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/results}
build=${SWERL_GPU_BUILD:-build-gpu}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSWERL_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90a >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" >>"$out/build.log" 2>&1 || { tail -60 "$out/build.log"; exit 1; }
status=0
"$build/swerl_kernel_check" --device cuda --large | tee "$out/kernel-check-cuda.log" || status=1
"$build/swerl_kernel_check" --device cpu >"$out/kernel-check-cpu.log" || status=1
tail -1 "$out/kernel-check-cpu.log"
"$build/swerl_loss_bench" --out "$out/loss-cuda.json" "$@" | tee "$out/loss-cuda.txt" || status=1
exit $status
