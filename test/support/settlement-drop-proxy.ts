/**
 * A loopback proxy between a client and a broker that loses a settlement on purpose: it forwards
 * bytes verbatim both ways, reads the broker's frames, and once armed it swallows the next
 * disposition that settles the client's transfers (role = receiver: the broker's answer to a
 * send), then resets both sockets. The broker has committed those messages (it settles only
 * after its commit point) but the client never hears so: it must treat them as in doubt and
 * re-send them, and only the broker's duplicate detection keeps the queue exactly-once.
 *
 * After the drop the proxy refuses new connections (reset at once), so the client re-sends
 * through its other URLs.
 */
import { createConnection, type Socket } from 'node:net';
import { decodeFrame } from '../../src/codec/frames.js';
import { AMQP_MAGIC, FrameSplitter } from './frame-splitter.js';
import { LoopbackProxy } from './loopback-proxy.js';

export interface DroppedSettlement {
  /** delivery ids the swallowed disposition settled (first..last) */
  first: number;
  last: number;
}

function settlementOf(unit: Buffer): DroppedSettlement | undefined {
  if (unit.length <= 8 || unit.readUInt32BE(0) === AMQP_MAGIC || unit[5] !== 0) return undefined;
  const frame = decodeFrame(unit, 0, unit.length);
  if (frame.kind !== 'amqp' || frame.performative.type !== 'disposition') return undefined;
  const body = frame.performative.body;
  if (body.role !== true) return undefined;
  return { first: body.first, last: body.last ?? body.first };
}

export class SettlementDropProxy extends LoopbackProxy {
  private armed: ((d: DroppedSettlement) => void) | undefined;
  private refusing = false;
  /** dispositions (role receiver) forwarded to the client so far */
  settlementsForwarded = 0;

  /** Swallow the next settlement of the client's sends and reset the connection; resolves with it. */
  dropNextSettlement(): Promise<DroppedSettlement> {
    return new Promise((resolve) => {
      this.armed = resolve;
    });
  }

  protected accept(client: Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => undefined);
    if (this.refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection(this.target);
    this.sockets.add(upstream);
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.on('data', (chunk) => upstream.write(chunk));
    const splitter = new FrameSplitter();
    upstream.on('data', (chunk: Buffer) => {
      for (const unit of splitter.push(chunk)) {
        const settlement = settlementOf(unit);
        if (settlement !== undefined && this.armed !== undefined) {
          const resolve = this.armed;
          this.armed = undefined;
          this.refusing = true;
          client.resetAndDestroy();
          upstream.destroy();
          resolve(settlement);
          return;
        }
        if (settlement !== undefined) this.settlementsForwarded++;
        client.write(unit);
      }
    });
  }
}
