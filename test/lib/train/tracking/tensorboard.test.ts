import { randomInt } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import t, { type Test } from 'tap';

import { SwerlError } from '../../../../lib/errors.js';
import { TensorBoardWriter, type StepScalars } from '../../../../lib/train/tracking/tensorboard.js';
import { crc32c } from '../../../../lib/train/tracking/tfrecord.js';
import { crc32cBitwise, readEvents, type DecodedEvent } from './events-reader.js';

/** A random value of any magnitude and sign (float32 keeps about 7 digits of it). */
const randomValue = () => (Math.random() - 0.5) * 10 ** randomInt(-6, 7);

/** Fresh tags each run: ASCII paths, a non-ASCII one, and one longer than 127 bytes (a two-byte length). */
function randomSteps(count: number): StepScalars[] {
  const tags = ['reward/mean', 'loss/entropy', `terminations/t${randomInt(1000)}`, 'métrique/ünïcode', `long/${'x'.repeat(130 + randomInt(50))}`];
  let step = randomInt(0, 3);
  return Array.from({ length: count }, () => {
    step += randomInt(1, 4);
    // Each tag 80% of the time, never none: a step with no scalars writes no record (tested below).
    const kept = tags.filter(() => Math.random() < 0.8);
    return { step, scalars: new Map((kept.length ? kept : [tags[randomInt(tags.length)]!]).map((tag) => [tag, randomValue()])) };
  });
}

async function eventsFiles(dir: string): Promise<string[]> {
  return (await fs.readdir(dir)).filter((name) => name.includes('tfevents')).sort();
}

function sameScalars(t: Test, event: DecodedEvent, expected: StepScalars, label: string): void {
  t.equal(event.step, expected.step, `${label}: step`);
  t.same([...(event.scalars?.keys() ?? [])].sort(), [...expected.scalars.keys()].sort(), `${label}: tags`);
  for (const [tag, value] of expected.scalars) {
    // simple_value is a float32: the value read back is the written one rounded to float32.
    t.equal(event.scalars?.get(tag), Math.fround(value), `${label}: ${tag} = ${value}`);
  }
}

t.test('the CRC32C of the writer and the reader agree with the check value and with each other', async (t) => {
  const check = Buffer.from('123456789');
  t.equal(crc32cBitwise(check), 0xe3069283, 'the reader\'s bitwise CRC32C gives the standard check value');
  t.equal(crc32c(check), 0xe3069283, 'so does the writer\'s table');
  t.equal(crc32c(new Uint8Array(0)), 0, 'the empty CRC');
  for (let i = 0; i < 20; i++) {
    const bytes = Buffer.from(Array.from({ length: randomInt(1, 300) }, () => randomInt(256)));
    t.equal(crc32c(bytes), crc32cBitwise(bytes), `random ${bytes.length} bytes`);
  }
});

t.test('an events file of random steps reads back: file_version first, then every step and value', async (t) => {
  const dir = path.join(t.testdir(), 'tensorboard');
  const steps = randomSteps(25);
  const before = Date.now() / 1000;
  const writer = await TensorBoardWriter.open(dir);
  for (const entry of steps) await writer.write(entry);
  await writer.close();
  const after = Date.now() / 1000;

  const files = await eventsFiles(dir);
  t.equal(files.length, 1, 'one events file');
  const match = /^events\.out\.tfevents\.(\d+)\.(.+)$/.exec(files[0]!);
  t.ok(match, `named events.out.tfevents.<seconds>.<host>: ${files[0]}`);
  t.ok(Math.abs(Number(match![1]) - before) <= 1, 'the seconds are the creation time');
  t.equal(match![2], os.hostname(), 'the host is this machine');
  t.equal(path.join(dir, files[0]!), writer.file, 'writer.file names it');

  const { events, tornBytes } = readEvents(await fs.readFile(writer.file));
  t.equal(tornBytes, 0, 'no partial record');
  t.equal(events.length, steps.length + 1);
  t.equal(events[0]!.fileVersion, 'brain.Event:2', 'the first record is the file version');
  t.notOk(events[0]!.scalars, 'and holds no summary');
  for (const event of events) t.ok(event.wallTime >= before - 1e-3 && event.wallTime <= after + 1e-3, `wall time ${event.wallTime} within the write`);
  steps.forEach((entry, i) => sameScalars(t, events[i + 1]!, entry, `step ${entry.step}`));
});

t.test('a step with no scalars writes no record', async (t) => {
  const dir = t.testdir();
  const writer = await TensorBoardWriter.open(dir);
  const [a, b] = randomSteps(2);
  await writer.write(a!);
  await writer.write({ step: a!.step + 1, scalars: new Map() });
  await writer.write(b!);
  await writer.close();
  const { events } = readEvents(await fs.readFile(writer.file));
  t.equal(events.length, 3, 'the file version and the two steps with scalars');
  sameScalars(t, events[2]!, b!, 'the step after the empty one');
});

t.test('steps past 2^31 and an explicit wall time survive the round trip', async (t) => {
  const dir = t.testdir();
  const writer = await TensorBoardWriter.open(dir);
  const step = 2 ** 40 + randomInt(1000);
  const wallTime = 1.7e9 + Math.random();
  await writer.write({ step, scalars: new Map([['x', 1.5]]) }, wallTime);
  await writer.close();
  const { events } = readEvents(await fs.readFile(writer.file));
  t.equal(events[1]!.step, step);
  t.equal(events[1]!.wallTime, wallTime, 'wall_time is a double, kept exactly');
});

t.test('a step with no scalars writes no record; a bad step is refused by name', async (t) => {
  const writer = await TensorBoardWriter.open(t.testdir());
  await writer.write({ step: 1, scalars: new Map() });
  for (const step of [-1, 1.5, NaN]) {
    const error = await writer.write({ step, scalars: new Map([['x', 1]]) }).then(() => undefined, (e: unknown) => e);
    t.ok(error instanceof SwerlError && error.code === 'ERR_SWERL_INVALID_ARG' && error.message.startsWith('step '), `step ${step}: ${error}`);
  }
  await writer.close();
  t.equal(readEvents(await fs.readFile(writer.file)).events.length, 1, 'only the file version');
});

t.test('a record torn by a kill leaves every earlier record readable', async (t) => {
  const dir = t.testdir();
  const steps = randomSteps(8);
  const writer = await TensorBoardWriter.open(dir);
  for (const entry of steps) await writer.write(entry);
  await writer.close();
  const whole = await fs.readFile(writer.file);
  const lastLength = lastRecordLength(whole);
  // Cut anywhere inside the last record: in its header, its data or its trailing CRC.
  const cut = whole.length - randomInt(1, lastLength);
  await fs.writeFile(writer.file, whole.subarray(0, cut));
  const { events, tornBytes } = readEvents(await fs.readFile(writer.file));
  t.equal(tornBytes, lastLength - (whole.length - cut), 'the torn bytes are the partial last record');
  t.equal(events.length, steps.length, 'the file version and every step but the last');
  steps.slice(0, -1).forEach((entry, i) => sameScalars(t, events[i + 1]!, entry, `step ${entry.step}`));
});

/** Walks the frames of a whole file to the last one and returns its size (header + data + CRC). */
function lastRecordLength(file: Buffer): number {
  let at = 0;
  let size = 0;
  while (at < file.length) {
    size = Number(file.readBigUInt64LE(at)) + 16;
    at += size;
  }
  return size;
}

t.test('opening writes the history into a fresh file and removes the earlier events files', async (t) => {
  const dir = t.testdir({ 'notes.txt': 'kept', '.writing.12345.tmp': 'a killed open' });
  const first = await TensorBoardWriter.open(dir);
  const steps = randomSteps(10);
  for (const entry of steps) await first.write(entry);
  await first.close();
  // A previous run's file from another host and a torn write at its end.
  await fs.writeFile(path.join(dir, 'events.out.tfevents.1000.other-host'), 'junk');
  await fs.appendFile(first.file, Buffer.from([1, 2, 3]));

  const kept = steps.slice(0, 6);
  const resumed = await TensorBoardWriter.open(dir, kept);
  const next = { step: kept.at(-1)!.step + 1, scalars: new Map([['reward/mean', randomValue()]]) };
  await resumed.write(next);
  await resumed.close();

  t.same(await eventsFiles(dir), [path.basename(resumed.file)], 'one events file left');
  t.same((await fs.readdir(dir)).filter((name) => !name.includes('tfevents')).sort(), ['notes.txt'], 'other files stay, temporaries go');
  const { events, tornBytes } = readEvents(await fs.readFile(resumed.file));
  t.equal(tornBytes, 0);
  t.equal(events[0]!.fileVersion, 'brain.Event:2');
  t.same(events.slice(1).map((e) => e.step), [...kept.map((s) => s.step), next.step], 'each kept step once, then the new one');
  [...kept, next].forEach((entry, i) => sameScalars(t, events[i + 1]!, entry, `step ${entry.step}`));
});
