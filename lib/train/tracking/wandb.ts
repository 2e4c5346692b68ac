/**
 * Weights & Biases through its official JS SDK, @wandb/sdk: an optional peer dependency,
 * imported only when config.tracking.wandb asks for it. What swerl uses of it (0.5):
 * `init({ project, entity, name, config })` resolves with a run; `run.log(data, step)`;
 * `await run.finish()`. The SDK reads the key from WANDB_API_KEY or ~/.netrc.
 *
 * One W&B run a process. On resume the new run first gets the kept rows (the steps up to
 * the checkpoint), so every W&B run holds its whole curve with each step once, as the
 * events file does; the interrupted run stays in W&B as it was.
 */
import { SwerlError, invalidArg } from '../../errors.js';
import type { StepScalars } from './tensorboard.js';
import type { Infer } from '../../schema.js';

/** No tags: @wandb/sdk 0.5.1's init accepts them in its type but never sends them. */
const NAME = { type: 'string', minLength: 1 } as const;

/** Where a run's W&B run goes. */
export const WANDB_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['project'],
  properties: {
    project: NAME,
    entity: NAME,
    /** The run's display name (default: the run directory's name). */
    name: NAME,
  },
} as const;
export type WandbOptions = Infer<typeof WANDB_SCHEMA>;

interface WandbRun {
  log(data: Record<string, unknown>, step?: number): void;
  finish(): Promise<void>;
}

interface WandbSdk {
  init(options: { project: string; entity?: string; name?: string; config?: unknown }): Promise<WandbRun>;
}

/** Imports the SDK module (tests pass their own: the W&B service cannot be reached from CI). */
export type WandbLoader = () => Promise<unknown>;

const SDK_PACKAGE = '@wandb/sdk';
// A specifier in a variable: TypeScript does not look for the optional package when building.
export const importWandbSdk: WandbLoader = () => import(SDK_PACKAGE);

const FIELD = 'config.tracking.wandb';
const NOT_INSTALLED = new RegExp(`^Cannot find (?:package|module) '${SDK_PACKAGE}'`);

async function loadSdk(load: WandbLoader): Promise<WandbSdk> {
  let module: unknown;
  try {
    module = await load();
  } catch (error) {
    // Only the SDK itself missing; a dependency missing inside it is the SDK's own error. By
    // the message: a loader hook (ts-node's, under tap) drops ERR_MODULE_NOT_FOUND's code.
    if (NOT_INSTALLED.test(String((error as Error)?.message))) {
      throw invalidArg(FIELD, `asks for Weights & Biases, but ${SDK_PACKAGE} is not installed`, `run \`npm install ${SDK_PACKAGE}\` and set WANDB_API_KEY, or set ${FIELD} to null`);
    }
    throw error;
  }
  const sdk = (module as { default?: unknown } | null)?.default ?? module;
  if (typeof (sdk as Partial<WandbSdk> | null)?.init !== 'function') {
    throw invalidArg(FIELD, `asks for Weights & Biases, but the installed ${SDK_PACKAGE} has no init()`, `install the version swerl declares: npm install ${SDK_PACKAGE}@^0.5`);
  }
  return sdk as WandbSdk;
}

/**
 * The SDK's init installs process.once handlers for SIGINT (finish, then process.exit()),
 * SIGTERM and beforeExit. They would cut swerl's clean stop on Ctrl-C short (episodes left
 * open, the step unsaved), so the handlers that appear while it starts are removed; the
 * tracker's close() finishes the run instead.
 */
const SDK_EVENTS = ['SIGINT', 'SIGTERM', 'beforeExit'] as const;

async function withoutNewProcessHandlers<T>(start: () => Promise<T>): Promise<T> {
  const before = SDK_EVENTS.map((event) => new Set(process.rawListeners(event)));
  try {
    return await start();
  } finally {
    SDK_EVENTS.forEach((event, i) => {
      for (const listener of process.rawListeners(event)) {
        if (!before[i]!.has(listener)) process.removeListener(event, listener as (...args: unknown[]) => void);
      }
    });
  }
}

export interface WandbSink {
  log(entry: StepScalars): void;
  close(): Promise<void>;
}

export async function openWandb(
  options: WandbOptions,
  run: { name: string; config: unknown; history: readonly StepScalars[] },
  load: WandbLoader = importWandbSdk,
): Promise<WandbSink> {
  const sdk = await loadSdk(load);
  const init = { project: options.project, ...(options.entity !== undefined ? { entity: options.entity } : {}), name: options.name ?? run.name, config: run.config };
  const wandbRun = await withoutNewProcessHandlers(() => sdk.init(init)).catch((error: unknown) => {
    throw new SwerlError(
      'ERR_SWERL_REMOTE',
      `Weights & Biases could not start a run in project ${JSON.stringify(options.project)}: ${(error as Error)?.message ?? String(error)}; ` +
        `set WANDB_API_KEY (or keep the key in ~/.netrc), check that the W&B server can be reached (WANDB_BASE_URL), or set ${FIELD} to null`,
    );
  });
  // A fresh object each call: the SDK writes _step into the one it is given.
  const log = ({ step, scalars }: StepScalars) => {
    if (scalars.size > 0) wandbRun.log(Object.fromEntries(scalars), step);
  };
  for (const entry of run.history) log(entry);
  return { log, close: () => wandbRun.finish() };
}
