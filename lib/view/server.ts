/**
 * `swerl view`: a local web page over run directories (training curves, trajectories, eval
 * reports), served by node:http on the loopback interface by default. The page is static
 * files from lib/view/static and talks to the JSON API of api.ts; it needs nothing outside
 * this server.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { invalidArg } from '../errors.js';
import { answerApi } from './api.js';
import { ViewHttpError, notFound } from './http-error.js';
import { resolveRunDirs } from './run-dirs.js';
import { loadStaticFiles, type StaticFile } from './static-files.js';
import { ViewRun } from './view-run.js';

export interface ViewerOptions {
  /** Run directories, eval output folders, or folders of those. */
  dirs: string[];
  /** Default 127.0.0.1: the page shows everything the runs hold, so it stays on this machine unless asked. */
  host?: string;
  /** Default 0: any free port (the url says which). */
  port?: number;
}

export interface Viewer {
  /** The page, e.g. http://127.0.0.1:36123/ */
  url: string;
  /** The runs shown, in the API's order (their ids). */
  runs: { name: string; dir: string }[];
  close(): Promise<void>;
}

// Model output is shown on the page; should any of it ever slip into markup, it still cannot
// load or run anything.
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

function isLoopback(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || host.startsWith('127.');
}

/** The Host header's name without its port ('[::1]:80' -> '[::1]'). */
function hostName(header: string | undefined): string {
  if (!header) return '';
  return header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : header.replace(/:\d+$/, '');
}

function send(res: http.ServerResponse, status: number, contentType: string, body: string | Buffer, cache: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': cache });
  res.end(body);
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value), 'no-store');
}

function validateOptions(options: ViewerOptions): { host: string; port: number } {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw invalidArg('port', `is ${port}`, 'use an integer from 0 (any free port) to 65535');
  if (host === '') throw invalidArg('host', 'is empty', 'use 127.0.0.1 (this machine only) or an interface address');
  return { host, port };
}

export async function startViewer(options: ViewerOptions): Promise<Viewer> {
  const { host, port } = validateOptions(options);
  const runs = resolveRunDirs(options.dirs).map((location, id) => new ViewRun(id, location.name, location.dir));
  const files = loadStaticFiles();
  // On loopback, a page of another site may reach this server through a domain it points at
  // 127.0.0.1 (DNS rebinding); its requests name that domain as Host, so they are refused.
  const checkHost = isLoopback(host);

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof ViewHttpError) sendJson(res, error.status, { error: error.message });
      else sendJson(res, 500, { error: (error as Error).message ?? String(error) });
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new ViewHttpError(405, `${req.method} is not served: the viewer only reads`);
    if (checkHost && !isLoopback(hostName(req.headers.host))) throw new ViewHttpError(403, `Host ${JSON.stringify(req.headers.host)} is not this machine`);
    const url = new URL(req.url ?? '/', 'http://viewer');
    const segments = url.pathname.split('/').slice(1).map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        throw new ViewHttpError(400, `the path ${JSON.stringify(url.pathname)} is not valid percent-encoding`);
      }
    });
    if (segments[0] === 'api') return sendJson(res, 200, await answerApi(runs, segments.slice(1), url.searchParams));
    const name = url.pathname === '/' ? 'index.html' : segments[0] === 'static' && segments.length === 2 ? segments[1]! : undefined;
    const file: StaticFile | undefined = name === undefined ? undefined : files.get(name);
    if (!file) throw notFound(url.pathname);
    send(res, 200, file.contentType, file.body, 'no-cache');
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost}:${address.port}/`,
    runs: runs.map((run) => ({ name: run.name, dir: run.dir })),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
