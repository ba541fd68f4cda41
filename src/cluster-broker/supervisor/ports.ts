import { createServer, type Server } from 'node:net';

/** Free ports held open until `release()`, so nothing else in this process is given them meanwhile. */
export interface PortReservation {
  ports: number[];
  release(): Promise<void>;
}

/**
 * `count` distinct free ports on `host`, each held by a listening socket until `release()`: a
 * socket bound to port 0 later (a proxy, another reservation) cannot be given one of them. Call
 * release() just before the processes that will listen on them start.
 */
export async function reserveFreePorts(count: number, host = '127.0.0.1'): Promise<PortReservation> {
  const servers: Server[] = [];
  const release = (): Promise<void> =>
    Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve())))).then(
      () => undefined,
    );
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      ports.push(
        await new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, host, () => {
            const addr = server.address();
            resolve(typeof addr === 'object' && addr !== null ? addr.port : 0);
          });
        }),
      );
      // a forgotten reservation does not keep the process alive
      server.unref();
    }
    return { ports, release };
  } catch (err) {
    await release();
    throw err;
  }
}

/** `count` distinct ports that were free a moment ago (released at once: another process may take one). */
export async function allocateFreePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const reservation = await reserveFreePorts(count, host);
  await reservation.release();
  return reservation.ports;
}

/** Which of `ports` cannot be bound on `host` right now (taken by another process), in order. */
export async function portsInUse(ports: readonly number[], host = '127.0.0.1'): Promise<number[]> {
  const taken: number[] = [];
  for (const port of ports) {
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, host, () => resolve(true));
    });
    if (free) await new Promise<void>((resolve) => server.close(() => resolve()));
    else taken.push(port);
  }
  return taken;
}
