/**
 * OpenTelemetry tracing for quorate through its diagnostics channels (docs/observability.md):
 * no patching, only subscriptions. A `send()` becomes a PRODUCER span whose W3C trace context
 * (`traceparent`, `tracestate`) travels in the message's application-properties, the placement of
 * the W3C trace-context AMQP draft; a received message becomes a CONSUMER span, child of that
 * context, ending when the application settles it.
 *
 *   npx tsx examples/opentelemetry.ts     # one message through an embedded broker, spans printed
 *
 * In an application: `const stop = instrumentQuorate(trace.getTracer('my-app'))` once at start-up.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { pathToFileURL } from 'node:url';
import {
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Message } from 'quorate';

type Properties = Record<string, unknown>;

const propagator = new W3CTraceContextPropagator();
const setter: TextMapSetter<Properties> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};
const getter: TextMapGetter<Properties | undefined> = {
  keys: (carrier) => Object.keys(carrier ?? {}),
  get: (carrier, key) => {
    const v = carrier?.[key];
    return typeof v === 'string' ? v : undefined;
  },
};

interface SendContext {
  message: Message;
  address: string;
  messageId: unknown;
  outcome?: { state: string };
  error?: unknown;
}
interface SettleContext {
  message: Message;
  address: string;
  outcome: string;
  error?: unknown;
}
interface ReceiveMessage {
  message: Message;
  address: string;
}

function baseAttributes(address: string, operation: string, messageId: unknown) {
  return {
    'messaging.system': 'amqp',
    'messaging.destination.name': address,
    'messaging.operation.type': operation,
    'messaging.message.id': String(messageId),
  };
}

function fail(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}

/** Subscribe to quorate's channels and trace with `tracer`. Returns the unsubscribe function. */
export function instrumentQuorate(tracer: Tracer): () => void {
  const sendSpans = new WeakMap<object, Span>();
  // keyed by the message object: receive and settle publish the same one for a delivery
  const processSpans = new WeakMap<object, Span>();

  const send = diagnosticsChannel.tracingChannel('quorate:send');
  const sendHandlers = {
    start(ctx: object) {
      const c = ctx as SendContext;
      const span = tracer.startSpan(`send ${c.address}`, {
        kind: SpanKind.PRODUCER,
        attributes: baseAttributes(c.address, 'send', c.messageId),
      });
      sendSpans.set(ctx, span);
      // the library's copy: its application-properties object is ours to extend
      c.message.applicationProperties ??= {};
      propagator.inject(
        trace.setSpan(context.active(), span),
        c.message.applicationProperties as Properties,
        setter,
      );
    },
    end() {},
    asyncStart() {},
    error(ctx: object) {
      const span = sendSpans.get(ctx);
      if (span) fail(span, (ctx as SendContext).error);
    },
    asyncEnd(ctx: object) {
      const span = sendSpans.get(ctx);
      if (!span) return;
      const outcome = (ctx as SendContext).outcome;
      if (outcome) span.setAttribute('quorate.outcome', outcome.state);
      span.end();
      sendSpans.delete(ctx);
    },
  };
  send.subscribe(sendHandlers);

  const onReceive = (m: unknown) => {
    const r = m as ReceiveMessage;
    const parent: Context = propagator.extract(
      context.active(),
      r.message.applicationProperties as Properties | undefined,
      getter,
    );
    const span = tracer.startSpan(
      `process ${r.address}`,
      { kind: SpanKind.CONSUMER, attributes: baseAttributes(r.address, 'process', r.message.messageId) },
      parent,
    );
    processSpans.set(r.message, span);
  };
  diagnosticsChannel.subscribe('quorate:receive', onReceive);

  const settle = diagnosticsChannel.tracingChannel('quorate:settle');
  const settleHandlers = {
    start(ctx: object) {
      const c = ctx as SettleContext;
      processSpans.get(c.message)?.setAttribute('quorate.settle', c.outcome);
    },
    end() {},
    asyncStart() {},
    error(ctx: object) {
      const c = ctx as SettleContext;
      const span = processSpans.get(c.message);
      if (span) fail(span, c.error);
    },
    asyncEnd(ctx: object) {
      const c = ctx as SettleContext;
      processSpans.get(c.message)?.end();
      processSpans.delete(c.message);
    },
  };
  settle.subscribe(settleHandlers);

  return () => {
    send.unsubscribe(sendHandlers);
    settle.unsubscribe(settleHandlers);
    diagnosticsChannel.unsubscribe('quorate:receive', onReceive);
  };
}

async function main(): Promise<void> {
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import(
    '@opentelemetry/sdk-trace-base'
  );
  const { startBroker } = await import('quorate/broker');
  const { connect } = await import('quorate');
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const stop = instrumentQuorate(provider.getTracer('quorate-example'));
  const broker = await startBroker({ host: '127.0.0.1', port: 0 });
  const conn = await connect({ urls: broker.url });
  try {
    const sender = await conn.openSender('traced-orders');
    await sender.send({ body: { total: 42 } });
    const receiver = await conn.openReceiver('traced-orders');
    const delivery = await receiver.receive({ timeoutMs: 10_000 });
    process.stdout.write(`traceparent on the wire: ${delivery.message.applicationProperties?.traceparent}\n`);
    await delivery.accept();
  } finally {
    await conn.close();
    await broker.stop();
    stop();
  }
  for (const s of exporter.getFinishedSpans()) {
    process.stdout.write(`${SpanKind[s.kind]} ${s.name} trace ${s.spanContext().traceId}\n`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  });
}
