/**
 * Bugs the fuzzers found, as minimal deterministic cases (in process).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { InProcessBroker } from './harness.js';
import { outputProblems } from './invariants.js';
import * as S from './script.js';

const broker = new InProcessBroker({ idleTimeoutMs: 1000, handshakeTimeoutMs: 1000 });
afterAll(() => broker.close());

describe('fuzz regressions', () => {
  it('handle-in-use: the answer to the first attach is not written after the End (engine accept() after End)', async () => {
    const p = broker.peer();
    p.feed(S.concat(S.openedSession()));
    await p.settle();
    // two attaches on handle 0 in one read: the session ends before the broker answers the first
    p.feed(S.concat([S.attachSender(0, 0, 'reg.q', 'a'), S.attachSender(0, 0, 'reg.q', 'b')]));
    await p.settle();
    const types = p.performatives().map((x) => x.p.type);
    expect(types).toEqual(['open', 'begin', 'end']);
    expect(outputProblems(p.frames())).toEqual([]);
    // the session is really gone for the broker: the peer's End completes it, a new Begin works
    p.feed(S.concat([S.end(0), S.begin(0)]));
    await p.settle();
    expect(p.performatives().map((x) => x.p.type)).toEqual(['open', 'begin', 'end', 'begin']);
  });
});

describe('fuzz regressions: attach fields of the wrong type', () => {
  // target/source address is `*` in the spec's tables: any type decodes; a non-string must be refused
  const attachWithAddress = (role: boolean, address: Uint8Array) => {
    // attach list: name, handle, role, snd, rcv, source, target; the address value as raw bytes
    const terminus = (code: number) =>
      Buffer.concat([Buffer.from([0x00, 0x53, code, 0xc0, address.length + 1, 1]), address]);
    const fields = Buffer.concat([
      Buffer.from([0xa1, 1, 0x78]), // name "x"
      Buffer.from([0x43]), // handle 0
      Buffer.from([role ? 0x41 : 0x42]),
      Buffer.from([0x40, 0x40]),
      role ? terminus(0x28) : Buffer.from([0x40]),
      role ? Buffer.from([0x40]) : terminus(0x29),
    ]);
    const body = Buffer.concat([Buffer.from([0x00, 0x53, 0x12, 0xc0, fields.length + 1, 7]), fields]);
    const head = Buffer.alloc(8);
    head.writeUInt32BE(8 + body.length);
    head[4] = 2;
    return Buffer.concat([head, body]);
  };

  for (const [what, bytes] of [
    ['a uint', Buffer.from([0x52, 7])],
    ['a binary', Buffer.from([0xa0, 2, 0x71, 0x71])],
    ['a list', Buffer.from([0x45])],
  ] as const) {
    for (const role of [false, true]) {
      it(`an address that is ${what} (${role ? 'receiver' : 'sender'}): refused with amqp:invalid-field, no internal error`, async () => {
        const p = broker.peer();
        p.feed(S.concat([...S.openedSession(), attachWithAddress(role, bytes)]));
        await p.settle();
        const detach = p.errors().find((e) => e.scope === 'detach');
        expect(p.errors().map((e) => e.error?.condition)).toEqual(['amqp:invalid-field']);
        expect(detach?.error?.condition).toBe('amqp:invalid-field');
        expect(p.errors().filter((e) => e.scope === 'close')).toEqual([]);
        expect(outputProblems(p.frames())).toEqual([]);
      });
    }
  }
});
