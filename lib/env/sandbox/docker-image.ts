/** Images on the Docker host: single-layer archives built here and loaded, and task images pulled. */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';

import type Docker from 'dockerode';

import { SwerlError } from '../../errors.js';
import { errorMessage, statusOf } from './docker-errors.js';
import { tarArchive, type TarEntry } from './tar.js';

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

export interface ImageConfig {
  Env?: string[];
  Cmd?: string[];
  WorkingDir?: string;
  Labels?: Record<string, string>;
}

/**
 * A `docker save`-format archive of a one-layer image holding `entries`, tagged `name`. Its
 * config is dated at the epoch, so the same entries always give the same image id: two
 * processes loading it at once load the same image. The config's labels get
 * swerl.layer=<the layer's digest>, to tell whether a stored image has this content.
 */
export function imageArchive(name: string, entries: readonly TarEntry[], config: ImageConfig = {}): { archive: Buffer; layerDigest: string } {
  const layer = tarArchive(entries);
  const layerDigest = sha256(layer);
  const epoch = '1970-01-01T00:00:00Z';
  const arch = process.arch === 'x64' ? 'amd64' : process.arch === 'ia32' ? '386' : process.arch;
  const configJson = Buffer.from(
    JSON.stringify({
      architecture: arch,
      os: 'linux',
      created: epoch,
      config: { ...config, Labels: { ...config.Labels, 'swerl.layer': layerDigest } },
      rootfs: { type: 'layers', diff_ids: [`sha256:${layerDigest}`] },
      history: [{ created: epoch, created_by: 'swerl' }],
    }),
  );
  const configDigest = sha256(configJson);
  const manifest = Buffer.from(JSON.stringify([{ Config: `${configDigest}.json`, RepoTags: [name], Layers: [`${layerDigest}/layer.tar`] }]));
  const archive = tarArchive([
    { name: `${layerDigest}/`, type: 'dir' },
    { name: `${layerDigest}/layer.tar`, data: layer },
    { name: `${configDigest}.json`, data: configJson },
    { name: 'manifest.json', data: manifest },
  ]);
  return { archive, layerDigest };
}

/** Loads an archive from imageArchive (POST /images/load: the same on Docker and Podman). */
export async function loadImageArchive(docker: Docker, archive: Buffer): Promise<void> {
  let text: string;
  try {
    const response = await docker.loadImage(Readable.from([archive]));
    text = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      response.on('error', reject);
    });
  } catch (error) {
    throw new SwerlError('ERR_SWERL_SANDBOX', `could not load an image: ${errorMessage(error)}`);
  }
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    let message: { error?: string; errorDetail?: { message?: string } };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      continue;
    }
    if (message.error || message.errorDetail) {
      throw new SwerlError('ERR_SWERL_SANDBOX', `could not load an image: ${message.error ?? message.errorDetail?.message}`);
    }
  }
}

export async function pullIfMissing(docker: Docker, image: string): Promise<void> {
  try {
    await docker.getImage(image).inspect();
    return;
  } catch (error) {
    if (statusOf(error) !== 404) throw new SwerlError('ERR_SWERL_SANDBOX', `could not inspect image ${image}: ${errorMessage(error)}`);
  }
  const progress = (line: string) => process.stderr.write(`\rswerl: pulling ${image}: ${line}`.slice(0, 160).padEnd(80));
  try {
    const stream = await docker.pull(image);
    const layers = new Map<string, { current: number; total: number }>();
    await new Promise<void>((resolve, reject) => {
      docker.modem.followProgress(
        stream,
        (error: Error | null, output: { error?: string }[]) => {
          const failed = error?.message ?? output?.find((o) => o.error)?.error;
          if (failed) reject(new Error(failed));
          else resolve();
        },
        (event: { id?: string; status?: string; progressDetail?: { current?: number; total?: number } }) => {
          if (event.id && event.progressDetail?.total) layers.set(event.id, { current: event.progressDetail.current ?? 0, total: event.progressDetail.total });
          const done = [...layers.values()].reduce((a, l) => a + l.current, 0);
          const total = [...layers.values()].reduce((a, l) => a + l.total, 0);
          progress(total ? `${(done / 1e6).toFixed(0)} / ${(total / 1e6).toFixed(0)} MB` : (event.status ?? ''));
        },
      );
    });
    process.stderr.write(`\rswerl: pulled ${image}\n`);
  } catch (error) {
    process.stderr.write('\n');
    throw new SwerlError(
      'ERR_SWERL_SANDBOX',
      `image ${image} is not on the Docker host and pulling it failed (${errorMessage(error)}); ` +
        'pull it where the registry is reachable and load it here (docker save IMAGE | docker load), ' +
        "build it with SWE-bench's harness (python -m swebench.harness.prepare_images), " +
        'or run the rows on the local backend with a folder of clones (--repos DIR)',
    );
  }
}
