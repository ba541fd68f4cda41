/**
 * A bulk publisher in its own process (so the probe in the runner times the broker, not the
 * publisher's event loop): `tsx test/limits/publisher-child.ts PORT ADDRESS COUNT BODY_BYTES CONNECTIONS`.
 * Prints one JSON line `{"published":N,"seconds":S}` when every message was accepted.
 */
import { close, open, publish } from './load.js';

const [port, address, count, bodyBytes, connections] = process.argv.slice(2);
const n = Number(connections);
const total = Number(count);
const body = Buffer.alloc(Number(bodyBytes), 0x61);
const conns = await Promise.all(Array.from({ length: n }, (_, i) => open(Number(port), `limits-pub${i}`)));
const each = Math.floor(total / n);
const t0 = performance.now();
await Promise.all(conns.map((c, i) => publish(c, address!, i === 0 ? total - each * (n - 1) : each, body)));
const seconds = (performance.now() - t0) / 1000;
for (const c of conns) await close(c);
process.stdout.write(`${JSON.stringify({ published: total, seconds })}\n`);
