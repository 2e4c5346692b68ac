/** Reading dockerode's errors: the daemon's message (its JSON body), the HTTP status, a lost connection. */

export function errorMessage(error: unknown): string {
  const e = error as { json?: { message?: string; cause?: string }; message?: string };
  return (e?.json?.message ?? e?.message ?? String(error)).trim();
}

export function statusOf(error: unknown): number | undefined {
  return (error as { statusCode?: number })?.statusCode;
}

/** Node's codes for a daemon that cannot be reached or went away mid-request. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ENOENT', 'EACCES', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH',
  'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN', 'EPROTO', 'ERR_STREAM_PREMATURE_CLOSE',
]);

/**
 * Why the daemon could not be reached, when `error` is a failure of the connection itself
 * (refused, socket gone, reset, timed out, TLS refused) rather than an answer; else null.
 */
export function connectionFailure(error: unknown): string | null {
  if (statusOf(error) !== undefined) return null; // the daemon answered
  const code = (error as { code?: unknown })?.code;
  const message = errorMessage(error);
  const tls = typeof code === 'string' && /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/.test(code);
  if ((typeof code === 'string' && (CONNECTION_CODES.has(code) || tls)) || /socket hang up/i.test(message)) {
    return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return null;
}
