/**
 * A hostile AMQP "server" for fuzzing our client: it plays the handshake honestly (protocol
 * headers, SASL ANONYMOUS/PLAIN, Open, Begin, Attach answers, credit) up to a chosen stage, then
 * does the chosen bad thing instead of the next honest answer: garbage, an oversized frame, a
 * half-written frame, silence, a Close with an error, frames in the wrong order, a mutated honest
 * answer, a FIN or a reset.
 */
import net from 'node:net';
import {
  encodeAmqpFrame,
  encodeProtocolHeader,
  encodeSaslFrame,
  FrameReader,
  type Performative,
} from '../../src/codec/index.js';

/** Where the server turns hostile: instead of its answer to ... */
export type Stage =
  | 'header' // the client's protocol header
  | 'sasl-init' // the client's sasl-init (mechanisms already sent)
  | 'open' // the client's Open
  | 'begin' // the client's Begin (after a good Open)
  | 'attach'; // the client's Attach

export type Action =
  | { kind: 'garbage'; bytes: Uint8Array }
  | { kind: 'oversize'; size: number }
  | { kind: 'half-frame' }
  | { kind: 'silence' }
  | { kind: 'close'; condition: string }
  | { kind: 'wrong-order'; frame: 'begin' | 'attach' | 'transfer' | 'flow' | 'disposition' | 'sasl-outcome' }
  | { kind: 'mutate'; at: number; bit: number }
  | { kind: 'fin' }
  | { kind: 'reset' };

export interface Script {
  stage: Stage;
  action: Action;
}

const OPEN: Performative = {
  type: 'open',
  body: { containerId: 'hostile', maxFrameSize: 65536, idleTimeOut: 0 },
};

/** The honest answer the server would give at `stage`. */
function honest(stage: Stage, sasl: boolean, amqpHeaderSent: boolean, attach?: Performative): Uint8Array[] {
  const amqpHeader = amqpHeaderSent ? [] : [encodeProtocolHeader(0)];
  switch (stage) {
    case 'header':
      return sasl
        ? [
            encodeProtocolHeader(3),
            encodeSaslFrame({
              type: 'sasl-mechanisms',
              body: { saslServerMechanisms: ['ANONYMOUS', 'PLAIN'] },
            }),
          ]
        : amqpHeader;
    case 'sasl-init':
      return [encodeSaslFrame({ type: 'sasl-outcome', body: { code: 0 } })];
    case 'open':
      return [...amqpHeader, encodeAmqpFrame(0, OPEN)];
    case 'begin':
      return [
        encodeAmqpFrame(0, {
          type: 'begin',
          body: { remoteChannel: 0, nextOutgoingId: 0, incomingWindow: 1000, outgoingWindow: 1000 },
        }),
      ];
    case 'attach': {
      const a = attach?.type === 'attach' ? attach.body : undefined;
      if (!a) return [];
      const mine = { ...a, role: !a.role, initialDeliveryCount: 0 };
      const out = [encodeAmqpFrame(0, { type: 'attach', body: mine })];
      // our side receives for the client's sender: give it credit
      if (!a.role)
        out.push(
          encodeAmqpFrame(0, {
            type: 'flow',
            body: {
              nextIncomingId: 0,
              incomingWindow: 1000,
              nextOutgoingId: 0,
              outgoingWindow: 1000,
              handle: a.handle,
              deliveryCount: 0,
              linkCredit: 100,
            },
          }),
        );
      return out;
    }
  }
}

function hostile(
  action: Action,
  answer: Uint8Array[],
  amqpHeaderSent: boolean,
): Uint8Array[] | 'silence' | 'fin' | 'reset' {
  const amqpHeader = amqpHeaderSent ? [] : [encodeProtocolHeader(0)];
  switch (action.kind) {
    case 'garbage':
      return [action.bytes];
    case 'oversize': {
      const h = Buffer.alloc(8);
      h.writeUInt32BE(action.size >>> 0);
      h[4] = 2;
      return [...answer.slice(0, 1).filter((b) => b.length === 8), h, Buffer.alloc(32)];
    }
    case 'half-frame': {
      const whole = Buffer.concat(answer);
      return [whole.subarray(0, Math.max(1, whole.length - 3))];
    }
    case 'silence':
      return 'silence';
    case 'close':
      return [
        ...amqpHeader,
        encodeAmqpFrame(0, OPEN),
        encodeAmqpFrame(0, {
          type: 'close',
          body: { error: { condition: action.condition, description: 'hostile close' } },
        }),
      ];
    case 'wrong-order': {
      const f = action.frame;
      const p: Uint8Array =
        f === 'sasl-outcome'
          ? encodeSaslFrame({ type: 'sasl-outcome', body: { code: 0 } })
          : f === 'begin'
            ? encodeAmqpFrame(3, {
                type: 'begin',
                body: { remoteChannel: 7, nextOutgoingId: 0, incomingWindow: 1, outgoingWindow: 1 },
              })
            : f === 'attach'
              ? encodeAmqpFrame(0, { type: 'attach', body: { name: 'nobody', handle: 9, role: true } })
              : f === 'transfer'
                ? encodeAmqpFrame(
                    0,
                    { type: 'transfer', body: { handle: 9, deliveryId: 0, deliveryTag: new Uint8Array(1) } },
                    new Uint8Array([0x00, 0x53, 0x77, 0x40]),
                  )
                : f === 'flow'
                  ? encodeAmqpFrame(0, {
                      type: 'flow',
                      body: {
                        incomingWindow: 1,
                        nextOutgoingId: 0,
                        outgoingWindow: 1,
                        handle: 9,
                        linkCredit: 1,
                      },
                    })
                  : encodeAmqpFrame(0, {
                      type: 'disposition',
                      body: { role: true, first: 5, last: 2, settled: true },
                    });
      return [p];
    }
    case 'mutate': {
      const whole = Buffer.from(Buffer.concat(answer));
      if (whole.length === 0) return [];
      const at = action.at % whole.length;
      whole[at] = whole[at]! ^ (1 << action.bit);
      return [whole];
    }
    case 'fin':
      return 'fin';
    case 'reset':
      return 'reset';
  }
}

/** A net server on 127.0.0.1:0; each accepted connection runs `next()`'s script. */
export class HostileServer {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly next: () => Script) {
    this.server = net.createServer((s) => this.serve(s));
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  get openSockets(): number {
    return this.sockets.size;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private serve(socket: net.Socket): void {
    const script = this.next();
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
    const reader = new FrameReader({ maxFrameSize: 1024 * 1024 });
    reader.expectProtocolHeader();
    let sasl = false;
    let turned = false;
    let amqpHeaderSent = false;
    const answer = (stage: Stage, attach?: Performative): void => {
      if (turned) return;
      const good = honest(stage, sasl && stage === 'header', amqpHeaderSent, attach);
      if (stage !== script.stage) {
        for (const b of good) {
          if (b.length === 8 && b[4] === 0) amqpHeaderSent = true;
          socket.write(b);
        }
        return;
      }
      turned = true;
      const bad = hostile(script.action, good, amqpHeaderSent);
      if (bad === 'silence') return;
      if (bad === 'fin') socket.end();
      else if (bad === 'reset') socket.resetAndDestroy();
      else for (const b of bad) socket.write(b);
    };
    socket.on('data', (d: Buffer) => {
      if (turned) return;
      reader.push(d);
      try {
        for (let f = reader.next(); f !== undefined && !turned; f = reader.next()) {
          if (f.kind === 'protocol-header') {
            if (f.id === 3 && !sasl) {
              sasl = true;
              answer('header');
            } else if (!sasl) answer('header');
            else if (!amqpHeaderSent && !turned) {
              // the AMQP header after SASL: answered at once (a client may wait for it before its Open)
              amqpHeaderSent = true;
              socket.write(encodeProtocolHeader(0));
            }
            continue;
          }
          if (f.kind === 'sasl') {
            if (f.performative.type === 'sasl-init') {
              answer('sasl-init');
              reader.expectProtocolHeader();
            }
            continue;
          }
          if (f.kind !== 'amqp') continue;
          const p = f.performative;
          if (p.type === 'open') answer('open');
          else if (p.type === 'begin') answer('begin');
          else if (p.type === 'attach') answer('attach', p);
          else if (p.type === 'close') socket.end(encodeAmqpFrame(0, { type: 'close', body: {} }));
        }
      } catch {
        socket.destroy();
      }
    });
  }
}
