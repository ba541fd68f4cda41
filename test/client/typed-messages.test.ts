/**
 * Typed messages: `send<T>()` takes interfaces and class instances, `openReceiver<T>()` gives
 * `Delivery<T>` (type-level, checked by `tsc --noEmit`, which covers test/), and a value the codec
 * cannot encode faithfully is an AmqpEncodeError naming its path, never silently changed.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../src/broker.js';
import {
  AmqpEncodeError,
  type Connection,
  connect,
  type Delivery,
  type Message,
  type ReceivedMessage,
  type Receiver,
  type Sender,
} from '../../src/index.js';

interface Item {
  sku: string;
  qty: number;
}
interface Order {
  id: string;
  total: number;
  items: Item[];
  note?: string;
}

class Invoice {
  constructor(
    readonly number: number,
    readonly lines: string[],
  ) {}
  describe(): string {
    return `${this.number}`;
  }
}

class WithGetter {
  constructor(private readonly cents: number) {}
  get euros(): number {
    return this.cents / 100;
  }
}

let broker: BrokerHandle;
let conn: Connection;
let sender: Sender;
beforeAll(async () => {
  broker = await startBroker({ host: '127.0.0.1', port: 0 });
  conn = await connect({ urls: broker.url });
  sender = await conn.openSender('typed');
});
afterAll(async () => {
  await conn?.close();
  await broker?.stop();
});

describe('typed messages', () => {
  it('an interface and a class instance are sent as they are; openReceiver<T> types the body', async () => {
    const order: Order = { id: 'o-1', total: 42, items: [{ sku: 'a', qty: 2 }] };
    await sender.send({ body: order }); // an interface without an index signature compiles
    await sender.send<Invoice>({ body: new Invoice(7, ['x']) });
    const receiver = await conn.openReceiver<Order>('typed');
    expectTypeOf(receiver).toEqualTypeOf<Receiver<Order>>();
    const d = await receiver.receive({ timeoutMs: 10_000 });
    expectTypeOf(d).toEqualTypeOf<Delivery<Order>>();
    expectTypeOf(d.message).toEqualTypeOf<ReceivedMessage<Order>>();
    expectTypeOf(d.message.body).toEqualTypeOf<Order>();
    expect(d.message.body).toEqual(order);
    expect(d.message.body.total).toBe(42); // under strict: no '?.', no cast (TS18048 before)
    expect(d.message.body.items[0]?.qty).toBe(2);
    await d.accept();
    const d2 = await receiver.receive({ timeoutMs: 10_000 });
    expect(d2.message.body).toEqual({ number: 7, lines: ['x'] });
    await d2.accept();
    await receiver.close();
  });

  it('a message without a body section: body undefined, typed by openReceiver<T | undefined>', async () => {
    const plain = await conn.openSender('typed-bodiless');
    await plain.send({ subject: 'no body' });
    const receiver = await conn.openReceiver<Order | undefined>('typed-bodiless');
    const d = await receiver.receive({ timeoutMs: 10_000 });
    expectTypeOf(d.message.body).toEqualTypeOf<Order | undefined>();
    expect(d.message.subject).toBe('no body');
    expect(d.message.body).toBeUndefined();
    await d.accept();
    await receiver.close();
    await plain.close();
  });

  it('the type says what a typed send takes', () => {
    const typed = (m: Message<Order>) => sender.send<Order>(m);
    // @ts-expect-error a body that is not an Order
    void (() => typed({ body: { id: 1 } }));
    expectTypeOf(sender.send<Order>)
      .parameter(0)
      .toEqualTypeOf<Message<Order>>();
  });

  it.each([
    ['a Set', { id: 'x', items: [1, 2, 3, new Set([1])] }, 'body.items[3]', /a Set cannot be encoded/],
    ['a WeakMap', { id: 'x', meta: new WeakMap() }, 'body.meta', /a WeakMap/],
    ['a symbol', { id: 'x', tag: Symbol('t') }, 'body.tag', /a symbol/],
    ['a getter on a class prototype', { price: new WithGetter(250) }, 'body.price', /accessor 'euros'/],
    ['a function', { id: 'x', cb: () => 1 }, 'body.cb', /a function/],
    ['an Int32Array', { id: 'x', v: new Int32Array(2) }, 'body.v', /Int32Array/],
  ])('%s is an encode error naming its path, and nothing is sent', async (_what, body, path, why) => {
    const before = conn.stats().buffered.messages;
    const err = (await sender.send({ body: body as never }).catch((e: unknown) => e)) as AmqpEncodeError;
    expect(err).toBeInstanceOf(AmqpEncodeError);
    expect(err.message).toContain(`${path}:`);
    expect(err.message).toMatch(why);
    expect(conn.stats().buffered.messages).toBe(before);
  });

  it('application properties are checked too', async () => {
    const err = await sender
      .send({ body: 1, applicationProperties: { 'bad key': new Set() as never } })
      .catch((e: unknown) => e);
    expect((err as Error).message).toContain('applicationProperties["bad key"]');
  });

  it('a circular body is an encode error, not a stack overflow', async () => {
    const a: Record<string, unknown> = { id: 'x' };
    a.self = a;
    await expect(sender.send({ body: a as never })).rejects.toThrow(/body\.self: circular reference/);
  });
});
