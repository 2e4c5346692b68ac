/**
 * SGLang's routes: /generate (input_ids in; output_ids and meta_info.output_token_logprobs out,
 * and with logprob_start_len >= 0 meta_info.input_token_logprobs from that position) and
 * /update_weights_from_disk {model_path}, which swaps the weights between decode steps
 * (requests in flight finish on the old weights), only from under the weights root.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, realpathSync, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';

import type { NativePolicy } from '../model/native-policy.js';
import { generateChoice, type ChoiceAborts } from './choices.js';
import { sendJson } from './http.js';
import { sglangInputTokenLogprobs } from './prompt-logprobs.js';
import type { GenerateRequest, WeightsRequest } from './requests.js';

export async function sglangGenerate(policy: NativePolicy, res: ServerResponse, r: GenerateRequest, aborts: ChoiceAborts): Promise<void> {
  const scoresPrompt = r.returnLogprob && r.logprobStartLen >= 0;
  const [done, scored] = await Promise.all([generateChoice(policy, r.prompt, r.sampling, 0, aborts), scoresPrompt ? policy.logprobs([r.prompt]) : undefined]);
  const meta: Record<string, unknown> = {
    id: randomUUID().replace(/-/g, ''),
    finish_reason: { type: done.finishReason },
    prompt_tokens: r.prompt.length,
    completion_tokens: done.tokens.length,
    weight_version: String(policy.weights.version),
  };
  if (r.returnLogprob) meta.output_token_logprobs = done.tokens.map((t, i) => [done.logprobs[i], t, null]);
  if (scored) meta.input_token_logprobs = sglangInputTokenLogprobs(r.prompt, scored[0]!, r.logprobStartLen);
  sendJson(res, 200, { text: done.text, output_ids: done.tokens, meta_info: meta });
}

/** Weight updates, one at a time, each from a folder under the root (undefined: none allowed). */
export class WeightUpdates {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly policy: NativePolicy,
    private readonly root: string | undefined,
  ) {}

  async handle(res: ServerResponse, { modelPath: dir }: WeightsRequest): Promise<void> {
    const refuse = (message: string) => sendJson(res, 400, { success: false, message, error: { message, type: 'invalid_request_error', param: 'model_path', code: 400 } });
    const root = this.root;
    if (root === undefined) return refuse('weight updates are off on this server: start it with --weights-root DIR (weightsRoot) to load checkpoints from under DIR');
    if (!existsSync(dir) || !statSync(dir).isDirectory()) return refuse(`model_path ${dir} is not a directory`);
    // Symlinks and .. resolved first: the folder actually read must be under the root.
    const real = realpathSync(dir);
    if (real !== root && !real.startsWith(root + path.sep))
      return refuse(`model_path ${dir} is outside ${root}, the only folder this server loads weights from (--weights-root)`);
    const started = performance.now();
    const update = this.queue.then(() => this.policy.reloadWeights(real));
    this.queue = update.catch(() => undefined);
    try {
      const version = await update;
      sendJson(res, 200, { success: true, message: `Succeeded to update model weights from ${dir}.`, weight_version: version, seconds: (performance.now() - started) / 1000 });
    } catch (error) {
      refuse(`could not load ${dir}: ${(error as Error).message}`);
    }
  }
}
