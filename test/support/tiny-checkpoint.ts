/**
 * A tiny random model directory in Hugging Face's layout (config.json, safetensors, tokenizer
 * files), written without swerl's own save path, so loading it tests the reader against the
 * format rather than against itself.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

import type { HfModelConfig, ModelType } from '../../lib/model/model-config.js';
import { writeSafetensorsCheckpoint, type SafetensorsDtype } from '../../lib/model/safetensors.js';
import { referenceParameterShapes, type ReferenceConfig, type ReferenceRopeScaling } from '../reference/qwen3.js';
import type { Rng } from '../reference/random.js';
import { writeTinyTokenizer } from './tiny-tokenizer.js';

export interface TinyCheckpoint {
  dir: string;
  config: HfModelConfig;
  reference: ReferenceConfig;
  /** The weights as written (after rounding to the file's dtype). */
  weights: Map<string, Float32Array>;
}

/** Rounds fp32 values to bf16 (round to nearest even), as the file will hold them. */
function roundToBf16(values: Float32Array): Float32Array {
  const out = new Float32Array(values);
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; ++i) bits[i] = ((bits[i]! + 0x7fff + ((bits[i]! >>> 16) & 1)) & 0xffff0000) >>> 0;
  return out;
}

function bf16Bytes(values: Float32Array): Uint8Array {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < bits.length; ++i) out[i] = bits[i]! >>> 16;
  return new Uint8Array(out.buffer);
}

export async function writeTinyCheckpoint(
  dir: string,
  rng: Rng,
  options: { modelType?: ModelType; tied?: boolean; dtype?: 'F32' | 'BF16'; maxShardBytes?: number; layers?: number; tokenizer?: boolean; ropeScaling?: { hf: Record<string, unknown>; reference: ReferenceRopeScaling; maxPositions: number } } = {},
): Promise<TinyCheckpoint> {
  const modelType = options.modelType ?? 'qwen3';
  const tied = options.tied ?? modelType === 'qwen3';
  const dtype: SafetensorsDtype = options.dtype ?? 'F32';
  await fs.mkdir(dir, { recursive: true });
  const vocabSize = options.tokenizer === false ? 300 : (await writeTinyTokenizer(dir)).vocabSize + 7;  // padded, as Qwen pads
  const config: HfModelConfig = {
    architectures: [{ qwen3: 'Qwen3ForCausalLM', qwen2: 'Qwen2ForCausalLM', llama: 'LlamaForCausalLM' }[modelType]],
    model_type: modelType,
    vocab_size: vocabSize,
    hidden_size: 32,
    intermediate_size: 64,
    num_hidden_layers: options.layers ?? 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: modelType === 'qwen3' ? 16 : 8,  // Qwen3 decouples head_dim from hidden / heads
    rope_theta: 10000 + rng.int(1000000),
    rms_norm_eps: 1e-6,
    tie_word_embeddings: tied,
    hidden_act: 'silu',
    max_position_embeddings: options.ropeScaling?.maxPositions ?? 4096,
    ...(options.ropeScaling ? { rope_scaling: options.ropeScaling.hf } : {}),
    torch_dtype: dtype === 'BF16' ? 'bfloat16' : 'float32',
  };
  if (modelType === 'llama') delete config.head_dim;
  const reference: ReferenceConfig = {
    vocabSize,
    hiddenSize: 32,
    intermediateSize: 64,
    numLayers: config.num_hidden_layers,
    numHeads: 4,
    numKvHeads: 2,
    headDim: modelType === 'qwen3' ? 16 : 8,
    ropeTheta: config.rope_theta!,
    rmsNormEps: 1e-6,
    tieWordEmbeddings: tied,
    qkNorm: modelType === 'qwen3',
    attentionBias: modelType === 'qwen2',
    ...(options.ropeScaling ? { ropeScaling: options.ropeScaling.reference } : {}),
  };
  const weights = new Map<string, Float32Array>();
  for (const [name, shape] of referenceParameterShapes(reference)) {
    const n = shape.reduce((a, b) => a * b, 1);
    let values: Float32Array;
    if (name.endsWith('norm.weight')) values = Float32Array.from({ length: n }, () => 1 + 0.2 * rng.normal());
    else if (name.endsWith('.bias')) values = rng.normals(n, 0.2);
    else values = rng.normals(n, name.includes('embed') || name.startsWith('lm_head') ? 1 : 0.25);
    weights.set(name, dtype === 'BF16' ? roundToBf16(values) : values);
  }
  const entries = [...referenceParameterShapes(reference)].map(([name, shape]) => ({ name, dtype, shape }));
  await writeSafetensorsCheckpoint(
    dir,
    entries,
    (name) => {
      const values = weights.get(name)!;
      return dtype === 'BF16' ? bf16Bytes(values) : new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    },
    { maxShardBytes: options.maxShardBytes },
  );
  await fs.writeFile(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  return { dir, config, reference, weights };
}
