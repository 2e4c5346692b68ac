/** `swerl eval`: a policy on a task set, k runs each: Pass@1 ± SEM, pass@k, SWE-bench predictions. */
import type { Command } from 'commander';

import { parseEvalArgs, type EvalFlags } from '../eval/args.js';
import { sandboxOption, type Register } from './flags.js';

async function evalAction(flags: EvalFlags): Promise<number> {
  // Every flag is checked before a task is read or a model loaded.
  const args = parseEvalArgs(flags);
  const { evalCommand } = await import('../eval/command.js');
  return evalCommand(args);
}

export function addEvalCommand(program: Command, register: Register): void {
  program
    .command('eval')
    .summary('run a policy on tasks k times: Pass@1 ± SEM, pass@k, predictions')
    .description('Run a policy (scripted, a model run in process, or inference servers) on a task set, each task --runs times; prints Pass@1 ± SEM and pass@k, and writes report.json, report.md and SWE-bench predictions.')
    .option('--tasks <path>', 'a task folder suite, SWE-bench or R2E-Gym JSON/JSONL (required)')
    .option('--repos <dir>', 'clones for dataset rows: DIR/owner__name or DIR/owner/name')
    .option('--test-command <cmd>', 'the test command for rows (the test files are appended)')
    .option('--policy <name>', 'a scripted policy: oracle (the gold patch) or noop (no change)')
    .option('--model <dir>', 'a Hugging Face model directory, run in process')
    .option('--server <url,...>', 'OpenAI-compatible servers (vLLM, SGLang, swerl serve)')
    .option('--protocol <name>', 'how the servers take token ids: openai or sglang', 'openai')
    .option('--tokenizer <dir>', 'with --server: the model directory whose tokenizer renders prompts')
    .option('--served-model <id>', 'with --server: the model id to ask for (default: the servers\' first)')
    .option('--runs <k>', 'runs of every task (default 1)')
    .option('--k <list>', 'pass@k values, e.g. 1,4 (default 1 and --runs)')
    .option('--temperature <t>', 'sampling temperature (default 1; 0 is greedy)')
    .option('--max-turns <n>', 'assistant turns at most (default 100, as DeepSWE evaluated)')
    .option('--prompt-budget <n>', 'tokens of the opening prompt at most')
    .option('--response-budget <n>', 'tokens after the prompt at most')
    .option('--max-tokens-per-turn <n>', 'tokens one turn may sample at most')
    .option('--only <id,...>', 'just these task ids')
    .addOption(sandboxOption())
    .option('--concurrency <n>', 'episodes at once (default 2)')
    .option('--name <name>', 'model_name_or_path in the predictions (default: the policy)')
    .option('--out <dir>', 'the output folder (default runs/eval-<time>)')
    .option('--seed <n>', 'the sampling seed (default 0)')
    .addHelpText('after', `
Examples:
  swerl eval --tasks tasks/swe-mini --policy oracle
  swerl eval --tasks rows.jsonl --repos clones/ --model ./qwen3-0.6b --runs 4 --k 1,4
  swerl eval --tasks rows.jsonl --server http://127.0.0.1:8000 --tokenizer ./qwen3-0.6b`)
    .action(register(evalAction));
}
