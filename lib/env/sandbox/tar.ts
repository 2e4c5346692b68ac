/** A ustar writer: enough of tar to build image layers and image archives in memory. */
import { SwerlError } from '../../errors.js';

export interface TarEntry {
  /** Path inside the archive, relative ("usr/bin", "a/b.txt"); folders may end with "/". */
  name: string;
  type?: 'file' | 'dir' | 'symlink';
  data?: Uint8Array;
  mode?: number;
  linkname?: string;
  /** Owner and group ids (default: root). */
  uid?: number;
  gid?: number;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function tarHeader(entry: TarEntry, size: number): Buffer {
  const header = Buffer.alloc(512);
  let name = entry.name;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', name.length - 2);
    prefix = name.slice(0, cut);
    name = name.slice(cut + 1);
    if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155) throw new SwerlError('ERR_SWERL_SANDBOX', `tar entry name too long: ${entry.name}`);
  }
  const type = entry.type ?? 'file';
  header.write(name, 0, 100, 'utf8');
  header.write(octal(entry.mode ?? (type === 'file' ? 0o644 : type === 'dir' ? 0o755 : 0o777), 8), 100);
  header.write(octal(entry.uid ?? 0, 8), 108);
  header.write(octal(entry.gid ?? 0, 8), 116);
  header.write(octal(size, 12), 124);
  header.write(octal(0, 12), 136); // mtime: the epoch, so that the same entries give the same bytes
  header.write(' '.repeat(8), 148); // checksum, counted as spaces
  header.write(type === 'file' ? '0' : type === 'dir' ? '5' : '2', 156);
  if (entry.linkname !== undefined) header.write(entry.linkname, 157, 100, 'utf8');
  header.write('ustar\0', 257);
  header.write('00', 263);
  header.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(octal(sum, 7) + ' ', 148);
  return header;
}

/** A ustar archive of the entries (owned by root unless they say), dated at the epoch: deterministic bytes. */
export function tarArchive(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = entry.type === undefined || entry.type === 'file' ? Buffer.from(entry.data ?? new Uint8Array()) : Buffer.alloc(0);
    parts.push(tarHeader(entry, data.length), data);
    if (data.length % 512) parts.push(Buffer.alloc(512 - (data.length % 512)));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}
