/**
 * How far training moved a checkpoint: ||W_to - W_from|| / ||W_from|| over every weight of two
 * checkpoints of one model (Hugging Face folders). Two arms that start from one checkpoint and
 * play the same episodes can still differ tenfold in how far their optimizers carried the
 * weights; this says by how much (demo:swe records it for each RL arm).
 */
import { checkpointError, readCheckpointTensors, readTensorBytes, type SafetensorsDtype, type TensorEntry } from './safetensors.js';

/** A half-precision float's value (IEEE 754 binary16). */
function halfToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** A tensor's bytes as numbers, for the float dtypes a checkpoint's weights come in. */
function floatsOf(bytes: Uint8Array, dtype: SafetensorsDtype, name: string): ArrayLike<number> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (dtype) {
    case 'F64':
      return Float64Array.from({ length: bytes.byteLength / 8 }, (_, i) => view.getFloat64(8 * i, true));
    case 'F32':
      return Float32Array.from({ length: bytes.byteLength / 4 }, (_, i) => view.getFloat32(4 * i, true));
    case 'BF16': {
      // bfloat16 is float32's upper half.
      const widened = new DataView(new ArrayBuffer(4));
      return Float32Array.from({ length: bytes.byteLength / 2 }, (_, i) => (widened.setUint32(0, view.getUint16(2 * i, true) << 16), widened.getFloat32(0)));
    }
    case 'F16':
      return Float64Array.from({ length: bytes.byteLength / 2 }, (_, i) => halfToNumber(view.getUint16(2 * i, true)));
    default:
      throw checkpointError(`tensor "${name}" is ${dtype}: weights are compared as floats (F64, F32, BF16, F16)`);
  }
}

/** ||W_to - W_from|| / ||W_from||, summed in float64 over every tensor; the two must hold the same tensors and shapes. */
export async function relativeWeightChange(fromDir: string, toDir: string): Promise<number> {
  const [from, to] = await Promise.all([readCheckpointTensors(fromDir), readCheckpointTensors(toDir)]);
  const missing = [...from.keys()].filter((name) => !to.has(name)).concat([...to.keys()].filter((name) => !from.has(name)));
  if (missing.length > 0) throw checkpointError(`${fromDir} and ${toDir} hold different tensors (${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', ...' : ''} in one only): compare checkpoints of one model`);
  let change = 0;
  let norm = 0;
  for (const [name, a] of from) {
    const b = to.get(name)!;
    if (a.shape.join('x') !== b.shape.join('x')) throw checkpointError(`tensor "${name}" is ${a.shape.join('x')} in ${fromDir} and ${b.shape.join('x')} in ${toDir}: compare checkpoints of one model`);
    const [x, y] = await Promise.all([read(a), read(b)]);
    for (let i = 0; i < x.length; i++) {
      change += (y[i]! - x[i]!) ** 2;
      norm += x[i]! ** 2;
    }
  }
  if (norm === 0) throw checkpointError(`${fromDir}: every weight is 0, so a change relative to it is undefined`);
  return Math.sqrt(change / norm);
}

const read = async (entry: TensorEntry) => floatsOf(await readTensorBytes(entry), entry.dtype, entry.name);
