/** `swerl serve <model dir>`: an OpenAI-compatible (and SGLang-compatible) server for the native policy. */
import path from 'node:path';

import type { Command } from 'commander';

import { integerArg, untilStopped, withListenFlags, type Register } from './flags.js';

interface ServeFlags {
  host: string;
  port: number;
  servedModelName?: string;
  device: string;
  maxBatchSize?: number;
  maxN?: number;
  maxBodyBytes?: number;
  apiKey?: string;
  weightsRoot?: string;
}

async function serveAction(dir: string, flags: ServeFlags): Promise<number> {
  const { NativePolicy } = await import('../model/native-policy.js');
  const { startServer } = await import('../serve/server.js');
  const policy = await NativePolicy.load(dir, { device: flags.device, ...(flags.maxBatchSize !== undefined ? { maxBatchSize: flags.maxBatchSize } : {}) });
  const modelName = flags.servedModelName ?? path.basename(path.resolve(dir));
  // An empty SWERL_API_KEY is unset; an empty --api-key is refused by startServer.
  const apiKey = flags.apiKey ?? (process.env.SWERL_API_KEY || undefined);
  const server = await startServer(policy, {
    host: flags.host,
    port: flags.port,
    modelName,
    weightsRoot: path.resolve(flags.weightsRoot ?? path.resolve(dir, '..')),
    ...(flags.maxN !== undefined ? { maxN: flags.maxN } : {}),
    ...(flags.maxBodyBytes !== undefined ? { maxBodyBytes: flags.maxBodyBytes } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
  });
  console.log(`swerl serve: ${modelName} at ${server.url}/v1 (Ctrl-C stops)`);
  await untilStopped();
  await server.close();
  policy.dispose();
  console.log('swerl serve: stopped');
  return 0;
}

export function addServeCommand(program: Command, register: Register): void {
  const serve = program
    .command('serve')
    .summary('serve a model over the OpenAI API (and SGLang\'s /generate)')
    .description('An OpenAI-compatible server for the native policy: completions, chat with tools, SSE streaming, SGLang\'s /generate and /update_weights_from_disk.')
    .argument('<model-dir>', 'a Hugging Face model directory (or a swerl checkpoint)');
  withListenFlags(serve, 8000)
    .option('--served-model-name <id>', 'the model id clients send (default: the directory\'s name)')
    .option('--device <device>', 'cpu or cuda[:N]', 'cpu')
    .option('--max-batch-size <n>', 'sequences decoded together (default 64)', integerArg('--max-batch-size'))
    .option('--max-n <n>', 'most choices per request (default 64)', integerArg('--max-n'))
    .option('--max-body-bytes <n>', 'largest request body (default 16 MiB)', integerArg('--max-body-bytes'))
    .option('--api-key <key>', 'require Authorization: Bearer KEY on every route but /health (default: $SWERL_API_KEY; none when unset)')
    .option('--weights-root <dir>', '/update_weights_from_disk loads only from under DIR (default: the model directory\'s parent)')
    .action(register(serveAction));
}
