/**
 * A Delivery settles the transfer its message arrived on and every redelivery bound to it
 * (failover: the same message-id offered again while it was unsettled), once; a redelivery bound
 * after the settlement is settled at once with the same outcome. With a fake owner and fake
 * transfers: what each transfer was told is all that is checked.
 */
import { describe, expect, it } from 'vitest';
import { Delivery, type DeliveryOwner } from '../../src/client/delivery.js';
import type { DeliveryState } from '../../src/codec/contract.js';
import type { IncomingDelivery } from '../../src/protocol/index.js';

interface FakeTransfer {
  settled: boolean;
  remoteSettled: boolean;
  told: (DeliveryState | undefined)[];
  disposition(state: DeliveryState | undefined, settled?: boolean): void;
}

function transfer(): FakeTransfer {
  return {
    settled: false,
    remoteSettled: false,
    told: [],
    disposition(state, settled) {
      this.told.push(state);
      if (settled) this.settled = true;
    },
  };
}

function owner(live: (t: IncomingDelivery) => boolean = () => true): DeliveryOwner {
  return {
    address: 'q',
    containerId: 'c',
    isLive: live,
    confirmsSettlement: false,
    onSettled() {},
    onAwaiting() {},
    onFinished() {},
    flush() {},
  };
}

const asIncoming = (t: FakeTransfer) => t as unknown as IncomingDelivery;

describe('Delivery transfers', () => {
  it('settles the first transfer and each redelivery bound to it, once', async () => {
    const first = transfer();
    const second = transfer();
    const third = transfer();
    const d = new Delivery(owner(), asIncoming(first), { body: 'x' });
    expect(d.transfers).toEqual([first]);
    d.bind(asIncoming(second));
    d.bind(asIncoming(third));
    expect(d.transfers).toEqual([first, second, third]);
    await d.accept();
    for (const t of [first, second, third]) expect(t.told.map((s) => s?.type)).toEqual(['accepted']);
    expect(d.transfers).toEqual([]);
    await expect(d.accept()).rejects.toThrow(/already settled/);
    for (const t of [first, second, third]) expect(t.told).toHaveLength(1);
  });

  it('settles a redelivery bound after the settlement at once, with the same outcome', async () => {
    const first = transfer();
    const late = transfer();
    const d = new Delivery(owner(), asIncoming(first), { body: 'x' });
    await d.release();
    d.bind(asIncoming(late));
    expect(late.told.map((s) => s?.type)).toEqual(['released']);
    expect(first.told.map((s) => s?.type)).toEqual(['released']);
  });

  it('skips transfers whose link is gone; with none live an accept is in doubt', async () => {
    const gone = transfer();
    const live = transfer();
    const d = new Delivery(
      owner((t) => t === asIncoming(live)),
      asIncoming(gone),
      { body: 'x' },
    );
    d.bind(asIncoming(live));
    await d.accept();
    expect(gone.told).toEqual([]);
    expect(live.told.map((s) => s?.type)).toEqual(['accepted']);

    const alone = transfer();
    const lost = new Delivery(
      owner(() => false),
      asIncoming(alone),
      { body: 'x' },
    );
    await expect(lost.accept()).rejects.toThrow(/in-doubt|not confirmed/);
    expect(alone.told).toEqual([]);
  });
});
