/**
 * The swerl base image: a nearly empty root (the usual top-level folders, the host's links
 * such as /bin -> usr/bin), built here and loaded through the API; sandboxes bind the host's
 * toolchain folders into it.
 */
import type Docker from 'dockerode';

import { SwerlError } from '../../errors.js';
import { errorMessage, statusOf } from './docker-errors.js';
import { imageArchive, loadImageArchive } from './docker-image.js';
import { hostLayout } from './host-layout.js';
import { baseEnvironment } from './local.js';
import type { TarEntry } from './tar.js';

export interface BaseImageLayout {
  links: TarEntry[];
  folders: string[];
}

/** The host toolchain (host-layout.ts) as the base image needs it: links as tar entries. */
export function hostLayoutEntries(): BaseImageLayout {
  const { folders, links } = hostLayout();
  return { folders, links: links.map((link) => ({ name: link.path.slice(1), type: 'symlink', linkname: link.target })) };
}

function baseImageEntries(layout: BaseImageLayout): TarEntry[] {
  const dirs: TarEntry[] = ['dev', 'etc', 'home', 'mnt', 'opt', 'proc', 'root', 'run', 'srv', 'sys', 'testbed', 'usr', 'var']
    .concat(layout.folders.map((f) => f.slice(1)))
    .filter((name, i, all) => all.indexOf(name) === i)
    .sort()
    .map((name) => ({ name: `${name}/`, type: 'dir', mode: name === 'root' ? 0o700 : 0o755 }));
  dirs.push({ name: 'tmp/', type: 'dir', mode: 0o1777 }, { name: 'var/tmp/', type: 'dir', mode: 0o1777 });
  return [...dirs, ...layout.links];
}

/** Builds the base image through the API unless an image of that name has this content already. */
export async function ensureBaseImageOn(docker: Docker, baseImage: string, layout: BaseImageLayout): Promise<void> {
  const { archive, layerDigest } = imageArchive(baseImage, baseImageEntries(layout), {
    Env: [`PATH=${baseEnvironment('').PATH}`],
    Cmd: ['sh'],
    Labels: { 'swerl.base': '1' },
  });
  const current = async () => {
    try {
      const info = await docker.getImage(baseImage).inspect();
      return info.Config?.Labels?.['swerl.layer'] === layerDigest;
    } catch (error) {
      if (statusOf(error) === 404) return false;
      throw new SwerlError('ERR_SWERL_SANDBOX', `could not inspect image ${baseImage}: ${errorMessage(error)}`);
    }
  };
  if (await current()) return;
  await loadImageArchive(docker, archive);
  if (!(await current())) throw new SwerlError('ERR_SWERL_SANDBOX', `loaded ${baseImage}, but the daemon does not show it with the expected content`);
}
