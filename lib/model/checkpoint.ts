/**
 * A policy's directory on disk, in Hugging Face's layout so transformers and vLLM load it:
 * config.json, model.safetensors (or shards and model.safetensors.index.json), tokenizer
 * files. swerl adds what resuming training needs: optimizer.safetensors (AdamW's moments, and
 * the fp32 master weights when the model files hold a narrower dtype) and swerl_state.json.
 * Checked against the model's own parameter list before any byte crosses into C++.
 */
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import type { NativeDtype, NativeParameterSpec, NativePolicyHandle, NativeStateKind } from '../native.js';
import { writeDirectoryAtomic } from '../util/atomic.js';
import type { HfModelConfig } from './model-config.js';
import {
  checkpointError,
  readCheckpointTensors,
  readSafetensorsHeader,
  readTensorBytes,
  writeSafetensorsCheckpoint,
  type SafetensorsDtype,
  type TensorEntry,
} from './safetensors.js';

export const OPTIMIZER_FILE = 'optimizer.safetensors';
export const STATE_FILE = 'swerl_state.json';

/** What swerl_state.json records. */
export interface SwerlState {
  format: 1;
  optimizerStep: number;
  /** Whether optimizer.safetensors holds the moments (a step was taken). */
  hasMoments: boolean;
  /** Whether optimizer.safetensors holds fp32 master weights (model files narrower than fp32). */
  hasMaster: boolean;
  /** Anything the caller keeps with the weights (the trainer's step, RNG state, ...). */
  extra?: unknown;
}

const TORCH_DTYPE: Record<NativeDtype, string> = { F32: 'float32', BF16: 'bfloat16', F16: 'float16' };
const LOADABLE: readonly SafetensorsDtype[] = ['F32', 'BF16', 'F16'];

// Buffers some checkpoints carry that are recomputed, not learned.
const IGNORED = /\.rotary_emb\.inv_freq$/;

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** Matches a checkpoint's tensors to the model's parameters: every one present, shaped right. */
export function matchTensors(
  specs: readonly NativeParameterSpec[],
  entries: ReadonlyMap<string, TensorEntry>,
  options: { where: string; tiedEmbeddings: boolean },
): TensorEntry[] {
  const wanted = new Set(specs.map((s) => s.name));
  const missing = specs.filter((s) => !entries.has(s.name)).map((s) => s.name);
  if (missing.length > 0)
    throw checkpointError(
      `${options.where} lacks ${missing.length} tensor(s) the model needs: ${missing.slice(0, 5).join(', ')}` +
        `${missing.length > 5 ? ', ...' : ''}. Check that config.json describes this checkpoint (num_hidden_layers, model_type, tie_word_embeddings).`,
    );
  for (const name of entries.keys()) {
    if (wanted.has(name) || IGNORED.test(name)) continue;
    if (name === 'lm_head.weight' && options.tiedEmbeddings) continue;  // a tied copy some exporters write
    throw checkpointError(
      `${options.where} has tensor ${name}, which the model described by config.json does not have; ` +
        'check config.json (attention_bias, num_hidden_layers, model_type)',
    );
  }
  return specs.map((spec) => {
    const entry = entries.get(spec.name)!;
    if (!sameShape(entry.shape, spec.shape))
      throw checkpointError(
        `${spec.name} in ${entry.file} has shape [${entry.shape.join(', ')}]; the model needs [${spec.shape.join(', ')}]`,
      );
    if (!LOADABLE.includes(entry.dtype))
      throw checkpointError(`${spec.name} in ${entry.file} is ${entry.dtype}; weights must be F32, BF16 or F16`);
    return entry;
  });
}

async function loadEntries(handle: NativePolicyHandle, kind: NativeStateKind, entries: readonly TensorEntry[]): Promise<void> {
  for (const [index, entry] of entries.entries()) {
    handle.setState(kind, index, entry.dtype as NativeDtype, await readTensorBytes(entry));
  }
}

/** Reads a model directory's weights into the policy; returns swerl's state when present. */
export async function loadCheckpoint(
  handle: NativePolicyHandle,
  dir: string,
  options: { tiedEmbeddings: boolean; optimizer: boolean },
): Promise<SwerlState | undefined> {
  const specs = handle.parameterSpecs();
  const entries = await readCheckpointTensors(dir);
  await loadEntries(handle, 'parameter', matchTensors(specs, entries, { where: dir, tiedEmbeddings: options.tiedEmbeddings }));

  const stateFile = path.join(dir, STATE_FILE);
  if (!existsSync(stateFile)) return undefined;
  const state = JSON.parse(await fs.readFile(stateFile, 'utf8')) as SwerlState;
  if (state.format !== 1) throw checkpointError(`${stateFile} has format ${JSON.stringify(state.format)}; this swerl reads format 1`);
  if (!options.optimizer || (!state.hasMoments && !state.hasMaster)) return state;

  const optimizerFile = path.join(dir, OPTIMIZER_FILE);
  const { entries: optimizerEntries } = await readSafetensorsHeader(optimizerFile);
  const byName = new Map(optimizerEntries.map((e) => [e.name, e]));
  const section = (prefix: string) =>
    matchTensors(
      specs.map((s) => ({ name: `${prefix}.${s.name}`, shape: s.shape })),
      new Map([...byName].filter(([name]) => name.startsWith(`${prefix}.`))),
      { where: optimizerFile, tiedEmbeddings: false },
    );
  // The fp32 master weights replace the rounded ones just loaded, so training resumes exactly.
  if (state.hasMaster) await loadEntries(handle, 'parameter', section('master'));
  if (state.hasMoments) {
    await loadEntries(handle, 'exp_avg', section('exp_avg'));
    await loadEntries(handle, 'exp_avg_sq', section('exp_avg_sq'));
  }
  handle.setOptimizerStep(state.optimizerStep);
  return state;
}

export interface SaveCheckpointOptions {
  config: HfModelConfig;
  /** Tokenizer files (tokenizer.json, tokenizer_config.json) and any other small files to include. */
  files: Record<string, string>;
  dtype: NativeDtype;
  maxShardBytes?: number;
  /** Write optimizer.safetensors and swerl_state.json (default true). */
  optimizer: boolean;
  extra?: unknown;
}

/** Writes the policy to `dir` atomically (a complete new directory replaces the old). */
export async function saveCheckpoint(handle: NativePolicyHandle, dir: string, options: SaveCheckpointOptions): Promise<void> {
  const specs = handle.parameterSpecs();
  const indexOf = new Map(specs.map((s, i) => [s.name, i]));
  await writeDirectoryAtomic(dir, async (tmp) => {
    const config = { ...options.config, torch_dtype: TORCH_DTYPE[options.dtype] };
    await fs.writeFile(path.join(tmp, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
    for (const [name, contents] of Object.entries(options.files)) await fs.writeFile(path.join(tmp, name), contents);
    await writeSafetensorsCheckpoint(
      tmp,
      specs.map((s) => ({ name: s.name, dtype: options.dtype, shape: s.shape })),
      (name) => handle.getState('parameter', indexOf.get(name)!, options.dtype),
      { maxShardBytes: options.maxShardBytes },
    );
    if (!options.optimizer) return;

    const hasMoments = handle.hasOptimizerState();
    const hasMaster = options.dtype !== 'F32';
    const sections: [string, NativeStateKind][] = [];
    if (hasMaster) sections.push(['master', 'parameter']);
    if (hasMoments) sections.push(['exp_avg', 'exp_avg'], ['exp_avg_sq', 'exp_avg_sq']);
    if (sections.length > 0) {
      const tensors = sections.flatMap(([prefix]) => specs.map((s) => ({ name: `${prefix}.${s.name}`, dtype: 'F32' as const, shape: s.shape })));
      const kindOf = new Map(sections);
      const optimizerDir = path.join(tmp, '.optimizer');
      await fs.mkdir(optimizerDir);
      await writeSafetensorsCheckpoint(
        optimizerDir,
        tensors,
        (name) => {
          const dot = name.indexOf('.');
          return handle.getState(kindOf.get(name.slice(0, dot))!, indexOf.get(name.slice(dot + 1))!, 'F32');
        },
        { maxShardBytes: Number.MAX_SAFE_INTEGER },
      );
      await fs.rename(path.join(optimizerDir, 'model.safetensors'), path.join(tmp, OPTIMIZER_FILE));
      await fs.rm(optimizerDir, { recursive: true });
    }
    const state: SwerlState = { format: 1, optimizerStep: handle.optimizerStep(), hasMoments, hasMaster, extra: options.extra };
    await fs.writeFile(path.join(tmp, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  });
}
