/**
 * Run by local-root.test.ts as another user: makes a local backend as swerl does (argv[2]: its
 * options as JSON) and, with argv[3] "sandbox", one sandbox that runs `id -u`. Prints one JSON
 * line: { ok, root, uid } or { ok: false, code, message }.
 */
import { LocalSandboxBackend } from '../../../../lib/env/sandbox/local.js';

const [options = '{}', what = 'backend'] = process.argv.slice(2);
try {
  const backend = new LocalSandboxBackend(JSON.parse(options));
  let uid: string | undefined;
  if (what === 'sandbox') {
    const sandbox = await backend.create();
    uid = (await sandbox.exec('id -u')).output.trim();
    await sandbox.destroy();
  }
  console.log(JSON.stringify({ ok: true, root: backend.options.root, uid }));
} catch (error) {
  const e = error as { code?: string; message: string };
  console.log(JSON.stringify({ ok: false, code: e.code, message: e.message }));
}
