/**
 * Reads TensorBoard events files back without the writer's code: TFRecord frames checked with
 * a bitwise CRC32C (not the writer's table), and the Event protobufs decoded by protobufjs
 * from the official field numbers (tensorboard/compat/proto/event.proto, summary.proto).
 */
import protobuf from 'protobufjs';

const PROTO = `
syntax = "proto3";
package tensorboard;
message Event {
  double wall_time = 1;
  int64 step = 2;
  oneof what {
    string file_version = 3;
    bytes graph_def = 4;
    Summary summary = 5;
  }
}
message Summary {
  message Value {
    string node_name = 7;
    string tag = 1;
    oneof value {
      float simple_value = 2;
      bytes obsolete_old_style_histogram = 3;
    }
  }
  repeated Value value = 1;
}
`;

const Event = protobuf.parse(PROTO, { keepCase: true }).root.lookupType('tensorboard.Event');

export function crc32cBitwise(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function masked(bytes: Uint8Array): number {
  const crc = crc32cBitwise(bytes);
  const rotated = ((crc >>> 15) | (crc << 17)) >>> 0;
  return (rotated + 0xa282ead8) % 2 ** 32;
}

export interface DecodedEvent {
  wallTime: number;
  step: number;
  fileVersion?: string;
  /** simple_value by tag, for a summary event. */
  scalars?: Map<string, number>;
}

interface EventObject {
  wall_time?: number;
  step?: number;
  file_version?: string;
  summary?: { value?: { tag?: string; simple_value?: number }[] };
}

/**
 * The events of a file, and how many bytes at its end do not make a whole record (a torn
 * last write). A whole record whose CRC does not match throws.
 */
export function readEvents(file: Uint8Array): { events: DecodedEvent[]; tornBytes: number } {
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  const events: DecodedEvent[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < 12) break;
    const header = bytes.subarray(at, at + 8);
    if (bytes.readUInt32LE(at + 8) !== masked(header)) throw new Error(`record at byte ${at}: length CRC mismatch`);
    const length = Number(bytes.readBigUInt64LE(at));
    if (bytes.length - at < 12 + length + 4) break;
    const data = bytes.subarray(at + 12, at + 12 + length);
    if (bytes.readUInt32LE(at + 12 + length) !== masked(data)) throw new Error(`record at byte ${at}: data CRC mismatch`);
    const event = Event.toObject(Event.decode(data), { longs: Number, defaults: false, oneofs: false }) as EventObject;
    const decoded: DecodedEvent = { wallTime: event.wall_time ?? 0, step: event.step ?? 0 };
    if (event.file_version !== undefined) decoded.fileVersion = event.file_version;
    if (event.summary) decoded.scalars = new Map((event.summary.value ?? []).map((v) => [v.tag ?? '', v.simple_value ?? NaN]));
    events.push(decoded);
    at += 12 + length + 4;
  }
  return { events, tornBytes: bytes.length - at };
}
