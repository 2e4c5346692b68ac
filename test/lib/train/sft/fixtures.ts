/** Trajectories and conversations the SFT tests share. */
import type { Trajectory } from '../../../../lib/agent/trajectory.js';
import { ByteTokenizer } from '../../../../lib/model/byte-tokenizer.js';
import type { TerminationReason } from '../../../../lib/types/termination.js';

const tokenizer = new ByteTokenizer();

/** A trajectory whose prompt is `prompt` and whose sampled turn is `reply` given as ids. */
export function trajectory(prompt: string, reply: number[], reward: number, termination: TerminationReason, taskId = 't'): Trajectory {
  const promptIds = tokenizer.encode(prompt);
  const tokens = Int32Array.from([...promptIds, ...reply]);
  const mask = Uint8Array.from(tokens, (_, i) => (i >= promptIds.length ? 1 : 0));
  return {
    taskId, group: 0, sample: 0, tokens, mask,
    logprobs: Float32Array.from(tokens, (_, i) => (mask[i] ? -0.25 - i / 1000 : 0)),
    promptTokens: promptIds.length, responseTokens: reply.length, turns: [], termination, reward, rewardReason: '', attempts: 1, weightVersion: 0,
    timings: { totalMs: 0, generateMs: 0, envMs: 0, rewardMs: 0 },
  };
}


/**
 * Twelve short conversations with a tool call and a tool turn each (a few hundred tokens apiece
 * with the byte tokenizer, so a tiny model trains on them in seconds).
 */
export function smallCorpus(): { messages: object[] }[] {
  const pairs = [[2, 3], [4, 1], [7, 2], [5, 5], [1, 8], [6, 3], [9, 0], [3, 4], [8, 1], [2, 6], [4, 4], [7, 1]] as const;
  return pairs.map(([a, b]) => ({
    messages: [
      { role: 'system', content: 'Call a tool, then answer.' },
      { role: 'user', content: `What is ${a} + ${b}?` },
      { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'execute_bash', arguments: `{"cmd": "echo $((${a}+${b}))"}` } }] },
      { role: 'tool', content: `Exit code: 0\nExecution output of [execute_bash]:\n${a + b}\n` },
      { role: 'assistant', content: `${a} + ${b} = ${a + b}.` },
    ],
  }));
}
