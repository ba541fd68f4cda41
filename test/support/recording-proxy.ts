/**
 * A loopback proxy that forwards bytes verbatim both ways and decodes what the client writes:
 * every AMQP frame (performative, and a transfer's payload), for tests that check the client's
 * frames on the wire rather than what a lenient peer made of them.
 */
import type { Socket } from 'node:net';
import type { Frame } from '../../src/codec/contract.js';
import { decodeFrame } from '../../src/codec/frames.js';
import { AMQP_MAGIC, FrameSplitter } from './frame-splitter.js';
import { LoopbackProxy } from './loopback-proxy.js';

export class RecordingProxy extends LoopbackProxy {
  /** The client's AMQP frames (not SASL, not heartbeats), in the order written. */
  readonly fromClient: Extract<Frame, { kind: 'amqp' }>[] = [];

  protected accept(client: Socket): void {
    const upstream = this.linkUpstream(client);
    upstream.on('data', (chunk) => client.write(chunk));
    const splitter = new FrameSplitter();
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      for (const unit of splitter.push(chunk)) {
        if (unit.readUInt32BE(0) === AMQP_MAGIC || unit.length <= 8 || unit[5] !== 0) continue;
        const frame = decodeFrame(Buffer.from(unit), 0, unit.length);
        if (frame.kind === 'amqp') this.fromClient.push(frame);
      }
    });
  }
}
