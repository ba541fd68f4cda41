import { describe, expect, it } from 'vitest';
import { ProtocolConnection, type SaslIdentity } from '../../src/protocol/index.js';
import { pair, RawPeer } from './harness.js';

const users = (mech: string, id: SaslIdentity) =>
  mech === 'ANONYMOUS' || (mech === 'PLAIN' && id.username === 'guest' && id.password === 'secret');

describe('SASL layer', () => {
  it('PLAIN success: identity reaches the authenticator, then AMQP opens', () => {
    const seen: [string, SaslIdentity][] = [];
    const p = pair(
      { sasl: { mechanism: 'PLAIN', username: 'guest', password: 'secret' } },
      {
        sasl: {
          authenticate: (m, id) => {
            seen.push([m, id]);
            return users(m, id);
          },
        },
      },
    );
    p.run();
    expect(seen).toEqual([['PLAIN', { username: 'guest', password: 'secret' }]]);
    expect(p.client.of('sasl-outcome')[0]).toMatchObject({ ok: true, code: 0 });
    expect(p.server.of('sasl-outcome')[0]).toMatchObject({ ok: true, mechanism: 'PLAIN' });
    expect(p.client.engine.state).toBe('open');
    expect(p.server.engine.state).toBe('open');
  });

  it('PLAIN failure: outcome auth, both sides closed without AMQP', () => {
    const p = pair(
      { sasl: { mechanism: 'PLAIN', username: 'guest', password: 'wrong' } },
      { sasl: { authenticate: users } },
    );
    p.run();
    expect(p.client.of('sasl-outcome')[0]).toMatchObject({ ok: false, code: 1 });
    expect(p.client.engine.state).toBe('closed');
    expect(p.server.engine.state).toBe('closed');
    expect(p.client.of('closed')[0].error?.condition).toBe('amqp:unauthorized-access');
    expect(p.server.of('remote-open')).toHaveLength(0);
  });

  it('ANONYMOUS with the default server policy', () => {
    const p = pair({ sasl: { mechanism: 'ANONYMOUS' } }, {});
    p.run();
    expect(p.client.engine.state).toBe('open');
    expect(p.server.of('sasl-outcome')[0]).toMatchObject({ ok: true, mechanism: 'ANONYMOUS' });
  });

  it('PLAIN refused by the default server policy (ANONYMOUS only)', () => {
    const p = pair({ sasl: { mechanism: 'PLAIN', username: 'a', password: 'b' } }, {});
    p.run();
    expect(p.client.engine.state).toBe('closed');
  });

  it('a mechanism the server does not offer: the client gives up', () => {
    const p = pair(
      { sasl: { mechanism: 'PLAIN', username: 'a', password: 'b' } },
      { sasl: { mechanisms: ['ANONYMOUS'] } },
    );
    p.run();
    expect(p.client.engine.state).toBe('closed');
    expect(p.client.of('closed')[0].error?.description).toMatch(/does not offer PLAIN/);
  });

  it('async authenticator: the engine waits, then resumes (with pipelined bytes buffered)', async () => {
    let wake = 0;
    let release!: (ok: boolean) => void;
    const p = pair(
      { sasl: { mechanism: 'PLAIN', username: 'guest', password: 'secret' } },
      {
        sasl: { authenticate: () => new Promise<boolean>((r) => (release = r)) },
        onAsyncWork: () => wake++,
      },
    );
    p.run();
    expect(p.client.engine.state).toBe('sasl');
    release(true);
    await new Promise((r) => setImmediate(r));
    expect(wake).toBe(1);
    p.run();
    expect(p.client.engine.state).toBe('open');
    expect(p.server.engine.state).toBe('open');
  });

  it('server without bare AMQP: answers an AMQP header with the SASL header and closes', () => {
    const server = new ProtocolConnection({ role: 'server', open: { containerId: 's' }, allowNoSasl: false });
    const raw = new RawPeer(server).header(0);
    const f = raw.read();
    expect(f[0]).toMatchObject({ kind: 'protocol-header', id: 3 });
    expect(server.state).toBe('closed');
  });

  it('unsupported protocol version / TLS header: answered with the supported header, then closed', () => {
    for (const bytes of [
      Uint8Array.of(0x41, 0x4d, 0x51, 0x50, 0, 2, 0, 0),
      Uint8Array.of(0x41, 0x4d, 0x51, 0x50, 2, 1, 0, 0),
      new TextEncoder().encode('GET / HT'),
    ]) {
      const server = new ProtocolConnection({ role: 'server', open: { containerId: 's' } });
      const raw = new RawPeer(server).bytes(bytes);
      const f = raw.read();
      expect(f[0]).toMatchObject({ kind: 'protocol-header', id: 0, major: 1, minor: 0, revision: 0 });
      expect(server.state).toBe('closed');
    }
  });

  it('client: a server answering a different header fails the connection', () => {
    const client = new ProtocolConnection({
      role: 'client',
      open: { containerId: 'c' },
      sasl: { mechanism: 'ANONYMOUS' },
    });
    client.receive(Uint8Array.of(0x41, 0x4d, 0x51, 0x50, 0, 1, 0, 0));
    expect(client.state).toBe('closed');
    expect(client.pollEvents().some((e) => e.type === 'closed')).toBe(true);
  });
});
