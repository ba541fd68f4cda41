import { createServer, type Server } from 'node:net';

/**
 * `count` distinct free TCP ports on 127.0.0.1. All listeners are held open together so the OS
 * cannot hand out the same port twice, then closed; another process may still grab one before
 * the member binds it (a small window that tests on a shared machine accept).
 */
export async function allocateFreePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: Server[] = [];
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
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
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
