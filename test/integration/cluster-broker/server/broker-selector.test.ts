/**
 * Source filters: a JMS selector (`apache.org:selector-filter:string`) on a queue: the consumer
 * only gets matching messages, the others stay for other consumers; the attach reply names the
 * filter in force; unsupported or malformed filters are refused at attach with a clear error;
 * each message is evaluated at most once per subscription. rhea and our client, on the single node
 * and on a cluster follower (rhea-broker.ts).
 */
import rhea from 'rhea';
import { expect, vi } from 'vitest';
import { Selector } from '../../../../src/cluster-broker/selector/index.js';
import { connect } from '../../../../src/index.js';
import { type RheaConnection, sendAll } from '../../../cluster-broker/server/rhea-client.js';
import { waitFor } from '../../../support/net.js';
import { fresh, onEachTarget } from './rhea-broker.js';

const colours = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    message_id: i + 1,
    application_properties: { colour: i % 2 === 0 ? 'green' : 'red' },
    body: `${i % 2 === 0 ? 'green' : 'red'} ${i + 1}`,
  }));

/** Opens a rhea receiver; resolves once attached (with the reply's filter), rejects with the refusal. */
function receiver(
  conn: RheaConnection,
  address: string,
  filter: Record<string, unknown> | undefined,
  credit = 100,
): Promise<{ link: rhea.Receiver; bodies: string[]; replyFilter: unknown }> {
  return new Promise((resolve, reject) => {
    const link = conn.open_receiver({
      source: { address, ...(filter ? { filter } : {}) } as rhea.Source,
      credit_window: credit,
    });
    const bodies: string[] = [];
    link.on('message', (ctx) => bodies.push(String(ctx.message?.body)));
    link.once('receiver_open', () => {
      if (link.source?.address) resolve({ link, bodies, replyFilter: link.source.filter });
    });
    link.once('receiver_close', () => reject(Object.assign(new Error('refused'), { error: link.error })));
  });
}

onEachTarget('selectors', (t, it) => {
  it('a selector consumer gets only matching messages; the others stay for other consumers', async () => {
    const q = fresh('sel');
    await sendAll(t.conn, q, colours(10));
    const green = await receiver(t.conn, q, rhea.filter.selector("colour = 'green'"));
    expect(green.replyFilter).toMatchObject({ 'jms-selector': { value: "colour = 'green'" } });
    await waitFor(() => green.bodies.length === 5, {
      timeoutMs: 10_000,
      what: 'the green messages',
      intervalMs: 20,
    });
    expect(green.bodies).toEqual(['green 1', 'green 3', 'green 5', 'green 7', 'green 9']);
    const rest = await receiver(t.conn, q, undefined);
    await waitFor(() => rest.bodies.length === 5, {
      timeoutMs: 10_000,
      what: 'the red messages',
      intervalMs: 20,
    });
    expect(rest.bodies).toEqual(['red 2', 'red 4', 'red 6', 'red 8', 'red 10']);
    // later messages are filtered as they arrive
    await sendAll(t.conn, q, [{ application_properties: { colour: 'green' }, body: 'late green' }]);
    await waitFor(() => green.bodies.length === 6, {
      timeoutMs: 10_000,
      what: 'the late green message',
      intervalMs: 20,
    });
    expect(rest.bodies).toHaveLength(5);
    green.link.close();
    rest.link.close();
  });

  it('a malformed selector is refused at attach with amqp:invalid-field and where it went wrong', async () => {
    await expect(
      receiver(t.conn, fresh('bad'), rhea.filter.selector("colour = 'green")),
    ).rejects.toMatchObject({
      error: { condition: 'amqp:invalid-field', description: expect.stringMatching(/unterminated string/) },
    });
  });

  it('an unsupported filter type is refused with amqp:not-implemented naming it', async () => {
    const noLocal = { 'no-local': rhea.types.wrap_described([], 'apache.org:no-local-filter:list') };
    await expect(receiver(t.conn, fresh('nolocal'), noLocal)).rejects.toMatchObject({
      error: {
        condition: 'amqp:not-implemented',
        description: expect.stringMatching(/apache.org:no-local-filter:list.*not supported/),
      },
    });
  });

  // counts Selector.matches calls with a spy in this process: a cluster member evaluates in its own
  // process, out of the spy's reach, and reports no evaluation count, so single node only
  if (t.kind === 'single node')
    it('evaluates each message at most once per subscription, however often it pumps', async () => {
      const spy = vi.spyOn(Selector.prototype, 'matches');
      try {
        const q = fresh('once');
        const green = await receiver(t.conn, q, rhea.filter.selector("colour = 'green'"), 1);
        for (let batch = 0; batch < 4; batch++) await sendAll(t.conn, q, colours(10));
        await waitFor(() => green.bodies.length >= 1, {
          timeoutMs: 10_000,
          what: 'a first message',
          intervalMs: 20,
        });
        // credit 1 at a time: every accept tops up, so the consumer scans the queue 20 times
        await waitFor(() => green.bodies.length === 20, {
          timeoutMs: 10_000,
          what: 'all green messages',
          intervalMs: 20,
        });
        // the last message (red) is looked at only by the scan that the 20th accept's credit starts,
        // which can come after the 20th green arrived: wait for every message to be evaluated once,
        // then no more (re-evaluation on every pump would be far past 40 by then)
        await waitFor(() => spy.mock.calls.length >= 40, {
          timeoutMs: 10_000,
          what: 'every message evaluated',
          intervalMs: 20,
        });
        expect(spy.mock.calls.length).toBe(40);
        green.link.close();
      } finally {
        spy.mockRestore();
      }
    });

  it('openReceiver(address, { selector }) receives only what matches', async () => {
    const q = fresh('client-sel');
    await sendAll(t.conn, q, colours(6));
    const c = await connect({ urls: t.url, reconnect: false });
    try {
      const r = await c.openReceiver(q, { selector: "colour = 'red' AND JMSMessageID IN ('2', '6')" });
      const got: unknown[] = [];
      for (let i = 0; i < 2; i++) {
        const d = await r.receive({ timeoutMs: 10_000 });
        got.push(d.message.body);
        await d.accept();
      }
      expect(got).toEqual(['red 2', 'red 6']);
      await expect(c.openReceiver(q, { selector: 'colour = ' })).rejects.toMatchObject({
        condition: 'amqp:invalid-field',
      });
    } finally {
      await c.close();
    }
  });
});
