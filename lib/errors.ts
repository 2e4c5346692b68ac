/** Every error swerl throws, from TypeScript or from the native core, is a SwerlError. */
export type SwerlErrorCode =
  /** A bad argument or option; the message names the field and the fix. */
  | 'ERR_SWERL_INVALID_ARG'
  /** The native addon could not be loaded; the message says what was tried. */
  | 'ERR_SWERL_NATIVE_LOAD'
  /** libtorch raised an error inside the native core. */
  | 'ERR_SWERL_TORCH'
  /** The native core ran out of memory. */
  | 'ERR_SWERL_OUT_OF_MEMORY'
  /** Any other failure inside the native core. */
  | 'ERR_SWERL_NATIVE'
  /** A CUDA runtime or cuBLAS failure in the kernels, or CUDA asked of an addon built without it. */
  | 'ERR_SWERL_CUDA'
  /** An inference server refused a request or could not be reached; the message names the server. */
  | 'ERR_SWERL_REMOTE'
  /** A sandbox could not be created or used (not a failing command: those are results). */
  | 'ERR_SWERL_SANDBOX'
  /** A task file or row is malformed; the message names the file, line and field. */
  | 'ERR_SWERL_INVALID_TASK'
  /** A tokenizer's files are missing or malformed; the message names the file and the fix. */
  | 'ERR_SWERL_TOKENIZER'
  /** A checkpoint (safetensors files, their index) is missing or malformed; the message names the file and tensor. */
  | 'ERR_SWERL_CHECKPOINT'
  /** A numeric failure (a non-finite gradient norm, say); nothing was changed. */
  | 'ERR_SWERL_NUMERIC'
  /** The object was disposed; create a new one. */
  | 'ERR_SWERL_DISPOSED'
  /** The work was stopped from outside (Ctrl-C, a failed sibling rollout). */
  | 'ERR_SWERL_ABORTED'
  /** A process group failed: the rendezvous, or a collective whose peer stopped or timed out. */
  | 'ERR_SWERL_DIST'
  /** An invariant of swerl's own broke (a generator template, the async pipeline's order): a bug; report it with the message. */
  | 'ERR_SWERL_INTERNAL';

export class SwerlError extends Error {
  readonly code: SwerlErrorCode;

  // (code, message): the native core constructs it with this signature too.
  constructor(code: SwerlErrorCode, message: string) {
    super(message);
    this.name = 'SwerlError';
    this.code = code;
  }
}

/** An ERR_SWERL_INVALID_ARG error: `${field} ${problem}` and, when given, how to fix it. */
export function invalidArg(field: string, problem: string, fix?: string): SwerlError {
  return new SwerlError('ERR_SWERL_INVALID_ARG', `${field} ${problem}${fix ? `; ${fix}` : ''}`);
}

/** A sandbox or exec failure (ERR_SWERL_SANDBOX): infrastructure, worth another attempt with a fresh sandbox. */
export function isInfrastructureFault(error: unknown): boolean {
  return error instanceof SwerlError && error.code === 'ERR_SWERL_SANDBOX';
}

/** An ERR_SWERL_INTERNAL error: an invariant of swerl's own broke (a bug, not the caller's input). */
export function internalError(message: string): SwerlError {
  return new SwerlError('ERR_SWERL_INTERNAL', message);
}
