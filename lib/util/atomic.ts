/** Writes that never leave a half-written file: write a temporary sibling, then rename. */
import fs from 'node:fs/promises';
import path from 'node:path';

export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    await fs.writeFile(tmp, data);
    await fs.rename(tmp, file);
  } catch (error) {
    await fs.rm(tmp, { force: true });
    throw error;
  }
}

export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Fills a fresh temporary sibling of `dir`, then swaps it in: readers see the old directory
 * or the new one, never a half-written one. A directory cannot be renamed over a non-empty
 * one, so the old one steps aside first (to `${dir}.old-*`, removed after the swap); if the
 * process dies between the two renames, that sibling holds the last complete version.
 */
export async function writeDirectoryAtomic(dir: string, fill: (tmpDir: string) => Promise<void>): Promise<void> {
  const parent = path.dirname(path.resolve(dir));
  await fs.mkdir(parent, { recursive: true });
  const stamp = `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  const tmp = `${dir}.tmp-${stamp}`;
  const old = `${dir}.old-${stamp}`;
  await fs.mkdir(tmp);
  try {
    await fill(tmp);
    await syncDirectory(tmp);
  } catch (error) {
    await fs.rm(tmp, { recursive: true, force: true });
    throw error;
  }
  let movedOld = false;
  try {
    await fs.rename(dir, old);
    movedOld = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      await fs.rm(tmp, { recursive: true, force: true });
      throw error;
    }
  }
  await fs.rename(tmp, dir);
  await syncDirectory(parent);
  if (movedOld) await fs.rm(old, { recursive: true, force: true });
}

/** fsync of a directory, so the names in it survive a crash (best effort where unsupported). */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on directories; the rename is still atomic there.
  } finally {
    await handle?.close();
  }
}
