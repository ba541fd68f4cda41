/**
 * Protocol-header exchange and the SASL layer (ANONYMOUS, PLAIN) for both roles: everything
 * before the AMQP layer starts. Driven by the connection, which owns the byte stream.
 */
import type { FrameReader, ProtocolId, SaslPerformative } from './codec-port.js';
import { encodeProtocolHeader, encodeSaslFrame } from './codec-port.js';
import { Condition } from './conditions.js';
import { defaultAuthenticator, identityFrom, SaslCode, saslInitFor } from './sasl.js';
import type {
  ConnectionState,
  EngineEvent,
  EngineOptions,
  Role,
  SaslClientOptions,
  SaslIdentity,
  SaslServerOptions,
} from './types.js';

/** Where the byte stream is: which header or frames we expect next. */
export type Phase = 'header' | 'sasl' | 'auth-pending' | 'amqp' | 'done';

export interface HeaderFrame {
  kind: 'protocol-header';
  id: ProtocolId;
  major?: number;
  minor?: number;
  revision?: number;
}

/** What the handshake needs from its connection. */
export interface HandshakeHost {
  readonly role: Role;
  readonly opts: EngineOptions;
  readonly reader: FrameReader;
  readonly hostname: string | undefined;
  getState(): ConnectionState;
  setState(s: ConnectionState): void;
  getPhase(): Phase;
  setPhase(p: Phase): void;
  push(bytes: Uint8Array): void;
  emit(e: EngineEvent): void;
  /** stop without a Close frame */
  terminate(condition: string, description: string): void;
  sendAmqpHeaderAndOpen(): void;
  /** continue reading buffered input (after an async authenticator) */
  process(): void;
}

type SaslIdentityLike = SaslIdentity | undefined;

export class Handshake {
  /** Server: true until the first header arrived (any header is answered then). */
  firstHeader = true;

  constructor(private readonly h: HandshakeHost) {}

  private get clientSasl(): SaslClientOptions | undefined {
    return this.h.role === 'client' ? (this.h.opts.sasl as SaslClientOptions | undefined) : undefined;
  }

  private get serverSasl(): SaslServerOptions {
    return (this.h.opts.sasl as SaslServerOptions | undefined) ?? {};
  }

  /** Client: true when it starts with the SASL header. */
  get clientUsesSasl(): boolean {
    return this.clientSasl !== undefined;
  }

  onHeader(h: HeaderFrame): void {
    const v10 = (h.major ?? 1) === 1 && (h.minor ?? 0) === 0 && (h.revision ?? 0) === 0;
    if (this.h.role === 'client') {
      const want: ProtocolId = this.h.getState() === 'sasl' ? 3 : 0;
      if (h.id !== want || !v10) {
        this.h.terminate(
          Condition.framingError,
          `peer answered protocol header id ${h.id}, expected ${want}`,
        );
        return;
      }
      this.h.setPhase(want === 3 ? 'sasl' : 'amqp');
      return;
    }
    // server
    const first = this.firstHeader;
    this.firstHeader = false;
    const allowBare = this.h.opts.allowNoSasl !== false;
    if (first && v10 && h.id === 3) {
      this.h.push(encodeProtocolHeader(3));
      this.h.setState('sasl');
      this.h.setPhase('sasl');
      const mechs = this.serverSasl.mechanisms ?? ['PLAIN', 'ANONYMOUS'];
      this.h.push(encodeSaslFrame({ type: 'sasl-mechanisms', body: { saslServerMechanisms: mechs } }));
      return;
    }
    if (v10 && h.id === 0 && (!first || allowBare)) {
      this.h.push(encodeProtocolHeader(0));
      this.h.setState('opening');
      this.h.setPhase('amqp');
      return;
    }
    // unsupported: answer with the header we do support, then close
    this.h.push(encodeProtocolHeader(!first || allowBare ? 0 : 3));
    this.h.terminate(
      Condition.framingError,
      `unsupported protocol header id ${h.id} ${h.major}.${h.minor}.${h.revision}`,
    );
  }

  onSasl(p: SaslPerformative): void {
    if (this.h.getPhase() !== 'sasl') {
      this.h.terminate(Condition.framingError, `unexpected ${p.type}`);
      return;
    }
    const client = this.clientSasl;
    if (client) {
      if (p.type === 'sasl-mechanisms') {
        if (!p.body.saslServerMechanisms.includes(client.mechanism)) {
          this.h.terminate(
            Condition.unauthorizedAccess,
            `server does not offer ${client.mechanism} (offers ${p.body.saslServerMechanisms.join(', ')})`,
          );
          return;
        }
        this.h.push(encodeSaslFrame({ type: 'sasl-init', body: saslInitFor(client, this.h.hostname) }));
        return;
      }
      if (p.type === 'sasl-outcome') {
        const ok = p.body.code === SaslCode.ok;
        this.h.emit({ type: 'sasl-outcome', ok, code: p.body.code, mechanism: client.mechanism });
        if (!ok) {
          this.h.terminate(Condition.unauthorizedAccess, `SASL authentication failed (code ${p.body.code})`);
          return;
        }
        this.h.reader.expectProtocolHeader();
        this.h.sendAmqpHeaderAndOpen();
        this.h.setPhase('header');
        return;
      }
      this.h.terminate(Condition.notImplemented, `unexpected ${p.type} for ${client.mechanism}`);
      return;
    }
    if (p.type !== 'sasl-init') {
      this.h.terminate(Condition.framingError, `unexpected ${p.type}`);
      return;
    }
    const mechs = this.serverSasl.mechanisms ?? ['PLAIN', 'ANONYMOUS'];
    const mechanism = p.body.mechanism;
    const identity = mechs.includes(mechanism) ? identityFrom(p.body) : undefined;
    if (!identity) {
      this.finishAuth(false, mechanism, undefined);
      return;
    }
    const auth = this.serverSasl.authenticate ?? defaultAuthenticator;
    let verdict: boolean | Promise<boolean>;
    try {
      verdict = auth(mechanism, identity);
    } catch {
      verdict = false;
    }
    if (typeof verdict === 'boolean') {
      this.finishAuth(verdict, mechanism, identity);
      return;
    }
    this.h.setPhase('auth-pending');
    verdict.then(
      (ok) => this.resumeAfterAuth(ok === true, mechanism, identity),
      () => this.resumeAfterAuth(false, mechanism, identity),
    );
  }

  private resumeAfterAuth(ok: boolean, mechanism: string, identity: SaslIdentityLike): void {
    if (this.h.getState() === 'closed') return;
    this.finishAuth(ok, mechanism, identity);
    this.h.process();
    this.h.opts.onAsyncWork?.();
  }

  private finishAuth(ok: boolean, mechanism: string, identity: SaslIdentityLike): void {
    const code = ok ? SaslCode.ok : SaslCode.auth;
    this.h.push(encodeSaslFrame({ type: 'sasl-outcome', body: { code } }));
    this.h.emit({ type: 'sasl-outcome', ok, code, mechanism, identity });
    if (!ok) {
      this.h.terminate(Condition.unauthorizedAccess, `SASL ${mechanism} authentication failed`);
      return;
    }
    this.h.setPhase('header');
    this.h.reader.expectProtocolHeader();
  }
}
