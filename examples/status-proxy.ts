/**
 * One stable address for the status page of a cluster whose members come and go (the demo kills
 * them): each request goes to the member that answered last, else to the next one that answers.
 * The page itself polls relative URLs, so it keeps refreshing through whichever member is up and
 * names that member in its header.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StatusProxy {
  readonly url: string;
  close(): Promise<void>;
}

export async function startStatusProxy(members: () => string[]): Promise<StatusProxy> {
  let preferred = 0;
  const server: Server = createServer(async (req, res) => {
    const targets = members();
    for (let i = 0; i < targets.length; i++) {
      const index = (preferred + i) % targets.length;
      try {
        const upstream = await fetch(`${targets[index]}${req.url ?? '/'}`, {
          headers: req.headers.authorization ? { authorization: req.headers.authorization } : {},
          signal: AbortSignal.timeout(1500),
        });
        const body = Buffer.from(await upstream.arrayBuffer());
        preferred = index;
        res.statusCode = upstream.status;
        for (const h of ['content-type', 'cache-control', 'www-authenticate']) {
          const v = upstream.headers.get(h);
          if (v !== null) res.setHeader(h, v);
        }
        res.end(body);
        return;
      } catch {
        // that member is down (killed, restarting): try the next one
      }
    }
    res.statusCode = 503;
    res.end('no member answers\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
