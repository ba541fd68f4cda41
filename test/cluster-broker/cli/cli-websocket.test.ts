/** `--ws-port` and `--ws-allow-origin` of the single-node broker (docs/websocket.md#broker). */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { runCli } from '../../../src/cluster-broker/cli/run-cli.js';
import { connect } from '../../../src/index.js';
import { waitFor } from '../../support/net.js';

function sink(): { lines: string[]; write(s: string): boolean } {
  return {
    lines: [],
    write(s: string) {
      this.lines.push(s);
      return true;
    },
  };
}

/** The HTTP status of an upgrade from `origin`: 101 when accepted. */
function upgradeStatus(url: string, origin: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, ['amqp'], { headers: { Origin: origin } });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => {
      resolve(101);
      ws.close();
    });
    ws.once('error', () => {});
  });
}

describe('quorate-broker --ws-port', () => {
  it('names the WebSocket port in the ready line, serves AMQP on it and keeps to --ws-allow-origin', async () => {
    const out = sink();
    const signals = new EventEmitter();
    const done = runCli(['--port', '0', '--ws-port', '0', '--ws-allow-origin', 'https://app.example'], {
      stdout: out,
      stderr: sink(),
      signals,
    });
    try {
      await waitFor(() => out.lines.length > 0, {
        timeoutMs: 30_000,
        what: 'the ready line',
        intervalMs: 10,
      });
      const ready = JSON.parse(out.lines[0]!) as { ready: boolean; amqpPort: number; wsPort: number };
      expect(ready.wsPort).toEqual(expect.any(Number));
      expect(ready.wsPort).not.toBe(ready.amqpPort);
      const url = `ws://127.0.0.1:${ready.wsPort}`;
      const conn = await connect({ urls: [url], reconnect: false, timeoutMs: 30_000 });
      expect(conn.url).toBe(url);
      await conn.close();
      expect(await upgradeStatus(url, 'https://app.example')).toBe(101);
      expect(await upgradeStatus(url, 'https://evil.example')).toBe(403);
    } finally {
      signals.emit('SIGTERM');
      expect(await done).toBe(0);
    }
  });

  it('without --ws-port the ready line has no wsPort', async () => {
    const out = sink();
    const signals = new EventEmitter();
    const done = runCli(['--port', '0'], { stdout: out, stderr: sink(), signals });
    await waitFor(() => out.lines.length > 0, { timeoutMs: 30_000, what: 'the ready line', intervalMs: 10 });
    signals.emit('SIGTERM');
    expect(await done).toBe(0);
    expect(JSON.parse(out.lines[0]!)).not.toHaveProperty('wsPort');
  });
});
