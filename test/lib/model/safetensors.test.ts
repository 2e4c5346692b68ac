import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import t, { type Test } from 'tap';

import { SwerlError } from '../../../lib/errors.js';
import {
  dtypeBytes,
  readCheckpointTensors,
  readSafetensorsHeader,
  readTensorBytes,
  writeSafetensorsCheckpoint,
  type SafetensorsDtype,
  type TensorToWrite,
} from '../../../lib/model/safetensors.js';
import { Rng, testSeed } from '../../reference/random.js';

const seed = testSeed();
t.comment(`seed ${seed} (replay with SWERL_TEST_SEED=${seed})`);
const rng = new Rng(seed);

async function tempDir(t: Test): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swerl-safetensors-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The little-endian u64 header length, then the header text, then data bytes. */
function fileBytes(header: string, data: number[] | Uint8Array = []): Uint8Array {
  const json = new TextEncoder().encode(header);
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

function randomBytes(n: number): Uint8Array {
  return Uint8Array.from({ length: n }, () => rng.int(256));
}

function byteLength(tensor: TensorToWrite): number {
  return tensor.shape.reduce((a, b) => a * b, dtypeBytes(tensor.dtype));
}

/** Several dtypes and ranks, a 0-d scalar and an empty tensor; names with digits and dots. */
function randomModel(): { tensors: TensorToWrite[]; bytes: Map<string, Uint8Array> } {
  const dtypes: SafetensorsDtype[] = ['F64', 'F32', 'F16', 'BF16', 'I64', 'I32', 'I16', 'I8', 'U8', 'BOOL'];
  const tensors: TensorToWrite[] = [
    { name: 'model.embed_tokens.weight', dtype: 'BF16', shape: [11, 6] },
    { name: 'scalar', dtype: 'F64', shape: [] },
    { name: 'empty', dtype: 'F32', shape: [0, 4] },
    { name: '7', dtype: 'U8', shape: [3] }, // an integer-like name, which JS objects would reorder
  ];
  for (let i = 0; i < 12; i++) {
    const rank = 1 + rng.int(3);
    tensors.push({
      name: `model.layers.${i}.w${rng.int(100)}`,
      dtype: dtypes[i % dtypes.length]!,
      shape: Array.from({ length: rank }, () => 1 + rng.int(5)),
    });
  }
  const bytes = new Map(tensors.map((tensor) => [tensor.name, randomBytes(byteLength(tensor))]));
  return { tensors, bytes };
}

async function expectCheckpointError(t: Test, promise: Promise<unknown>, mentions: (string | RegExp)[], label: string) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(error instanceof SwerlError, `${label}: throws a SwerlError`);
  if (!(error instanceof SwerlError)) return;
  t.equal(error.code, 'ERR_SWERL_CHECKPOINT', `${label}: code`);
  for (const m of mentions) t.match(error.message, m, `${label}: message names ${m}`);
}

async function checkRoundTrip(t: Test, dir: string, tensors: TensorToWrite[], bytes: Map<string, Uint8Array>) {
  const read = await readCheckpointTensors(dir);
  t.same([...read.keys()].sort(), tensors.map((x) => x.name).sort(), 'every tensor comes back');
  for (const tensor of tensors) {
    const entry = read.get(tensor.name)!;
    t.equal(entry.dtype, tensor.dtype, `${tensor.name} dtype`);
    t.same(entry.shape, tensor.shape, `${tensor.name} shape`);
    t.equal(entry.byteLength, byteLength(tensor), `${tensor.name} byteLength`);
    t.ok(path.isAbsolute(entry.file), `${tensor.name} file is absolute`);
    const back = await readTensorBytes(entry);
    t.equal(back.byteOffset, 0, `${tensor.name} bytes own their buffer`);
    t.ok(Buffer.from(back).equals(bytes.get(tensor.name)!), `${tensor.name} bytes`);
  }
}

t.test('dtype sizes', async (t) => {
  t.same(
    (['F64', 'F32', 'F16', 'BF16', 'I64', 'I32', 'I16', 'I8', 'U8', 'BOOL'] as const).map(dtypeBytes),
    [8, 4, 2, 2, 8, 4, 2, 1, 1, 1],
  );
});

t.test('single-file round trip: dtypes, a scalar, an empty tensor, metadata; bytes fetched lazily in order', async (t) => {
  const dir = await tempDir(t);
  const { tensors, bytes } = randomModel();
  const calls: string[] = [];
  const { files } = await writeSafetensorsCheckpoint(
    dir,
    tensors,
    async (name) => {
      calls.push(name);
      await new Promise((resolve) => setTimeout(resolve, 1));
      return bytes.get(name)!;
    },
    { metadata: { step: '12' } },
  );
  t.same(files, [path.join(dir, 'model.safetensors')]);
  t.same(calls, tensors.map((x) => x.name), 'getBytes once per tensor, in the given order');
  t.same((await fs.readdir(dir)).sort(), ['model.safetensors']);

  const { entries, metadata } = await readSafetensorsHeader(files[0]!);
  t.same(metadata, { format: 'pt', step: '12' });
  t.same(entries.map((e) => e.name), tensors.map((x) => x.name), 'data kept in the given order');
  const scalar = entries.find((e) => e.name === 'scalar')!;
  t.same([scalar.shape, scalar.byteLength], [[], 8], 'a 0-d tensor holds one element');
  t.equal(entries.find((e) => e.name === 'empty')!.byteLength, 0);
  await checkRoundTrip(t, dir, tensors, bytes);
});

t.test('sharded round trip: greedy in-order shards, an oversized tensor alone, HF index', async (t) => {
  const dir = await tempDir(t);
  const { tensors, bytes } = randomModel();
  const big: TensorToWrite = { name: 'lm_head.weight', dtype: 'F32', shape: [40, 5] }; // 800 bytes
  tensors.splice(5, 0, big);
  bytes.set(big.name, randomBytes(800));
  const maxShardBytes = 160;

  // The expected plan, written independently: start a new shard when the next tensor would overflow.
  const expected: string[][] = [[]];
  let size = 0;
  for (const tensor of tensors) {
    if (expected[expected.length - 1]!.length > 0 && size + byteLength(tensor) > maxShardBytes) {
      expected.push([]);
      size = 0;
    }
    expected[expected.length - 1]!.push(tensor.name);
    size += byteLength(tensor);
  }
  t.ok(expected.length >= 3, `${expected.length} shards`);
  t.ok(expected.some((shard) => shard.length === 1 && shard[0] === big.name), 'the oversized tensor is alone');

  const { files } = await writeSafetensorsCheckpoint(dir, tensors, (name) => bytes.get(name)!, { maxShardBytes });
  const n = expected.length;
  const shardNames = expected.map((_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`);
  t.same(files, [...shardNames, 'model.safetensors.index.json'].map((f) => path.join(dir, f)));
  t.same((await fs.readdir(dir)).sort(), [...shardNames, 'model.safetensors.index.json'].sort());

  for (let i = 0; i < n; i++) {
    const { entries, metadata } = await readSafetensorsHeader(path.join(dir, shardNames[i]!));
    t.same(entries.map((e) => e.name), expected[i], `shard ${i + 1} holds its tensors in order`);
    t.same(metadata, { format: 'pt' });
  }

  const indexText = await fs.readFile(path.join(dir, 'model.safetensors.index.json'), 'utf8');
  const index = JSON.parse(indexText);
  t.same(Object.keys(index), ['metadata', 'weight_map']);
  t.equal(index.metadata.total_size, tensors.reduce((a, x) => a + byteLength(x), 0), 'total_size = tensor bytes');
  const weightMap = Object.fromEntries(expected.flatMap((names, i) => names.map((name) => [name, shardNames[i]])));
  t.same(index.weight_map, weightMap);
  const sortedNames = Object.keys(weightMap).sort();
  // transformers: json.dumps(index, indent=2, sort_keys=True) + "\n"
  const head = `{\n  "metadata": {\n    "total_size": ${index.metadata.total_size}\n  },\n  "weight_map": {\n`;
  t.ok(indexText.startsWith(head), 'metadata first, indent 2');
  const lines = indexText.slice(head.length).split('\n');
  t.same(lines.slice(-3), ['  }', '}', ''], 'closed, with a final newline');
  t.same(lines.slice(0, -3), sortedNames.map((name, i) => `    ${JSON.stringify(name)}: ${JSON.stringify(weightMap[name])}${i < sortedNames.length - 1 ? ',' : ''}`), 'sorted keys');

  await checkRoundTrip(t, dir, tensors, bytes);
});

t.test('byte-for-byte: the header and data the safetensors library writes', async (t) => {
  const dir = await tempDir(t);
  const floats = new Uint8Array(Float32Array.from([0, 1, 2, 3, 4, 5]).buffer);
  await writeSafetensorsCheckpoint(dir, [{ name: 'attn.0', dtype: 'F32', shape: [1, 1, 2, 3] }], () => floats);
  const written = new Uint8Array(await fs.readFile(path.join(dir, 'model.safetensors')));
  // 97 bytes of JSON, 7 spaces of padding: 104 = 0x68.
  const expected = Uint8Array.from([
    0x68, 0, 0, 0, 0, 0, 0, 0,
    ...new TextEncoder().encode(
      '{"__metadata__":{"format":"pt"},"attn.0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       ',
    ),
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40,
    0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0xa0, 0x40,
  ]);
  t.same(Array.from(written), Array.from(expected));

  const empty = await tempDir(t);
  await writeSafetensorsCheckpoint(empty, [], () => new Uint8Array());
  t.same(
    Array.from(new Uint8Array(await fs.readFile(path.join(empty, 'model.safetensors')))),
    [32, 0, 0, 0, 0, 0, 0, 0, ...new TextEncoder().encode('{"__metadata__":{"format":"pt"}}')],
    'no tensors: just the metadata',
  );
  t.same((await readCheckpointTensors(empty)).size, 0);
});

t.test('reads a hand-built file: the safetensors test vector, any header key order, JSON whitespace', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'model.safetensors');
  // The safetensors crate's own forced-alignment vector: 65 bytes of JSON + 7 spaces.
  const header = '{"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       ';
  const data = new Uint8Array(Float32Array.from([0, 1, 2, 3, 4, 5]).buffer);
  await fs.writeFile(file, fileBytes(header, data));
  const { entries, metadata } = await readSafetensorsHeader(file);
  t.same(metadata, {});
  t.same(entries, [{ name: 'attn0', dtype: 'F32', shape: [1, 1, 2, 3], file, offset: 80, byteLength: 24 }]);
  t.same(Array.from(new Float32Array((await readTensorBytes(entries[0]!)).buffer)), [0, 1, 2, 3, 4, 5]);

  // Tensors listed out of offset order, metadata last, zero-size tensors, an unpadded header.
  const mixed =
    ' {"b": {"dtype": "U8", "shape": [2], "data_offsets": [6, 8]}, "z": {"dtype": "I32", "shape": [2, 0], "data_offsets": [6, 6]},' +
    ' "a": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 6]}, "__metadata__": {"k": "v"}}\n';
  await fs.writeFile(file, fileBytes(mixed, [1, 2, 3, 4, 5, 6, 7, 8]));
  const read = await readSafetensorsHeader(file);
  t.same(read.metadata, { k: 'v' });
  t.same(read.entries.map((e) => [e.name, e.offset - (8 + new TextEncoder().encode(mixed).length), e.byteLength]), [
    ['a', 0, 6],
    ['z', 6, 0],
    ['b', 6, 2],
  ]);
  t.same(Array.from(await readTensorBytes(read.entries[2]!)), [7, 8]);
});

t.test('the data section starts 8-byte aligned whatever the header length', async (t) => {
  const dir = await tempDir(t);
  for (let len = 1; len <= 9; len++) {
    const sub = path.join(dir, String(len));
    await fs.mkdir(sub);
    const name = 'x'.repeat(len);
    await writeSafetensorsCheckpoint(sub, [{ name, dtype: 'F64', shape: [2] }], () => new Uint8Array(16).fill(len));
    const raw = new Uint8Array(await fs.readFile(path.join(sub, 'model.safetensors')));
    const n = Number(new DataView(raw.buffer).getBigUint64(0, true));
    t.equal((8 + n) % 8, 0, `name of ${len}: data starts at ${8 + n}`);
    const text = new TextDecoder().decode(raw.subarray(8, 8 + n));
    t.match(text, /^\{.*\} *$/, 'padded with spaces only');
    t.equal(raw.length, 8 + n + 16);
    const [entry] = (await readSafetensorsHeader(path.join(sub, 'model.safetensors'))).entries;
    t.equal(entry!.offset % 8, 0);
  }
});

t.test('corrupt single files: each a ERR_SWERL_CHECKPOINT naming the file and the culprit', async (t) => {
  const dir = await tempDir(t);
  const file = path.join(dir, 'bad.safetensors');
  const good = '{"a":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F16","shape":[4],"data_offsets":[8,16]}}';
  const cases: [string, Uint8Array, (string | RegExp)[]][] = [
    ['shorter than the length prefix', Uint8Array.from([1, 2, 3]), [file, /3 bytes/]],
    ['header length past the end', fileBytes(good).subarray(0, 20), [file, /truncated/]],
    ['header length over the limit', Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 1, 123]), [file, /limit/]],
    ['truncated data', fileBytes(good, new Uint8Array(13)), [file, /"b"/, /truncated/]],
    ['trailing bytes', fileBytes(good, new Uint8Array(20)), [file, /4 trailing bytes/]],
    ['bad JSON', fileBytes('{"a":{"dtype":"I32",', new Uint8Array(8)), [file, /not valid JSON/]],
    ['not UTF-8', fileBytes('{}', []).map((b, i) => (i === 8 ? 0xff : b)), [file, /UTF-8/]],
    ['not an object', fileBytes('[1,2]'), [file, /not an object/]],
    ['a tensor that is not an object', fileBytes('{"a":5}'), [file, /"a"/, /dtype, shape, data_offsets/]],
    ['unknown dtype', fileBytes('{"a":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}}', new Uint8Array(2)), [file, /"a"/, /F8_E4M3/]],
    ['negative dim', fileBytes('{"a":{"dtype":"U8","shape":[-2],"data_offsets":[0,2]}}', new Uint8Array(2)), [file, /"a"/, /shape/]],
    ['fractional dim', fileBytes('{"a":{"dtype":"U8","shape":[1.5],"data_offsets":[0,2]}}', new Uint8Array(2)), [file, /"a"/, /shape/]],
    ['a shape too large to address', fileBytes('{"a":{"dtype":"U8","shape":[1000000000,1000000000],"data_offsets":[0,2]}}', new Uint8Array(2)), [file, /"a"/, /too large/]],
    ['reversed offsets', fileBytes('{"a":{"dtype":"U8","shape":[0],"data_offsets":[2,0]}}', new Uint8Array(2)), [file, /"a"/, /data_offsets/]],
    [
      'byteLength mismatch',
      fileBytes('{"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,4]}}', new Uint8Array(4)),
      [file, /"test"/, /16 bytes/],
    ],
    [
      'overlapping offsets',
      fileBytes('{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}', new Uint8Array(6)),
      [file, /"b"/, /overlaps/, /"a"/],
    ],
    [
      'a hole between tensors',
      fileBytes('{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[6,10]}}', new Uint8Array(10)),
      [file, /"b"/, /hole/, /"a"/],
    ],
    [
      'a hole before the first tensor',
      fileBytes('{"a":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}', new Uint8Array(6)),
      [file, /"a"/, /hole/],
    ],
    [
      'metadata not strings',
      fileBytes('{"__metadata__":{"step":3}}'),
      [file, /__metadata__\.step/],
    ],
  ];
  for (const [label, bytes, mentions] of cases) {
    await fs.writeFile(file, bytes);
    await expectCheckpointError(t, readSafetensorsHeader(file), mentions, label);
  }
  await expectCheckpointError(t, readSafetensorsHeader(path.join(dir, 'nope.safetensors')), [/nope\.safetensors/, /ENOENT/], 'missing file');

  // A file truncated after its header was read: the tensor read itself fails, naming the tensor.
  await fs.writeFile(file, fileBytes(good, new Uint8Array(16)));
  const { entries } = await readSafetensorsHeader(file);
  await fs.truncate(file, entries[1]!.offset + 3);
  await expectCheckpointError(t, readTensorBytes(entries[1]!), [file, /"b"/, /truncated/], 'read past a truncation');
});

t.test('corrupt checkpoint folders: missing files, shards and tensors; duplicates; paths outside', async (t) => {
  const dir = await tempDir(t);
  const shard = (name: string, tensors: string[]) =>
    fs.writeFile(
      path.join(dir, name),
      fileBytes(`{${tensors.map((x, i) => `"${x}":{"dtype":"U8","shape":[1],"data_offsets":[${i},${i + 1}]}`).join(',')}}`, new Uint8Array(tensors.length)),
    );
  const index = (weightMap: Record<string, string>) =>
    fs.writeFile(path.join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: 3 }, weight_map: weightMap }));

  await fs.writeFile(path.join(dir, 'pytorch_model.bin'), 'x');
  await expectCheckpointError(
    t,
    readCheckpointTensors(dir),
    [dir, 'model.safetensors and model.safetensors.index.json', 'pytorch_model.bin'],
    'neither file',
  );
  await expectCheckpointError(t, readCheckpointTensors(path.join(dir, 'absent')), [/looked for/, /does not exist/], 'no folder');

  await shard('s1.safetensors', ['a', 'b']);
  await shard('s2.safetensors', ['c']);
  await index({ a: 's1.safetensors', b: 's1.safetensors', c: 's2.safetensors' });
  t.same([...(await readCheckpointTensors(dir)).keys()].sort(), ['a', 'b', 'c'], 'a valid hand-made sharded checkpoint');

  await index({ a: 's1.safetensors', b: 's1.safetensors', c: 's3.safetensors' });
  await expectCheckpointError(t, readCheckpointTensors(dir), [/s3\.safetensors/, /"c"/, /does not exist/], 'missing shard');

  await index({ a: 's1.safetensors', b: 's1.safetensors', c: 's2.safetensors', d: 's2.safetensors' });
  await expectCheckpointError(t, readCheckpointTensors(dir), [/"d"/, /s2\.safetensors/, /no such tensor/], 'index names a missing tensor');

  await shard('s2.safetensors', ['c', 'b']);
  await index({ a: 's1.safetensors', b: 's1.safetensors', c: 's2.safetensors' });
  await expectCheckpointError(t, readCheckpointTensors(dir), [/"b"/, /twice/, /s1\.safetensors/, /s2\.safetensors/], 'a tensor in two shards');

  await shard('s2.safetensors', ['c', 'e']);
  await expectCheckpointError(t, readCheckpointTensors(dir), [/"e"/, /does not name/], 'a tensor the index does not name');

  await index({ a: '../s1.safetensors' });
  await expectCheckpointError(t, readCheckpointTensors(dir), [/weight_map\["a"\]/, /same folder/], 'a shard path outside the folder');

  await fs.writeFile(path.join(dir, 'model.safetensors.index.json'), '{"weight_map": ');
  await expectCheckpointError(t, readCheckpointTensors(dir), [/index\.json/, /not valid JSON/], 'bad index JSON');

  await fs.writeFile(path.join(dir, 'model.safetensors.index.json'), '{"metadata": {}}');
  await expectCheckpointError(t, readCheckpointTensors(dir), [/index\.json/, /weight_map/], 'index without weight_map');

  await shard('s2.safetensors', ['c']);
  await fs.writeFile(path.join(dir, 's2.safetensors'), (await fs.readFile(path.join(dir, 's2.safetensors'))).subarray(0, 20));
  await index({ a: 's1.safetensors', b: 's1.safetensors', c: 's2.safetensors' });
  await expectCheckpointError(t, readCheckpointTensors(dir), [/s2\.safetensors/, /truncated/], 'a truncated shard');
});

t.test('writing: bad tensors, wrong byte counts and existing files are refused, leaving nothing behind', async (t) => {
  const dir = await tempDir(t);
  const tensors: TensorToWrite[] = [
    { name: 'a', dtype: 'F32', shape: [2] },
    { name: 'b', dtype: 'BF16', shape: [3] },
  ];
  await expectCheckpointError(
    t,
    writeSafetensorsCheckpoint(dir, tensors, (name) => new Uint8Array(name === 'a' ? 8 : 5), { maxShardBytes: 8 }),
    [/getBytes\("b"\)/, /5 bytes/, /6 bytes/],
    'wrong byte count',
  );
  t.same(await fs.readdir(dir), [], 'partial shards removed');

  const invalid = async (promise: Promise<unknown>, field: RegExp, label: string) => {
    const error = await promise.then(() => undefined, (e: unknown) => e);
    t.ok(error instanceof SwerlError && error.code === 'ERR_SWERL_INVALID_ARG', `${label}: ERR_SWERL_INVALID_ARG`);
    t.match((error as Error).message, field, `${label}: names the field`);
  };
  const bytes = () => new Uint8Array(0);
  await invalid(writeSafetensorsCheckpoint(dir, [tensors[0]!, tensors[0]!], bytes), /tensors\[1\]\.name.*twice/, 'duplicate name');
  await invalid(writeSafetensorsCheckpoint(dir, [{ name: 'x', dtype: 'F8' as SafetensorsDtype, shape: [1] }], bytes), /tensors\[0\]\.dtype/, 'bad dtype');
  await invalid(writeSafetensorsCheckpoint(dir, [{ name: 'x', dtype: 'U8', shape: [-1] }], bytes), /tensors\[0\]\.shape/, 'bad shape');
  await invalid(writeSafetensorsCheckpoint(dir, [{ name: '__metadata__', dtype: 'U8', shape: [] }], bytes), /tensors\[0\]\.name/, 'reserved name');
  await invalid(writeSafetensorsCheckpoint(dir, [], bytes, { maxShardBytes: 0 }), /maxShardBytes/, 'bad maxShardBytes');
  await invalid(writeSafetensorsCheckpoint(dir, [], bytes, { metadata: { step: 3 as unknown as string } }), /metadata\.step/, 'bad metadata');
  await invalid(writeSafetensorsCheckpoint(path.join(dir, 'missing'), [], bytes), /dir/, 'missing folder');

  await writeSafetensorsCheckpoint(dir, [], bytes);
  await expectCheckpointError(t, writeSafetensorsCheckpoint(dir, [], bytes), [/model\.safetensors/, /already exists/], 'existing file');
});
