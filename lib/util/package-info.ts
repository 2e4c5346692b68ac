/** The installed swerl package's own package.json, found from this file (lib/ in a checkout, dist/lib/ when built). */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { SwerlError } from '../errors.js';

export interface PackageInfo {
  name: string;
  version: string;
  /** The package's root folder. */
  root: string;
}

let cached: PackageInfo | undefined;

export function packageInfo(): PackageInfo {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const json = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (json.name === 'swerl') return (cached = { name: json.name, version: json.version ?? '0.0.0', root: dir });
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new SwerlError('ERR_SWERL_NATIVE_LOAD', `swerl's package.json was not found above ${fileURLToPath(import.meta.url)}; reinstall the package`);
    dir = parent;
  }
}
