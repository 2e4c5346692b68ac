/** Reading dockerode's errors: the daemon's message (its JSON body) and the HTTP status. */

export function errorMessage(error: unknown): string {
  const e = error as { json?: { message?: string; cause?: string }; message?: string };
  return (e?.json?.message ?? e?.message ?? String(error)).trim();
}

export function statusOf(error: unknown): number | undefined {
  return (error as { statusCode?: number })?.statusCode;
}
