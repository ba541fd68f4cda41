import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CreditWindow } from '../../src/failover/credit-window.js';
import { expectReachesLength } from '../support/property-size.js';

describe('CreditWindow', () => {
  it('prefetch: grants the window on attach and tops up below half', () => {
    const w = new CreditWindow({ credit: 10 });
    expect(w.addCredit).toBeDefined();
    expect(w.onAttached()).toEqual({ linkCredit: 10 });
    for (let i = 0; i < 6; i++) w.onTransfer();
    expect(w.linkCredit).toBe(4);
    for (let i = 0; i < 5; i++) expect(w.onHandedOut()).toBeUndefined(); // 4 + 1 buffered = 5: not below half
    expect(w.onHandedOut()).toEqual({ linkCredit: 10 }); // 4 + 0 < 5
  });

  it('prefetch: after failover buffered deliveries are dropped and the full window re-granted', () => {
    const w = new CreditWindow({ credit: 10 });
    w.onAttached();
    for (let i = 0; i < 7; i++) w.onTransfer();
    w.onHandedOut();
    expect(w.onDetached()).toEqual({ dropped: 6 });
    expect(w.onAttached()).toEqual({ linkCredit: 10 });
  });

  it('manual: re-grants what was granted minus what was handed out', () => {
    const w = new CreditWindow({ credit: 0 });
    expect(w.addCredit(5)).toBeUndefined(); // not attached yet
    expect(w.onAttached()).toEqual({ linkCredit: 5 });
    w.onTransfer();
    w.onTransfer();
    w.onTransfer();
    w.onHandedOut();
    expect(w.remaining).toBe(4);
    expect(w.onDetached()).toEqual({ dropped: 2 });
    expect(w.onAttached()).toEqual({ linkCredit: 4 });
    expect(w.addCredit(3)).toEqual({ linkCredit: 7 });
  });

  it('manual: a suppressed redelivery refunds its credit at once', () => {
    const w = new CreditWindow({ credit: 0 });
    w.onAttached();
    w.addCredit(2);
    w.onTransfer();
    expect(w.linkCredit).toBe(1);
    expect(w.onSuppressed()).toEqual({ linkCredit: 2 });
  });

  it('prefetch: suppressed redeliveries do not eat the window', () => {
    const w = new CreditWindow({ credit: 4 });
    w.onAttached();
    const flows = [];
    for (let i = 0; i < 10; i++) {
      w.onTransfer();
      const f = w.onSuppressed();
      if (f) flows.push(f);
    }
    expect(flows.length).toBeGreaterThan(0);
    expect(w.linkCredit).toBeGreaterThanOrEqual(2);
  });

  it('rejects misuse', () => {
    expect(() => new CreditWindow({ credit: -1 })).toThrow();
    expect(() => new CreditWindow({ credit: 5 }).addCredit(1)).toThrow();
    expect(() => new CreditWindow({ credit: 0 }).addCredit(1.5)).toThrow();
  });

  it('property: credit + buffered never exceeds the window / remaining grant; credit is restored', () => {
    type Ev = 'transfer' | 'handout' | 'suppress' | 'detach' | 'attach' | 'grant' | 'peer';
    const histories = fc.array(
      fc.constantFrom<Ev>('transfer', 'handout', 'suppress', 'detach', 'attach', 'grant', 'peer'),
      { maxLength: 150, size: 'max' },
    );
    expectReachesLength(histories, 150);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        histories,
        fc.integer({ min: 1, max: 5 }),
        (window, events, grantSize) => {
          const w = new CreditWindow({ credit: window });
          let granted = 0;
          let handed = 0;
          let attached = false;
          w.onAttached();
          attached = true;
          for (const e of events) {
            if (e === 'transfer' && attached && w.linkCredit > 0) w.onTransfer();
            else if (e === 'handout' && w.buffered > 0) {
              w.onHandedOut();
              handed++;
            } else if (e === 'suppress' && w.buffered > 0) w.onSuppressed();
            else if (e === 'detach') {
              w.onDetached();
              attached = false;
            } else if (e === 'attach' && !attached) {
              w.onAttached();
              attached = true;
              // re-attach restores the whole window / the unused grant
              expect(w.linkCredit).toBe(window > 0 ? window : granted - handed);
            } else if (e === 'grant' && window === 0) {
              w.addCredit(grantSize);
              granted += grantSize;
            } else if (e === 'peer') w.onPeerFlow(Math.floor(w.linkCredit / 2));
            const cap = window > 0 ? window : granted - handed;
            expect(w.linkCredit + w.buffered).toBeLessThanOrEqual(cap);
            expect(w.linkCredit).toBeGreaterThanOrEqual(0);
            if (!attached) expect(w.linkCredit).toBe(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
