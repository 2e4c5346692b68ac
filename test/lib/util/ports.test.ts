// A free port pair for a process group's rendezvous: below the ephemeral range, both ports
// bindable, a held port never handed out, and a clear refusal where nothing can bind.
import net from 'node:net';

import t from 'tap';

import { SwerlError } from '../../../lib/errors.js';
import { freePortPair } from '../../../lib/util/ports.js';

const listen = (port: number, host = '127.0.0.1') =>
  new Promise<net.Server>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port, host, exclusive: true }, () => resolve(server));
  });

t.test('freePortPair: p and p + 1 both bind, below 32768 (out of reach of outgoing connections)', async (t) => {
  for (let i = 0; i < 20; i += 1) {
    const port = await freePortPair();
    t.ok(port >= 20_000 && port + 1 < 32_768, `${port} in range`);
    const servers = [await listen(port), await listen(port + 1)];
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
});

t.test('freePortPair: never a pair touching a port in use', async (t) => {
  // Hold every even port of a band; any pair in it has one held port, so none is chosen there.
  const held: net.Server[] = [];
  for (let port = 20_000; port < 32_000; port += 2) {
    try {
      held.push(await listen(port));
    } catch {
      // taken by someone else: as good as held
    }
  }
  t.teardown(() => held.forEach((s) => s.close()));
  await t.rejects(freePortPair('127.0.0.1', 16), { code: 'ERR_SWERL_DIST', message: /--master-port/ });
});

t.test('freePortPair: an address this machine does not have is refused by name', async (t) => {
  const error = await freePortPair('192.0.2.1', 4).catch((e: unknown) => e);
  t.ok(error instanceof SwerlError);
  t.match((error as SwerlError).message, /192\.0\.2\.1.*--master-port/);
});
