/**
 * No sandbox outlives its process: every live sandbox is tracked here. On SIGINT, SIGTERM or
 * SIGHUP they are all destroyed (waiting up to 15 s for async cleanup such as container
 * removal; those the application made meanwhile, or was making, are removed synchronously
 * after), then the signal is raised again so that it takes its usual course: the process
 * ends by it unless the application keeps a handler of its own. On a plain exit the
 * synchronous part of each cleanup runs (killing process groups, removing folders). After
 * SIGKILL nothing can run here; the backends' reapers clean up at the next start.
 *
 * SWERL_NO_SIGNAL_HANDLERS=1 leaves signals alone (the application must then close its envs).
 */
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
/** Signals our handler listens to now (a handler removes itself when it fires). */
const armed = new Set<NodeJS.Signals>();

export function track(sandbox: Tracked): () => void {
  install();
  live.add(sandbox);
  return () => live.delete(sandbox);
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
    if (armed.has(signal)) continue;
    armed.add(signal);
    const onSignal = async () => {
      process.removeListener(signal, onSignal);
      armed.delete(signal);
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
    };
    process.on(signal, onSignal);
  }
}
