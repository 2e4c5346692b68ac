/**
 * The model a config's `model` section names, as it starts: a preset from scratch (random
 * weights from the run's seed) reading the byte tokenizer or the folder's tokenizer.json it
 * names, or a Hugging Face model directory with its own.
 */
import { ByteTokenizer } from '../model/byte-tokenizer.js';
import { loadTokenizer } from '../model/hf-tokenizer.js';
import { presetConfig } from '../model/model-config.js';
import { NativePolicy } from '../model/native-policy.js';
import type { NativePolicyLoadOptions } from '../model/native-policy-options.js';
import type { Tokenizer } from '../types/tokenizer.js';
import type { ModelConfig } from './config.js';

/** The model's tokenizer, without loading its weights. */
export async function modelTokenizer(model: Pick<ModelConfig, 'preset' | 'path' | 'tokenizer'>): Promise<Tokenizer> {
  if (model.preset) return model.tokenizer !== undefined ? loadTokenizer(model.tokenizer) : new ByteTokenizer();
  return loadTokenizer(model.path!);
}

/** The configured model, fresh: its vocabulary is its tokenizer's for a preset. */
export async function loadConfiguredModel(model: Pick<ModelConfig, 'preset' | 'path' | 'tokenizer'>, options: NativePolicyLoadOptions): Promise<NativePolicy> {
  if (!model.preset) return NativePolicy.load(model.path!, options);
  const tokenizer = await modelTokenizer(model);
  return NativePolicy.load(presetConfig(model.preset, tokenizer.vocabSize), options, tokenizer);
}
