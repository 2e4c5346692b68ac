/**
 * A free pair of TCP ports (p and p + 1) for a process group's rendezvous: rank 0 serves its
 * store at p, and async rollouts' producers gather on a group of their own at p + 1.
 *
 * Chosen below Linux's ephemeral range (32768-60999 by default): a port there that was free a
 * moment ago can be taken by any outgoing connection on the machine (a Gloo pair, an HTTP
 * client) before rank 0 binds it, which is how two runs sharing a machine collided.
 */
import net from 'node:net';
import { SwerlError } from '../errors.js';

const LOW = 20_000;
const HIGH = 32_000;

function bindable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port p in [20000, 32000) where p and p + 1 both bind on host now. */
export async function freePortPair(host = '127.0.0.1', attempts = 64): Promise<number> {
  for (let i = 0; i < attempts; i += 1) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW - 1));
    if ((await bindable(host, port)) && (await bindable(host, port + 1))) return port;
  }
  throw new SwerlError('ERR_SWERL_DIST', `no free pair of ports in ${LOW}-${HIGH} on ${host} after ${attempts} tries; pass --master-port (or MASTER_PORT) with a free port and the one after it`);
}
