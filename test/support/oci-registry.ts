/**
 * A read-only OCI distribution registry on loopback serving one image (an OCI manifest over one
 * uncompressed tar layer): enough for a Docker API server to pull it, so the docker backend's
 * pull of a missing task image is tested against real HTTP.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { tarArchive, type TarEntry } from '../../lib/env/sandbox/tar.js';

export interface Registry {
  /** host:port */
  host: string;
  /** Requests served, "METHOD path" (to check the image came from here). */
  requests: string[];
  close(): Promise<void>;
}

const digest = (data: Uint8Array) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

export async function startRegistry(repository: string, tag: string, entries: readonly TarEntry[]): Promise<Registry> {
  const layer = tarArchive(entries);
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const config = Buffer.from(JSON.stringify({ architecture: arch, os: 'linux', config: {}, rootfs: { type: 'layers', diff_ids: [digest(layer)] } }));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: digest(config), size: config.length },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: digest(layer), size: layer.length }],
    }),
  );
  const blobs = new Map([
    [digest(config), config],
    [digest(layer), layer],
  ]);
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const url = req.url ?? '';
    requests.push(`${req.method} ${url}`);
    const send = (status: number, body: Buffer | null, type = 'application/octet-stream', extra: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': type, 'Docker-Distribution-API-Version': 'registry/2.0', ...(body ? { 'Content-Length': String(body.length) } : {}), ...extra });
      res.end(req.method === 'HEAD' ? undefined : (body ?? undefined));
    };
    if (url === '/v2/' || url === '/v2') return send(200, Buffer.from('{}'), 'application/json');
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/?]+)$/.exec(url);
    if (!m || m[1] !== repository) return send(404, Buffer.from('{"errors":[{"code":"NAME_UNKNOWN"}]}'), 'application/json');
    if (m[2] === 'manifests' && (m[3] === tag || m[3] === digest(manifest))) {
      return send(200, manifest, 'application/vnd.oci.image.manifest.v1+json', { 'Docker-Content-Digest': digest(manifest) });
    }
    const blob = m[2] === 'blobs' ? blobs.get(m[3]!) : undefined;
    if (blob) return send(200, blob, 'application/octet-stream', { 'Docker-Content-Digest': m[3]! });
    return send(404, Buffer.from('{"errors":[{"code":"MANIFEST_UNKNOWN"}]}'), 'application/json');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
