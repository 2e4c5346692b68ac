#!/usr/bin/env bash
# On a GPU machine (nvcc, and PyTorch with CUDA for python3): builds swerl against PyTorch's
# libtorch with the CUDA kernels and runs, stage by stage:
#   build      with Node and node_modules: the addon and the native tools (build/); without Node:
#              the native tools alone (build-gpu/). Where the machine has no Node, a bundle made
#              here by scripts/gpu-bundle.sh (.gpu, or SWERL_GPU_BUNDLE) brings it, node_modules
#              and dist/; the tests stage also needs tap (a full npm ci)
#   kernels    swerl_kernel_check --device cuda --large (float64 references, poisoned outputs,
#              deterministic reruns, extreme logits, T = 65536 at V = 151936), then --device cpu
#   tests      (Node) the tap tests that need CUDA or transformers: the kernel check, the fused
#              loss on both devices, the policy on CUDA, Hugging Face parity, the NCCL group
#   train      (Node) the FrozenLake demo with model.device 'cuda', then on the same machine's CPU:
#              the median step of each and of its parts (rollouts, update, eval)
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
bundle=${SWERL_GPU_BUNDLE:-.gpu}
if ! command -v node >/dev/null && [ -f "$bundle/node.xz" ]; then
  node_dir=$(mktemp -d)
  xz -dc "$bundle/node.xz" >"$node_dir/node" && chmod +x "$node_dir/node"
  export PATH="$node_dir:$PATH"
  [ -d node_modules ] || tar -xJf "$bundle/node_modules.tar.xz"
  [ -d dist ] || tar -xJf "$bundle/dist.tar.xz"
  [ -f "$bundle/tests.tar.xz" ] && [ ! -d dist-tests ] && tar -xJf "$bundle/tests.tar.xz"
  echo "node $(node --version) from $bundle"
fi
with_node=false
command -v node >/dev/null && [ -d node_modules/node-api-headers ] && [ -d node_modules/node-addon-api ] && with_node=true
bin=build-gpu
$with_node && bin=build

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"

if has build; then
  stamp build
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  # The addon as cmake-js configures it (its headers are npm packages: nothing to download).
  addon=()
  $with_node && addon=("-DCMAKE_JS_INC=$PWD/node_modules/node-api-headers/include;$PWD/node_modules/node-addon-api"
    "-DCMAKE_LIBRARY_OUTPUT_DIRECTORY=$PWD/$bin/Release")
  cmake -S . -B "$bin" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSWERL_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90a "${addon[@]}" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
  if ! cmake --build "$bin" -j "$(nproc)" >>"$out/build.log" 2>&1; then
    # Every error at once, not only the first target's.
    cmake --build "$bin" -j "$(nproc)" -- -k 0 >>"$out/build.log" 2>&1
    grep -E "error|FAILED" "$out/build.log" | head -60
    exit 1
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

cuda_tests="test/native/kernel-check.test test/lib/math/fused-linear-policy-loss-devices.test
  test/lib/model/native-policy.test test/lib/model/hf-parity.test test/lib/model/process-group.test"
if has tests && $with_node && [ -d node_modules/@tapjs/typescript ] && [ -d node_modules/typescript ]; then
  stamp tests
  node node_modules/.bin/tap --disable-coverage --reporter=tap --timeout=600 $(printf '%s.ts ' $cuda_tests) \
    >"$out/tests-cuda.tap" 2>&1 || status=1
  grep -E "^# \{|not ok|# SKIP|on cuda|on cpu, float32|full forward" "$out/tests-cuda.tap" | head -60
elif has tests && $with_node && [ -d node_modules/tap ] && [ -d dist-tests/test ]; then
  # The bundle's way: the tests compiled to JavaScript (dist-tests/), run by Node with tap's
  # runtime and no TypeScript loader. Each file prints TAP and its own totals.
  stamp "tests (compiled)"
  : >"$out/tests-cuda.tap"
  for t in $cuda_tests; do
    echo "# file $t" >>"$out/tests-cuda.tap"
    CI=true timeout 900 node "dist-tests/$t.js" >>"$out/tests-cuda.tap" 2>&1 || { status=1; echo "not ok - $t exited non-zero" >>"$out/tests-cuda.tap"; }
  done
  grep -E "^# file|^# \{|^not ok|# SKIP|on cuda|on cpu, float32|full forward" "$out/tests-cuda.tap" | head -60
elif has tests && $with_node; then
  stamp "tests skipped: no tap with its TypeScript loader (npm ci) and no compiled tests (the bundle's tests.tar.xz)"
fi

if has train && $with_node; then
  stamp train
  # SWERL_GPU_FL_STEPS shortens the runs (the median step is what compares); SWERL_GPU_FL_RUNS
  # picks them: cuda, cuda-together (next turns prefilled together, SWERL_PREFIX_EXTENSIONS), cpu.
  steps=${SWERL_GPU_FL_STEPS:-45}
  config=$(mktemp --suffix=.json)
  node -e 'const fs = require("fs"); const c = JSON.parse(fs.readFileSync("examples/frozenlake.json", "utf8"));
    c.model.device = "cuda"; fs.writeFileSync(process.argv[1], JSON.stringify(c));' "$config"
  fl_runs=${SWERL_GPU_FL_RUNS:-cuda cpu}
  for name in $fl_runs; do
    rm -rf "runs/frozenlake-$name"
    args=(--out "runs/frozenlake-$name" --steps "$steps")
    [ "$name" != cpu ] && args+=(--config "$config")
    extensions=
    [ "$name" = cuda-together ] && extensions=together
    SWERL_PREFIX_EXTENSIONS=$extensions node dist/examples/frozenlake-demo.js "${args[@]}" >"$out/frozenlake-$name.log" 2>&1 || status=1
    tail -3 "$out/frozenlake-$name.log"
    cp "runs/frozenlake-$name/demo.json" "$out/frozenlake-$name.json" 2>/dev/null || true
    cp runs/frozenlake-$name/*/metrics.jsonl "$out/frozenlake-$name.metrics.jsonl" 2>/dev/null || true
  done
  # A step's seconds (rollouts, update and the greedy eval after it) from each run's curve, and
  # the medians of its parts from the run's metrics.
  node -e 'const fs = require("fs");
    const median = (xs) => { const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b); return s.length ? s[s.length >> 1] : NaN; };
    for (const name of process.argv.slice(2)) {
      const file = `${process.argv[1]}/frozenlake-${name}.json`;
      if (!fs.existsSync(file)) { console.log(`${name}: no demo.json`); continue; }
      const curve = JSON.parse(fs.readFileSync(file, "utf8")).runs[0].curve;
      const steps = curve.slice(1).map((p, i) => p.seconds - curve[i].seconds);
      const rows = fs.readFileSync(`${process.argv[1]}/frozenlake-${name}.metrics.jsonl`, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((r) => r.time);
      const part = (f) => median(rows.map(f)).toFixed(2);
      console.log(`${name}: before step 1 ${curve[0].seconds.toFixed(1)} s, median step ${median(steps).toFixed(2)} s` +
        ` (rollouts ${part((r) => r.time.rolloutSeconds)}, update ${part((r) => r.time.trainSeconds)}, eval ${part((r) => r.eval?.seconds)}),` +
        ` greedy success ${curve.at(-1).success} after ${curve.length - 1} steps`);
    }' "$out" $fl_runs | tee "$out/frozenlake-steps.txt"
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
