/**
 * relativeWeightChange on checkpoints written here with fresh random weights in each float
 * dtype: against a float64 sum over the values the bytes were made from (each exactly
 * representable in its dtype), and refusing checkpoints of different models, naming the tensor.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';

import t from 'tap';

import { relativeWeightChange } from '../../../lib/model/weight-change.js';
import { writeSafetensorsCheckpoint, type SafetensorsDtype } from '../../../lib/model/safetensors.js';
import { Rng, testSeed } from '../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

/** A random value exactly representable in `dtype`. */
function representable(dtype: SafetensorsDtype): number {
  const x = Math.fround(rng.normal() * 0.05);
  if (dtype === 'BF16') return new Float32Array(new Uint32Array([new Uint32Array(new Float32Array([x]).buffer)[0]! & 0xffff0000]).buffer)[0]!;
  if (dtype === 'F16') return (rng.int(4095) - 2047) / 1024; // 11 significant bits at most
  return x;
}

/** `value`'s bytes in `dtype`, little-endian. */
function encode(values: number[], dtype: SafetensorsDtype): Uint8Array {
  const width = { F64: 8, F32: 4, BF16: 2, F16: 2 }[dtype as 'F64']!;
  const view = new DataView(new ArrayBuffer(values.length * width));
  values.forEach((v, i) => {
    if (dtype === 'F64') view.setFloat64(8 * i, v, true);
    else if (dtype === 'F32') view.setFloat32(4 * i, v, true);
    else if (dtype === 'BF16') view.setUint16(2 * i, new Uint32Array(new Float32Array([v]).buffer)[0]! >>> 16, true);
    else {
      // binary16 of a normal or zero value: sign, 5-bit exponent (bias 15), 10-bit fraction.
      const sign = v < 0 ? 0x8000 : 0;
      const a = Math.abs(v);
      const exponent = a === 0 ? -15 : Math.floor(Math.log2(a));
      const bits = a === 0 ? 0 : ((exponent + 15) << 10) | Math.round((a / 2 ** exponent - 1) * 1024);
      view.setUint16(2 * i, sign | bits, true);
    }
  });
  return new Uint8Array(view.buffer);
}

type Weights = Record<string, { shape: number[]; values: number[] }>;

async function write(dir: string, weights: Weights, dtype: SafetensorsDtype): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const tensors = Object.entries(weights).map(([name, w]) => ({ name, dtype, shape: w.shape }));
  await writeSafetensorsCheckpoint(dir, tensors, (name) => encode(weights[name]!.values, dtype));
  return dir;
}

const random = (shapes: Record<string, number[]>, dtype: SafetensorsDtype): Weights =>
  Object.fromEntries(Object.entries(shapes).map(([name, shape]) => [name, { shape, values: Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => representable(dtype)) }]));

for (const dtype of ['F32', 'BF16', 'F16', 'F64'] as const) {
  t.test(`${dtype}: ||B - A|| / ||A|| as float64 sums over the source values`, async (t) => {
    const shapes = { 'model.embed_tokens.weight': [1 + rng.int(40), 8], 'model.norm.weight': [8], 'lm_head.weight': [3, 1 + rng.int(30)] };
    const a = random(shapes, dtype);
    // B: A with a random share of its entries moved, so the change is neither 0 nor everything.
    const b: Weights = Object.fromEntries(Object.entries(a).map(([name, w]) => [name, { shape: w.shape, values: w.values.map((v) => (rng.uniform() < 0.3 ? representable(dtype) : v)) }]));
    const dir = t.testdir();
    const [from, to] = await Promise.all([write(path.join(dir, 'a'), a, dtype), write(path.join(dir, 'b'), b, dtype)]);
    let change = 0, norm = 0;
    for (const name of Object.keys(a)) a[name]!.values.forEach((v, i) => ((change += (b[name]!.values[i]! - v) ** 2), (norm += v * v)));
    const expected = Math.sqrt(change / norm);
    const got = await relativeWeightChange(from, to);
    t.ok(expected > 0 && Math.abs(got - expected) <= 1e-12 * expected, `${got} = ${expected}`);
    t.equal(await relativeWeightChange(from, from), 0, 'a checkpoint against itself: 0');
  });
}

t.test('checkpoints of different models are refused, naming the tensor', async (t) => {
  const dir = t.testdir();
  const a = await write(path.join(dir, 'a'), random({ x: [4], y: [2, 2] }, 'F32'), 'F32');
  const fewer = await write(path.join(dir, 'fewer'), random({ x: [4] }, 'F32'), 'F32');
  const reshaped = await write(path.join(dir, 'reshaped'), random({ x: [4], y: [4] }, 'F32'), 'F32');
  await t.rejects(relativeWeightChange(a, fewer), { code: 'ERR_SWERL_CHECKPOINT', message: /hold different tensors \(y in one only\)/ });
  await t.rejects(relativeWeightChange(a, reshaped), { code: 'ERR_SWERL_CHECKPOINT', message: /tensor "y" is 2x2 in .* and 4 in / });
  mkdirSync(path.join(dir, 'ints'));
  await writeSafetensorsCheckpoint(path.join(dir, 'ints'), [{ name: 'x', dtype: 'I32', shape: [4] }, { name: 'y', dtype: 'F32', shape: [2, 2] }], (name) => new Uint8Array(16).fill(name === 'x' ? 1 : 0));
  await t.rejects(relativeWeightChange(path.join(dir, 'ints'), path.join(dir, 'ints')), { message: /tensor "x" is I32: weights are compared as floats/ });
});
