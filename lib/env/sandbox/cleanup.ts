/**
 * No sandbox outlives its process: every live sandbox is tracked here. On SIGINT, SIGTERM or
 * SIGHUP they are all destroyed (waiting up to 15 s for async cleanup such as container
 * removal; those the application made meanwhile, or was making, are removed synchronously
 * after), then the signal is raised again so that it takes its usual course: the process
 * ends by it unless the application keeps a handler of its own. On a plain exit the
 * synchronous part of each cleanup runs (killing process groups, removing folders). After
 * SIGKILL nothing can run here; the backends' reapers clean up at the next start.
 *
 * A create in flight is cancelled, not raced: the signal path asks it to stop at its next
 * step and waits for it to undo itself, because an fs call already queued on libuv's thread
 * pool can land after a synchronous removal and bring a half-made folder back.
 *
 * SWERL_NO_SIGNAL_HANDLERS=1 leaves signals alone (the application must then close its envs).
 */
import { SwerlError } from '../../errors.js';

export interface Tracked {
  destroy(): Promise<void>;
  /** What can still be done synchronously at process exit. */
  destroySync(): void;
}

const live = new Set<Tracked>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** How long the signal path waits for async cleanup (e.g. container removal). */
const SIGNAL_CLEANUP_MS = 15_000;
let exitHookInstalled = false;
/** Set while a signal's cleanup runs: `over` settles once it is done (if the process lives on). */
let ending: { signal: NodeJS.Signals; over: Promise<void> } | null = null;
/** Signals our handler listens to now (a handler removes itself when it fires). */
const armed = new Set<NodeJS.Signals>();

export function track(sandbox: Tracked): () => void {
  install();
  live.add(sandbox);
  return () => live.delete(sandbox);
}

/** A create in flight, as the signal path sees it. */
export interface CreateGuard {
  /** Throws if a signal cancelled the create: call after every await of the create. */
  checkpoint(): void;
  /**
   * The create is over (made, or failed and undone). A cancelled create returns only once the
   * signal's cleanup is done: its error must not end the process (as an unhandled rejection)
   * while other creates are still undoing themselves.
   */
  finish(): Promise<void>;
}

/**
 * Tracks a create before its first write. `undoSync` removes whatever it made so far. While a
 * signal's cleanup runs, a new create waits for it and is refused: it would outlive it.
 */
export async function guardCreate(undoSync: () => void): Promise<CreateGuard> {
  if (ending) {
    const { signal, over } = ending;
    await over;
    throw new SwerlError('ERR_SWERL_SANDBOX', `no sandbox was made: the process got ${signal} while this create waited to start`);
  }
  let cancelledBy: NodeJS.Signals | null = null;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const untrack = track({
    destroy: async () => {
      cancelledBy = ending?.signal ?? 'SIGTERM';
      await done;
      undoSync();
    },
    destroySync: undoSync,
  });
  return {
    checkpoint() {
      if (cancelledBy) throw new SwerlError('ERR_SWERL_SANDBOX', `the sandbox create was cancelled: the process got ${cancelledBy}`);
    },
    async finish() {
      untrack();
      finished();
      if (cancelledBy && ending) await ending.over;
    },
  };
}

/** How many sandboxes this process holds now. */
export function liveSandboxCount(): number {
  return live.size;
}

function install(): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const sandbox of live) {
        try {
          sandbox.destroySync();
        } catch {
          // exit cannot wait or report; the reaper handles whatever is left
        }
      }
    });
  }
  if (process.env.SWERL_NO_SIGNAL_HANDLERS === '1') return;
  for (const signal of SIGNALS) {
    if (armed.has(signal) || ending?.signal === signal) continue;
    armed.add(signal);
    const onSignal = async () => {
      process.removeListener(signal, onSignal);
      armed.delete(signal);
      let over!: () => void;
      ending = { signal, over: new Promise<void>((resolve) => (over = resolve)) };
      const timer = new Promise((resolve) => setTimeout(resolve, SIGNAL_CLEANUP_MS).unref());
      await Promise.race([Promise.allSettled([...live].map((s) => s.destroy())), timer]);
      // The application ran on while those were removed, and may have made more (or been
      // mid-way through making one): the signal ends the process without an 'exit' event.
      for (const sandbox of live) {
        try {
          sandbox.destroySync();
        } catch {
          // the reaper handles whatever is left
        }
      }
      process.kill(process.pid, signal);
      // Still here: the application keeps a handler of its own. The signal raised again is
      // handled at the loop's next poll; this handler is armed again only after it, or it
      // would take that signal for a new one (and cancel the creates made since).
      setImmediate(() =>
        setImmediate(() => {
          ending = null;
          over();
          if (live.size > 0) install();
        }),
      );
    };
    process.on(signal, onSignal);
  }
}
