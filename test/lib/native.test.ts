// Loading the addon: what it reports, and what a user reads when loading fails. The failures
// are real: small shared objects built here that miss a library or a symbol, loaded in a
// child process through SWERL_NATIVE_PATH.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { buildInfo } from '../../lib/index.js';
import { blasCoreFor, explainLoadFailure, native, pinBlasToOneThread } from '../../lib/native.js';

const nativeModule = fileURLToPath(new URL('../../lib/native.ts', import.meta.url));

t.test('buildInfo says what libtorch the addon was built against', async (t) => {
  const info = buildInfo();
  t.match(info.torchVersion, /^\d+\.\d+/);
  t.match(info.torchSource, /LIBTORCH|Torch_DIR|PyTorch|Debian|system/);
  t.ok(info.threads >= 1, 'intra-op threads set');
  t.type(info.cuda, 'boolean');
});

t.test("OpenBLAS's thread count: read, set, and pinned to one for runs that spawn sandbox commands", async (t) => {
  const addon = native();
  // Which BLAS libtorch calls is the machine's choice (libblas.so.3); the maps say whether it is OpenBLAS.
  const openblas = /libopenblas/.test(readFileSync('/proc/self/maps', 'utf8'));
  const before = addon.blasThreads();
  if (!openblas) {
    t.equal(before, -1, 'no OpenBLAS loaded: -1');
    t.equal(addon.setBlasThreads(1), -1, 'and nothing to set');
    return;
  }
  t.ok(before >= 1, `OpenBLAS runs ${before} thread(s)`);
  t.equal(addon.setBlasThreads(2), 2, 'set to 2');
  t.equal(addon.blasThreads(), 2, 'read back');
  pinBlasToOneThread();
  t.equal(addon.blasThreads(), 1, 'pinned to one');
  t.throws(() => addon.setBlasThreads(0), { code: 'ERR_SWERL_INVALID_ARG', message: /blas threads must be a number >= 1/ });
  addon.setBlasThreads(before);
  t.equal(addon.blasThreads(), before, 'restored');
});

/** Loads lib/native.ts in a child process with SWERL_NATIVE_PATH=path; returns its stderr. */
function loadIn(path: string): string {
  const script = `import(${JSON.stringify(nativeModule)}).then((m) => m.native()).then(() => console.error('LOADED'), (e) => console.error(e.code + ': ' + e.message))`;
  const child = spawnSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], {
    env: { ...process.env, SWERL_NATIVE_PATH: path },
    encoding: 'utf8',
  });
  return child.stderr;
}

t.test('load failures name what was tried and the fix', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'swerl-load-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));

  const missing = loadIn(join(dir, 'absent.node'));
  t.match(missing, /ERR_SWERL_NATIVE_LOAD: swerl could not load its native addon \(tried SWERL_NATIVE_PATH=/);
  t.match(missing, /not built.*npm rebuild swerl/s);

  // An addon that needs a shared library that is not there (like a removed libtorch).
  writeFileSync(join(dir, 'dep.c'), 'int swerl_dep(void) { return 1; }\n');
  writeFileSync(join(dir, 'addon.c'), 'int swerl_dep(void);\nint use(void) { return swerl_dep(); }\n');
  execFileSync('cc', ['-shared', '-fPIC', '-o', join(dir, 'libswerldep.so'), join(dir, 'dep.c')]);
  execFileSync('cc', ['-shared', '-fPIC', '-o', join(dir, 'needs-lib.node'), join(dir, 'addon.c'), `-L${dir}`, '-lswerldep']);
  rmSync(join(dir, 'libswerldep.so'));
  const noLib = loadIn(join(dir, 'needs-lib.node'));
  t.match(noLib, /libswerldep\.so: cannot open shared object file/);
  t.match(noLib, /A shared library the addon needs is missing: libswerldep\.so.*apt-get install libtorch-dev/s);

  // An addon whose data symbol the loaded libraries do not define (a libtorch ABI mismatch).
  writeFileSync(join(dir, 'abi.c'), 'extern int swerl_missing_symbol;\nint *use(void) { return &swerl_missing_symbol; }\n');
  execFileSync('cc', ['-shared', '-fPIC', '-o', join(dir, 'abi.node'), join(dir, 'abi.c')]);
  const abi = loadIn(join(dir, 'abi.node'));
  t.match(abi, /undefined symbol: swerl_missing_symbol/);
  t.match(abi, /ABI mismatch.*npm rebuild swerl/s);

  t.match(loadIn(join(dir, '..', 'dep.c')), /ERR_SWERL_NATIVE_LOAD/, 'not an addon at all');
});

t.test('explainLoadFailure mentions the libtorch it was built with', async (t) => {
  const e = explainLoadFailure(new Error('libc10.so: cannot open shared object file'), 'here', {
    torchVersion: '2.11.0',
    torchSource: 'PyTorch',
    torchLibDir: '/opt/torch/lib',
  });
  t.equal(e.code, 'ERR_SWERL_NATIVE_LOAD');
  t.match(e.message, /built against libtorch 2\.11\.0 from PyTorch \(\/opt\/torch\/lib\)/);
});

t.test("glibc's allocator is tuned when the addon loads (SWERL_MALLOC_TUNING=0 leaves it alone)", async (t) => {
  if (!readFileSync('/proc/self/maps', 'utf8').includes('libc.so.6')) {
    t.pass('not glibc: nothing to tune');
    return;
  }
  // A child that loads the addon, allocates 8 MB, and reports its brk heap: tuned, the 8 MB come
  // from the heap with the 1 GB top pad; untuned, glibc maps them apart and the heap stays small.
  const child = `
    const root = process.argv[1];
    const addon = require(require('path').join(root, 'node_modules/bindings'))({ bindings: 'swerl_native', module_root: root });
    const held = Buffer.allocUnsafeSlow(8 << 20).fill(1);
    const line = require('fs').readFileSync('/proc/self/maps', 'utf8').split('\\n').find((l) => l.endsWith('[heap]'));
    const [from, to] = line.split(' ')[0].split('-').map((h) => BigInt('0x' + h));
    console.log(JSON.stringify({ tuned: addon.buildInfo().allocatorTuned, heapMB: Number((to - from) >> 20n), held: held.length }));
  `;
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const run = (env: Record<string, string>) => {
    const { MALLOC_MMAP_THRESHOLD_: _a, MALLOC_TRIM_THRESHOLD_: _b, MALLOC_TOP_PAD_: _c, SWERL_MALLOC_TUNING: _d, ...rest } = process.env;
    const out = spawnSync(process.execPath, ['-e', child, root], { env: { ...rest, ...env }, encoding: 'utf8' });
    if (out.status !== 0) throw new Error(out.stderr);
    return JSON.parse(out.stdout) as { tuned: boolean; heapMB: number };
  };
  // When brk cannot grow the heap at that moment, glibc serves the allocation from mmap instead
  // and the heap stays small whatever the tuning (a fresh-clone CI run beside a training job saw
  // a 2 MB heap once): the tuned child gets three tries, and one of them must show the pad.
  const tries = [run({})];
  while (tries.length < 3 && tries[tries.length - 1]!.heapMB < 1024) tries.push(run({}));
  const tuned = tries[tries.length - 1]!;
  const untuned = run({ SWERL_MALLOC_TUNING: '0' });
  t.equal(tuned.tuned, true, 'buildInfo().allocatorTuned by default');
  t.equal(untuned.tuned, false, 'and not with SWERL_MALLOC_TUNING=0');
  t.ok(tuned.heapMB >= 1024, `tuned: the heap grew by the 1 GB top pad (${tries.map((r) => r.heapMB).join(', ')} MB)`);
  t.ok(untuned.heapMB < 512, `untuned: glibc's own behaviour (${untuned.heapMB} MB heap)`);
});

t.test("OpenBLAS's kernels are named by the CPU's instruction sets, before OpenBLAS loads", async (t) => {
  // Flag lines as /proc/cpuinfo writes them (abridged to what decides, in the kernel's order).
  const cpu = (flags: string) => `processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: ${flags}\nbugs\t\t: spectre_v1\n\nprocessor\t: 1\nflags\t\t: ${flags}\n`;
  const emeraldRapids = 'fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 avx512f avx512dq adx avx512ifma avx512cd sha_ni avx512bw avx512vl avx512vbmi avx512_bf16 amx_tile';
  const zen3 = 'fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c bmi1 avx2 bmi2 sha_ni';
  t.equal(blasCoreFor(cpu(emeraldRapids)), 'SkylakeX', 'AVX-512 (F, CD, BW, DQ, VL): SkylakeX');
  t.equal(blasCoreFor(cpu(zen3)), 'Haswell', 'AVX2 and FMA: Haswell');
  t.equal(blasCoreFor(cpu('fpu sse sse2 avx512f avx2')), undefined, 'AVX-512F without BW/DQ/VL and AVX2 without FMA: OpenBLAS chooses');
  t.equal(blasCoreFor(cpu('fpu sse sse2 ssse3 sse4_2 avx')), undefined, 'AVX only: OpenBLAS chooses');
  t.equal(blasCoreFor('processor\t: 0\nFeatures\t: fp asimd evtstrm\n'), undefined, 'an Arm cpuinfo has no flags line');
  t.equal(blasCoreFor(cpu('fpu avx2x fmax')), undefined, 'whole flags only');

  if (!/libopenblas/.test(readFileSync('/proc/self/maps', 'utf8'))) {
    t.equal(native().buildInfo().blasCore, null, 'no OpenBLAS loaded: no kernel set to report');
    return;
  }
  // Child processes with the environment as a user sets it: swerl's choice, the user's, or OpenBLAS's own.
  const report = (env: Record<string, string>) => {
    const { OPENBLAS_CORETYPE: _a, SWERL_BLAS_TUNING: _b, ...rest } = process.env;
    const script = `import(${JSON.stringify(nativeModule)}).then((m) => console.log(JSON.stringify(m.blasKernels())))`;
    const out = spawnSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], { env: { ...rest, ...env }, encoding: 'utf8' });
    if (out.status !== 0) throw new Error(out.stderr);
    return JSON.parse(out.stdout) as { core: string; chosenBy: string };
  };
  const expected = process.platform === 'linux' && process.arch === 'x64' ? blasCoreFor(readFileSync('/proc/cpuinfo', 'utf8')) : undefined;
  const own = report({ SWERL_BLAS_TUNING: '0' });
  t.equal(own.chosenBy, 'openblas', `SWERL_BLAS_TUNING=0: OpenBLAS's own choice (${own.core})`);
  t.same(report({}), expected ? { core: expected, chosenBy: 'swerl' } : own, `by default: ${expected ?? "OpenBLAS's own choice"}`);
  t.same(report({ OPENBLAS_CORETYPE: 'Sandybridge' }), { core: 'Sandybridge', chosenBy: 'environment' }, "a user's OPENBLAS_CORETYPE wins");
});
