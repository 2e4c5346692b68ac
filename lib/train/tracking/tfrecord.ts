/**
 * TFRecord framing, the container of TensorBoard's events files. Each record is
 *
 *   uint64 LE  length
 *   uint32 LE  masked CRC32C of those 8 bytes
 *   bytes      data
 *   uint32 LE  masked CRC32C of the data
 *
 * as tensorboard/summary/writer/record_writer.py writes it.
 */

/** CRC-32C (Castagnoli), reflected polynomial. */
const POLYNOMIAL = 0x82f63b78;
const MASK_DELTA = 0xa282ead8;

const TABLE = Uint32Array.from({ length: 256 }, (_, byte) => {
  let crc = byte;
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ POLYNOMIAL : crc >>> 1;
  return crc;
});

export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The CRC rotated and offset, as TFRecord stores it: a CRC of data that itself holds CRCs is weak. */
export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = crc32c(bytes);
  return (((crc >>> 15) | (crc << 17)) + MASK_DELTA) >>> 0;
}

export function frameRecord(data: Uint8Array): Buffer {
  const record = Buffer.alloc(8 + 4 + data.length + 4);
  record.writeBigUInt64LE(BigInt(data.length), 0);
  record.writeUInt32LE(maskedCrc32c(record.subarray(0, 8)), 8);
  record.set(data, 12);
  record.writeUInt32LE(maskedCrc32c(data), 12 + data.length);
  return record;
}
