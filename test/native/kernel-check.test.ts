// swerl_kernel_check (native/tools/kernel_check.cc): the fused loss, advantages and token
// weights against float64 references with poisoned outputs, deterministic reruns and extreme
// logits, on the CPU twin here and on the CUDA kernels where the addon has CUDA. The same
// binary runs on GPU machines without Node (scripts/gpu-check.sh).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import t from 'tap';

import { native, packageRoot } from '../../lib/native.js';
import { testSeed } from '../reference/random.js';

const binary = join(packageRoot(), 'build', 'swerl_kernel_check');
const seed = testSeed();

for (const device of ['cpu', 'cuda'] as const) {
  const skip = device === 'cuda' && !native().buildInfo().cuda ? 'the addon has no CUDA' : false;
  t.test(`swerl_kernel_check --device ${device}`, { skip }, async (t) => {
    t.ok(existsSync(binary), `${binary} is built with the addon`);
    // Block 16: the packed-attention check's 90-token sequence takes the blockwise path (libtorch 1.x).
    const env = { ...process.env, SWERL_ATTENTION_BLOCK: '16' };
    const run = spawnSync(binary, ['--device', device, '--seed', String(seed)], { encoding: 'utf8', timeout: 240_000, env });
    const lines = run.stdout.split('\n');
    t.comment(lines[0] ?? '');
    for (const line of lines) {
      if (line.startsWith('ok - ') || line.startsWith('not ok - ')) t.ok(line.startsWith('ok'), line.replace(/^(not )?ok - /, ''));
    }
    t.match(run.stdout, /^(\d+) passed, 0 failed$/m, 'the check ends with no failure');
    t.equal(run.status, 0, `exit status (stderr: ${run.stderr.trim()})`);
  });
}
