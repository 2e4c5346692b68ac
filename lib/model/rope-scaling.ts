/**
 * Hugging Face's `rope_scaling` (long contexts), read and resolved once: YaRN, as Qwen3 ships
 * it for 131k tokens ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings":
 * 32768}), and Llama 3.1's. Every field is filled in here (defaults and YaRN's attention factor
 * as modeling_rope_utils.py derives them), so the native core only computes frequencies.
 */
import { SwerlError, invalidArg } from '../errors.js';
import type { NativeRopeScaling } from '../native.js';

const YARN_FIELDS = ['rope_type', 'type', 'factor', 'original_max_position_embeddings', 'attention_factor', 'beta_fast', 'beta_slow', 'mscale', 'mscale_all_dim', 'truncate', 'rope_theta'];
const LLAMA3_FIELDS = ['rope_type', 'type', 'factor', 'original_max_position_embeddings', 'low_freq_factor', 'high_freq_factor', 'rope_theta'];

/** YaRN's attention factor for a scale: 0.1 ln(s) + 1 above 1 (the paper's suggestion). */
function yarnMscale(scale: number, mscale = 1): number {
  return scale <= 1 ? 1 : 0.1 * mscale * Math.log(scale) + 1;
}

function number(r: Record<string, unknown>, field: string, where: string, fallback?: number, min = 0, exclusive = true): number {
  const value = r[field] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || (exclusive ? !(value > min) : !(value >= min)))
    throw invalidArg(`${where}.${field}`, `must be a finite number ${exclusive ? '>' : '>='} ${min} (got ${JSON.stringify(r[field])})`);
  return value;
}

/**
 * The scaling `where` (a config.json's rope_scaling) asks for. A YaRN config whose
 * max_position_embeddings is not factor x original_max_position_embeddings is refused: Hugging
 * Face versions disagree on which of the two wins, and a model must not mean two things.
 */
export function resolveRopeScaling(value: unknown, maxPositions: number | undefined, where: string): NativeRopeScaling {
  if (value == null) return { kind: 'none' };
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidArg(where, 'must be an object or null');
  const r = value as Record<string, unknown>;
  const type = r.rope_type ?? r.type;
  if (type === 'default') return { kind: 'none' };
  if (type !== 'yarn' && type !== 'llama3')
    throw invalidArg(`${where}.rope_type`, `= ${JSON.stringify(type)} is not supported by swerl's native model`, 'use "yarn" (Qwen3\'s long context) or "llama3", or remove rope_scaling');
  const known = type === 'yarn' ? YARN_FIELDS : LLAMA3_FIELDS;
  for (const field of Object.keys(r))
    if (!known.includes(field)) throw invalidArg(`${where}.${field}`, `is not a field of ${type} rope scaling; known: ${known.filter((f) => f !== 'type').join(', ')}`);
  const factor = number(r, 'factor', where, undefined, 1, false);

  if (type === 'llama3') {
    const originalMaxPositions = number(r, 'original_max_position_embeddings', where);
    const lowFreqFactor = number(r, 'low_freq_factor', where);
    const highFreqFactor = number(r, 'high_freq_factor', where);
    if (!(highFreqFactor > lowFreqFactor)) throw invalidArg(`${where}.high_freq_factor`, `(${highFreqFactor}) must be > low_freq_factor (${lowFreqFactor})`);
    return { kind: 'llama3', factor, originalMaxPositions, attentionFactor: 1, betaFast: 32, betaSlow: 1, truncate: true, lowFreqFactor, highFreqFactor };
  }

  let originalMaxPositions: number;
  if (r.original_max_position_embeddings !== undefined) {
    originalMaxPositions = number(r, 'original_max_position_embeddings', where);
    if (maxPositions !== undefined && maxPositions !== factor * originalMaxPositions)
      throw invalidArg(
        `${where}`,
        `has factor ${factor} x original_max_position_embeddings ${originalMaxPositions} = ${factor * originalMaxPositions}, but max_position_embeddings is ${maxPositions}`,
        `set max_position_embeddings to ${factor * originalMaxPositions} (the scaled context; Hugging Face versions differ on which field wins when they disagree)`,
      );
  } else {
    if (maxPositions === undefined) throw invalidArg(`${where}.original_max_position_embeddings`, 'is missing, and so is max_position_embeddings', 'give the pre-scaling context length');
    originalMaxPositions = maxPositions;  // as Hugging Face assumes: max_position_embeddings is the pre-YaRN length
  }
  let attentionFactor: number;
  if (r.attention_factor !== undefined) attentionFactor = number(r, 'attention_factor', where);
  else if (r.mscale && r.mscale_all_dim) attentionFactor = yarnMscale(factor, number(r, 'mscale', where)) / yarnMscale(factor, number(r, 'mscale_all_dim', where));
  else attentionFactor = yarnMscale(factor);
  // Hugging Face reads `beta_fast or 32`: a 0 or null means the default too.
  const betaFast = r.beta_fast ? number(r, 'beta_fast', where) : 32;
  const betaSlow = r.beta_slow ? number(r, 'beta_slow', where) : 1;
  if (r.truncate !== undefined && typeof r.truncate !== 'boolean') throw invalidArg(`${where}.truncate`, 'must be a boolean');
  if (betaFast < betaSlow) throw invalidArg(`${where}.beta_fast`, `(${betaFast}) must be >= beta_slow (${betaSlow})`);
  return { kind: 'yarn', factor, originalMaxPositions, attentionFactor, betaFast, betaSlow, truncate: (r.truncate as boolean | undefined) ?? true, lowFreqFactor: 1, highFreqFactor: 4 };
}

/**
 * The rotary settings of a config.json: rope_theta and rope_scaling as transformers < 5 wrote
 * them, or one `rope_parameters` object ({"rope_type": "default", "rope_theta": 1e6, ...}) as
 * transformers >= 5 writes them. A config that says both must agree; a partial rotary factor
 * other than 1 is refused (the native model rotates every dimension).
 */
export function resolveRope(config: Record<string, unknown>, maxPositions: number | undefined, where: string): { ropeTheta: number; ropeScaling: NativeRopeScaling } {
  const parameters = config.rope_parameters;
  if (parameters != null && (typeof parameters !== 'object' || Array.isArray(parameters)))
    throw invalidArg(`${where}.rope_parameters`, 'must be an object or null');
  const p = (parameters ?? {}) as Record<string, unknown>;
  const theta = config.rope_theta !== undefined ? number(config, 'rope_theta', where) : number(p, 'rope_theta', `${where}.rope_parameters`, 10000);
  if (config.rope_theta !== undefined && p.rope_theta !== undefined && p.rope_theta !== config.rope_theta)
    throw invalidArg(`${where}.rope_parameters.rope_theta`, `(${JSON.stringify(p.rope_theta)}) disagrees with rope_theta (${config.rope_theta})`, 'keep one of the two, or make them equal');
  if (p.partial_rotary_factor !== undefined && p.partial_rotary_factor !== 1)
    throw invalidArg(`${where}.rope_parameters.partial_rotary_factor`, `= ${JSON.stringify(p.partial_rotary_factor)} is not supported by swerl's native model`, 'only full rotary embeddings (1) are implemented');
  const { partial_rotary_factor: _partial, ...scalingFields } = p;
  const type = p.rope_type ?? p.type;
  if (parameters != null && config.rope_scaling != null && type !== undefined && type !== 'default')
    throw invalidArg(`${where}.rope_scaling`, 'is given beside a scaled rope_parameters', 'keep rope_parameters (transformers >= 5) or rope_scaling, not both');
  // rope_parameters without a rope_type is plain rotary, as "default" is.
  const ropeScaling =
    config.rope_scaling != null
      ? resolveRopeScaling(config.rope_scaling, maxPositions, `${where}.rope_scaling`)
      : resolveRopeScaling(type === undefined ? null : scalingFields, maxPositions, `${where}.rope_parameters`);
  return { ropeTheta: theta, ropeScaling };
}

/** The context a config allows: max_position_embeddings, when it says. */
export function assertWithinContext(tokens: number, maxPositions: number | undefined, field: string, fix: string): void {
  if (maxPositions !== undefined && tokens > maxPositions)
    throw new SwerlError('ERR_SWERL_INVALID_ARG', `${field} allows ${tokens} tokens, more than the model's max_position_embeddings (${maxPositions}); ${fix}`);
}
