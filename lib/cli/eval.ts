/** `swerl eval`: a policy on a task set, k runs each: Pass@1 ± SEM, pass@k, SWE-bench predictions. */
import type { Command } from 'commander';

import { parseEvalArgs, type EvalFlags } from '../eval/args.js';
import { SELECTION_RULES } from '../tts/select.js';
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
    .summary('run a policy on tasks k times: Pass@1 ± SEM, pass@k, Best@k, predictions')
    .description('Run a policy (scripted, a model run in process, or inference servers) on a task set, each task --runs times; prints Pass@1 ± SEM and pass@k, and writes report.json, report.md, SWE-bench predictions and, for a model, every episode in trajectories/step-1.jsonl.gz (swerl sft reads it). With --select, verifiers score the runs and each rule picks one per task: Best@k beside Pass@k and Pass@1.')
    .option('--tasks <path>', 'a task folder suite, SWE-bench or R2E-Gym JSON/JSONL (required)')
    .option('--repos <dir>', 'clones for dataset rows: DIR/owner__name or DIR/owner/name')
    .option('--test-command <cmd>', 'the test command for rows (the test files are appended)')
    .option('--policy <name>', 'a scripted policy: oracle (the gold patch), noop (no change) or decoy (gold on one run in --samples, a decoy edit on the others)')
    .option('--model <dir>', 'a Hugging Face model directory, run in process')
    .option('--server <url,...>', 'OpenAI-compatible servers (vLLM, SGLang, swerl serve)')
    .option('--predictions <file>', 'grade patches made elsewhere: SWE-bench predictions (instance_id, model_patch, model_name_or_path; JSONL or a JSON list), each once in a fresh sandbox; writes our report and the harness\'s')
    .option('--protocol <name>', 'how the servers take token ids: openai or sglang', 'openai')
    .option('--tokenizer <dir>', 'with --server: the model directory whose tokenizer renders prompts')
    .option('--served-model <id>', 'with --server: the model id to ask for (default: the servers\' first)')
    .option('--runs <k>', 'runs of every task (default 1)')
    .option('--samples <k>', 'the same as --runs: the k candidates --select picks from')
    .option('--k <list>', 'pass@k values, e.g. 1,4 (default 1 and --runs)')
    .option('--select <rules>', `Best@k: pick one run per task by ${SELECTION_RULES.join(', ')} (comma-separated, reported side by side; the first one's picks are predictions.jsonl)`)
    .option('--keep <n>', 'hybrid: candidates kept by the judge before the tests decide (default k/2)')
    .option('--test-writer <who>', 'who writes the reproduction tests: policy (the evaluated one, default) or oracle (scripted: the hidden tests)')
    .option('--reproduction-command <cmd>', 'how the written tests run, {files} replaced (default: node --test or pytest, as the task runs tests)')
    .option('--test-timeout <s>', 'time limit of one verifier test run, in seconds (default 300; with --predictions, of one prediction\'s tests, default 1800 as the harness)')
    .option('--judge-model <dir>', 'the judge (execution-free verifier): a model directory run in process (default: the evaluated policy)')
    .option('--judge-server <url,...>', 'the judge on inference servers (with --judge-tokenizer)')
    .option('--judge-tokenizer <dir>', 'with --judge-server: the judge\'s tokenizer directory')
    .option('--judge-protocol <name>', 'with --judge-server: openai or sglang (default openai)')
    .option('--judge-budget <n>', 'tokens of a judge prompt at most; longest thoughts are cut first (default 8192)')
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
  swerl eval --tasks rows.jsonl --server http://127.0.0.1:8000 --tokenizer ./qwen3-0.6b
  swerl eval --tasks tasks/swe-mini --policy decoy --samples 4 --select random,majority,execution,oracle --test-writer oracle
  swerl eval --tasks rows.jsonl --repos clones/ --model ./qwen3-0.6b --samples 8 --select hybrid --judge-model ./verifier
  swerl eval --tasks rows.jsonl --repos clones/ --predictions preds.jsonl --out graded/`)
    .action(register(evalAction));
}
