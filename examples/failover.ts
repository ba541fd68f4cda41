/**
 * Keep sending through broker failures: list the members, watch the failover events, and check
 * at the end that every accepted message arrives exactly once.
 *
 *   npx quorate-broker cluster --nodes 3 --base-port 5672 --data-dir /tmp/q &
 *   npx tsx examples/failover.ts amqp://127.0.0.1:5672,amqp://127.0.0.1:5673,amqp://127.0.0.1:5674 [count]
 *   # meanwhile, kill -9 the member it prints as "connected to": it carries on with another
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, SendError } from 'quorate';

const urls = (process.argv[2] ?? 'amqp://127.0.0.1:5672').split(',');
const count = Number(process.argv[3] ?? 200);

const conn = await connect({ urls, containerId: 'example-failover', reconnect: { maxTimeMs: 60_000 } });
console.log(`connected to ${conn.url}`);
conn.on('connected', (e) => console.log(`connected to ${e.url}`));
conn.on('failover', (e) =>
  console.log(`failover ${e.from} -> ${e.to} in ${e.durationMs} ms, re-sent ${e.resent}`),
);
conn.on('membership', (e) => console.log(`members: ${e.members.join(' ')}`));
try {
  const sender = await conn.openSender('example-failover');
  const accepted = new Set<string>();
  for (let i = 0; i < count; i++) {
    const messageId = `msg-${i}`; // a stable id: a re-send after failover is recognised as the same message
    try {
      const result = await sender.send({ messageId, body: i }, { timeoutMs: 30_000 });
      if (result.state === 'accepted') accepted.add(messageId);
    } catch (err) {
      // Deadline passed: `inDoubt` says whether the broker may still have it.
      if (err instanceof SendError) console.log(`${messageId} not confirmed (in doubt: ${err.inDoubt})`);
      else throw err;
    }
    if ((i + 1) % 50 === 0) console.log(`sent ${i + 1}`);
    await sleep(20); // a steady trickle, so there is time to kill a member while it runs
  }

  const receiver = await conn.openReceiver('example-failover');
  const seen = new Set<string>();
  let duplicates = 0;
  for await (const delivery of receiver) {
    const id = String(delivery.message.messageId);
    if (seen.has(id)) duplicates++;
    seen.add(id);
    await delivery.accept();
    if ([...accepted].every((a) => seen.has(a))) break;
  }
  console.log(`accepted ${accepted.size}, received ${seen.size}, duplicates ${duplicates}`);
  process.exitCode = duplicates === 0 ? 0 : 1;
} finally {
  await conn.close();
}
