#!/usr/bin/env bash
# On a GPU machine (nvcc, and PyTorch with CUDA for python3): builds swerl against PyTorch's
# libtorch with the CUDA kernels and runs, stage by stage:
#   build      with Node and node_modules: the addon and the native tools through cmake-js (build/);
#              without Node: the native tools alone with plain CMake (build-gpu/)
#   kernels    swerl_kernel_check --device cuda --large (float64 references, poisoned outputs,
#              deterministic reruns, extreme logits, T = 65536 at V = 151936), then --device cpu
#   tests      (Node) the tap tests that need CUDA or transformers: the kernel check, the fused
#              loss on both devices, the policy on CUDA, Hugging Face parity, the NCCL group
#   train      (Node) the FrozenLake demo with model.device 'cuda'
#   profile    swerl_policy_bench --profile: the Qwen3-0.6B-shaped policy's train steps (4 x 4096,
#              1 x 16384) and decode steps (batch 1, 16, 64) by phase, then transformers' generate
#              on the same shape and card (bench/hf_generate.py) as the baseline
#   bench      swerl_loss_bench over the issue's shapes; (Node) bench:policy-cuda
#   anchor     PyTorch's own losses on the same shapes (eager, torch.compile, chunked, GEMMs), when
#              SWERL_LOSS_ANCHOR names ../shared/tools/gpu_loss_anchor.py or a copy of it
# SWERL_GPU_STAGES picks stages (default: all, in this order). Logs and JSON go to $OUT if set
# (the device tool's output folder), else bench/results. Extra arguments go to swerl_loss_bench.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/results}
stages=" ${SWERL_GPU_STAGES:-build kernels tests train profile bench anchor} "
mkdir -p "$out"
status=0
has() { [[ "$stages" == *" $1 "* ]]; }
stamp() { echo "=== $* ($(date +%T))"; }
with_node=false
command -v node >/dev/null && [ -d node_modules/cmake-js ] && with_node=true
bin=build-gpu
$with_node && bin=build

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"

if has build; then
  stamp build
  if $with_node; then
    if ! node node_modules/cmake-js/bin/cmake-js compile --parallel "$(nproc)" --CDSWERL_CUDA=ON \
      --CDCMAKE_CUDA_ARCHITECTURES=90a >"$out/build.log" 2>&1; then
      # Every error at once, not only the first target's.
      cmake --build "$bin" -- -k 0 >>"$out/build.log" 2>&1
      grep -E "error|FAILED" "$out/build.log" | head -60
      exit 1
    fi
  else
    generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    cmake -S . -B "$bin" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSWERL_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90a >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    cmake --build "$bin" -j "$(nproc)" >>"$out/build.log" 2>&1 || { tail -60 "$out/build.log"; exit 1; }
  fi
  grep -E "swerl: |Torch" "$out/build.log" | head -8
fi

if has kernels; then
  stamp kernels
  "$bin/swerl_kernel_check" --device cuda --large >"$out/kernel-check-cuda.log" 2>&1 || status=1
  grep -v "^ok - " "$out/kernel-check-cuda.log" | tail -40
  "$bin/swerl_kernel_check" --device cpu >"$out/kernel-check-cpu.log" 2>&1 || status=1
  tail -1 "$out/kernel-check-cpu.log"
fi

if has tests && $with_node; then
  stamp tests
  node node_modules/.bin/tap --disable-coverage --reporter=tap --timeout=600 \
    test/native/kernel-check.test.ts test/lib/math/fused-linear-policy-loss-devices.test.ts \
    test/lib/model/native-policy.test.ts test/lib/model/hf-parity.test.ts test/lib/model/process-group.test.ts \
    >"$out/tests-cuda.tap" 2>&1 || status=1
  grep -E "^# \{|not ok|# SKIP|on cuda|on cpu, float32|full forward" "$out/tests-cuda.tap" | head -60
fi

if has train && $with_node; then
  stamp train
  config=$(mktemp --suffix=.json)
  node -e 'const fs = require("fs"); const c = JSON.parse(fs.readFileSync("examples/frozenlake.json", "utf8"));
    c.model.device = "cuda"; fs.writeFileSync(process.argv[1], JSON.stringify(c));' "$config"
  rm -rf runs/frozenlake-cuda
  node dist/examples/frozenlake-demo.js --config "$config" --out runs/frozenlake-cuda >"$out/frozenlake-cuda.log" 2>&1 || status=1
  tail -15 "$out/frozenlake-cuda.log"
  cp runs/frozenlake-cuda/demo.json "$out/frozenlake-cuda.json" 2>/dev/null || true
fi

if has profile; then
  stamp profile
  "$bin/swerl_policy_bench" --profile --new 64 --out "$out/policy-profile-cuda.json" 2>&1 | tee "$out/policy-profile-cuda.txt" || status=1
  python3 bench/hf_generate.py "$out/hf-generate-cuda.json" --batches 1,16,64 --prompt 128 --new 64 --repeats 3 || status=1
fi

if has bench; then
  stamp bench
  "$bin/swerl_loss_bench" --out "$out/loss-cuda.json" "$@" 2>&1 | tee "$out/loss-cuda.txt" || status=1
  # The same card with the element-wise passes' scalar loops (the first version): what 16-byte
  # loads bought, measured side by side.
  SWERL_LOSS_SCALAR_PASSES=1 "$bin/swerl_loss_bench" --no-eager --hidden 1024,4096 --tokens 16384 \
    --out "$out/loss-cuda-scalar.json" 2>&1 | tee "$out/loss-cuda-scalar.txt" || status=1
  if $with_node; then
    # SWERL_POLICY_CUDA_ARGS: extra flags (e.g. --no-hf when the profile stage ran the baseline).
    node dist/bench/policy-cuda.js --out "$out/policy-cuda.json" ${SWERL_POLICY_CUDA_ARGS:-} 2>&1 | tee "$out/policy-cuda.txt" || status=1
  fi
fi

if has anchor && [ -n "${SWERL_LOSS_ANCHOR:-}" ]; then
  stamp anchor
  OUT="$out" python3 "$SWERL_LOSS_ANCHOR" ${SWERL_ANCHOR_SHAPES:-} 2>&1 | tee "$out/loss-anchor.txt" || status=1
fi
stamp done
exit $status
