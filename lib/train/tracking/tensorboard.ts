/**
 * A TensorBoard events file of scalars, written without TensorFlow: serialized
 * `tensorboard.Event` protobufs (tensorboard/compat/proto/event.proto, summary.proto),
 * hand-encoded, in TFRecord framing. The first record names the format
 * (file_version "brain.Event:2"); then one Event a step, its Summary holding every scalar.
 *
 * Resume: TensorBoard reads every events file of a folder as one run, so an events file
 * appended to since the last checkpoint would show the dropped steps beside their redone
 * values. Instead, opening writes a fresh file from the run's kept metrics rows (the steps up
 * to the checkpoint, exactly as metrics.jsonl holds them) and removes the earlier files, so
 * the folder always mirrors metrics.jsonl and each step appears once. The replayed steps carry
 * the time of the resume as their wall time (rows keep no clock time); TensorBoard's default
 * step axis is unaffected.
 *
 * Each step's record is written whole before log() resolves: a killed process leaves
 * at most a torn last record, which TensorBoard's reader stops at.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { invalidArg } from '../../errors.js';
import { frameRecord } from './tfrecord.js';

/** One step's scalars, by tag. */
export interface StepScalars {
  step: number;
  scalars: ReadonlyMap<string, number>;
}

const FILE_VERSION = 'brain.Event:2';
/** Every name TensorBoard's loader takes for an events file contains this. */
const EVENTS_MARK = 'tfevents';

// Protobuf wire types and the field numbers of event.proto / summary.proto.
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;
const EVENT = { wallTime: 1, step: 2, fileVersion: 3, summary: 5 };
const SUMMARY = { value: 1 };
const VALUE = { tag: 1, simpleValue: 2 };

/** A protobuf message being encoded: fields appended in order. */
class Message {
  private readonly parts: Uint8Array[] = [];

  private key(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  private varint(value: number): void {
    const bytes: number[] = [];
    while (value >= 0x80) {
      bytes.push((value % 0x80) | 0x80);
      value = Math.floor(value / 0x80);
    }
    bytes.push(value);
    this.parts.push(Uint8Array.from(bytes));
  }

  uint(field: number, value: number): this {
    this.key(field, VARINT);
    this.varint(value);
    return this;
  }

  double(field: number, value: number): this {
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleLE(value);
    this.key(field, FIXED64);
    this.parts.push(bytes);
    return this;
  }

  float(field: number, value: number): this {
    const bytes = Buffer.alloc(4);
    bytes.writeFloatLE(value);
    this.key(field, FIXED32);
    this.parts.push(bytes);
    return this;
  }

  bytes(field: number, value: Uint8Array | string): this {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    this.key(field, LENGTH_DELIMITED);
    this.varint(bytes.length);
    this.parts.push(bytes);
    return this;
  }

  encode(): Buffer {
    return Buffer.concat(this.parts);
  }
}

function fileVersionRecord(wallTime: number): Buffer {
  return frameRecord(new Message().double(EVENT.wallTime, wallTime).bytes(EVENT.fileVersion, FILE_VERSION).encode());
}

function scalarsRecord({ step, scalars }: StepScalars, wallTime: number): Buffer {
  if (!Number.isSafeInteger(step) || step < 0) throw invalidArg('step', `is ${step}`, 'pass the training step, a non-negative integer');
  const summary = new Message();
  for (const [tag, value] of scalars) summary.bytes(SUMMARY.value, new Message().bytes(VALUE.tag, tag).float(VALUE.simpleValue, value).encode());
  return frameRecord(new Message().double(EVENT.wallTime, wallTime).uint(EVENT.step, step).bytes(EVENT.summary, summary.encode()).encode());
}

export class TensorBoardWriter {
  private constructor(
    private readonly handle: fs.FileHandle,
    /** The events file being written. */
    readonly file: string,
  ) {}

  /**
   * A fresh events file `events.out.tfevents.<unix seconds>.<hostname>` in dir, holding
   * `history` (the run's kept steps); every earlier events file of dir is removed once it is in place.
   */
  static async open(dir: string, history: readonly StepScalars[] = []): Promise<TensorBoardWriter> {
    await fs.mkdir(dir, { recursive: true });
    const now = Date.now() / 1000;
    const name = `events.out.${EVENTS_MARK}.${Math.floor(now)}.${os.hostname()}`;
    const file = path.join(dir, name);
    // The temporary name lacks the mark, so TensorBoard never reads a half-written file.
    const tmp = path.join(dir, `.writing.${process.pid}.tmp`);
    const records = [fileVersionRecord(now), ...history.filter((h) => h.scalars.size > 0).map((h) => scalarsRecord(h, now))];
    await fs.writeFile(tmp, Buffer.concat(records));
    await fs.rename(tmp, file);
    for (const other of await fs.readdir(dir)) {
      if (other !== name && (other.includes(EVENTS_MARK) || /^\.writing\.\d+\.tmp$/.test(other))) await fs.rm(path.join(dir, other), { force: true });
    }
    return new TensorBoardWriter(await fs.open(file, 'a'), file);
  }

  /** Appends one step's whole record; it is in the file when this resolves. */
  async write(entry: StepScalars, wallTime = Date.now() / 1000): Promise<void> {
    if (entry.scalars.size === 0) return;
    // appendFile loops until every byte is written (a bare write() may write part of a buffer).
    await this.handle.appendFile(scalarsRecord(entry, wallTime));
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
