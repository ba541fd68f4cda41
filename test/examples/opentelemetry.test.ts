/**
 * examples/opentelemetry.ts end to end: a real broker, an in-memory exporter, a producer span
 * and a consumer span with one trace id, the context carried in application-properties.
 */
import { SpanKind } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, expect, it } from 'vitest';
import { instrumentQuorate } from '../../examples/opentelemetry.js';
import { startBroker } from '../../src/broker.js';
import { connect } from '../../src/index.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

it('producer and consumer spans share the trace id carried in traceparent', async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  cleanups.push(instrumentQuorate(provider.getTracer('test')));
  const broker = await startBroker({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => broker.stop());
  const conn = await connect({ urls: broker.url });
  cleanups.push(() => conn.close());

  const sender = await conn.openSender('otel-q');
  await sender.send({ messageId: 'otel-1', body: 'traced', applicationProperties: { kind: 'order' } });
  const receiver = await conn.openReceiver('otel-q');
  const d = await receiver.receive({ timeoutMs: 10_000 });
  await d.accept();

  const spans = exporter.getFinishedSpans();
  const producer = spans.find((s) => s.kind === SpanKind.PRODUCER);
  const consumer = spans.find((s) => s.kind === SpanKind.CONSUMER);
  expect(producer?.name).toBe('send otel-q');
  expect(consumer?.name).toBe('process otel-q');
  expect(producer!.attributes).toMatchObject({
    'messaging.message.id': 'otel-1',
    'quorate.outcome': 'accepted',
  });
  expect(consumer!.attributes).toMatchObject({ 'quorate.settle': 'accepted' });
  const traceId = producer!.spanContext().traceId;
  expect(consumer!.spanContext().traceId).toBe(traceId);
  expect(consumer!.parentSpanContext?.spanId).toBe(producer!.spanContext().spanId);
  // the W3C trace-context AMQP placement: application-properties, beside the application's own
  const props = d.message.applicationProperties!;
  expect(props.kind).toBe('order');
  expect(props.traceparent).toBe(`00-${traceId}-${producer!.spanContext().spanId}-01`);
});
