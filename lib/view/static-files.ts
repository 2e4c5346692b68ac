/**
 * The page's files (lib/view/static: HTML, JS modules, CSS), served by name from a list made
 * at startup, so that no request path ever reaches the file system.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { internalError } from '../errors.js';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface StaticFile {
  body: Buffer;
  contentType: string;
}

/**
 * lib/view/static beside this module when run from source; from the compiled dist/lib/view,
 * the package's lib/view/static (tsc copies no assets; the package ships lib/).
 */
export function staticDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.join(here, 'static'), path.resolve(here, '../../../lib/view/static')];
  const found = candidates.find((dir) => existsSync(path.join(dir, 'index.html')));
  if (!found) throw internalError(`the viewer's page is missing: no index.html in ${candidates.join(' or ')}`);
  return found;
}

/** Every servable file of the folder, by name, read once (they are small). */
export function loadStaticFiles(dir = staticDir()): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  for (const name of readdirSync(dir)) {
    const contentType = CONTENT_TYPES[path.extname(name)];
    if (contentType) files.set(name, { body: readFileSync(path.join(dir, name)), contentType });
  }
  return files;
}
