/**
 * The opening prompt's messages of a saved trajectory: recorded with it since the agent loop
 * keeps them, else read back from its ChatML-rendered prompt tokens (older runs).
 */
import type { PromptMessage } from '../agent/trajectory.js';
import type { SavedTrajectory } from '../train/run-dir.js';
import type { Tokenizer } from '../types/tokenizer.js';

export interface OpeningMessages {
  messages: PromptMessage[];
  /** 'saved': from the trajectory; 'decoded': from its prompt tokens; 'none': neither was possible. */
  source: 'saved' | 'decoded' | 'none';
}

const CHATML_MESSAGE = /<\|im_start\|>([^\n]*)\n([\s\S]*?)(?:<\|im_end\|>|$)/g;

/** ChatML text to its messages; a generation prompt's empty assistant opening is left out. */
export function parseChatMl(text: string): PromptMessage[] {
  const messages: PromptMessage[] = [];
  for (const [, role, content] of text.matchAll(CHATML_MESSAGE)) {
    if (role === 'assistant' && content!.replace('<think>\n\n</think>', '').trim() === '') continue;
    messages.push({ role: role!, content: content! });
  }
  return messages;
}

export function openingMessages(trajectory: SavedTrajectory, tokenizer: Tokenizer | undefined): OpeningMessages {
  if (Array.isArray(trajectory.messages)) return { messages: trajectory.messages, source: 'saved' };
  if (!tokenizer) return { messages: [], source: 'none' };
  const prompt = tokenizer.decode(trajectory.tokens.slice(0, trajectory.promptTokens));
  const messages = parseChatMl(prompt);
  // A prompt in another template than ChatML is shown whole rather than not at all.
  return { messages: messages.length > 0 ? messages : [{ role: 'prompt', content: prompt }], source: 'decoded' };
}
