/**
 * A deliberately naive model of the broker's queue and topic semantics and of the owner records
 * of temporary queues (arrays, linear scans), written independently of BrokerState, to compare
 * against it on random event sequences.
 */
import type { BrokerEvent, QueueOptions } from '../../../src/cluster-broker/core/events.js';
import type {
  AcquiredMessage,
  ApplyResult,
  EnqueueResult,
  SettleResult,
} from '../../../src/cluster-broker/core/results.js';

interface MMsg {
  seq: number;
  bytes: Uint8Array;
  expiresAt: number | undefined;
  deliveryCount: number;
  acquiredBefore: boolean;
  owner: string | undefined;
  undeliverable: string[];
  deadLetter: AcquiredMessage['deadLetter'];
  /** Held for this link identity until this leader time (hold-unsettled). */
  reservedFor?: { link: string; until: number };
}

type DeadLetteredModel = { seq: number; queue: string; newSeq: number };

interface MQueue {
  options: QueueOptions;
  msgs: MMsg[]; // seq order
  dedup: Array<{ key: string; time: number }>;
  /** A temporary queue's owner record (docs/topics.md#owner-gone). */
  holder?: string;
  ownerLostAt?: number;
}

export class Model {
  now = 0;
  seq = 1;
  queues = new Map<string, MQueue>();
  holds = new Map<string, { link: string; ms: number }>();

  private dlqOf(name: string, q: MQueue): string | null {
    const o = q.options.deadLetterQueue;
    const d = o === undefined ? (name.endsWith('.dlq') ? null : `${name}.dlq`) : o;
    return d === name ? null : d;
  }

  private trim(q: MQueue): void {
    const count = q.options.dedupWindowCount ?? 10_000;
    const ms = q.options.dedupWindowMs ?? 600_000;
    while (q.dedup.length > 0 && (q.dedup[0].time + ms <= this.now || q.dedup.length > count))
      q.dedup.shift();
  }

  private full(q: MQueue, size: number): boolean {
    const bytes = q.msgs.reduce((n, m) => n + m.bytes.length, 0);
    return (
      q.msgs.length + 1 > (q.options.maxMessages ?? Infinity) ||
      bytes + size > (q.options.maxBytes ?? Infinity)
    );
  }

  /** Where an enqueue to `name` goes: the topic's subscriptions in declaration order, or the queue. */
  private targets(name: string, q: MQueue): MQueue[] {
    if (!q.options.topic) return [q];
    return [...this.queues.values()].filter((s) => s.options.subscription?.topic === name);
  }

  /** Owner records as BrokerState.ownedQueues() lists them. */
  owned(): Array<{ queue: string; holder?: string; ownerLostAt?: number }> {
    const out: Array<{ queue: string; holder?: string; ownerLostAt?: number }> = [];
    for (const [queue, q] of this.queues) {
      if (q.holder !== undefined) out.push({ queue, holder: q.holder });
      else if (q.ownerLostAt !== undefined) out.push({ queue, ownerLostAt: q.ownerLostAt });
    }
    return out;
  }

  private expired(m: MMsg): boolean {
    return m.expiresAt !== undefined && m.expiresAt <= this.now;
  }

  private remove(q: MQueue, m: MMsg): void {
    q.msgs.splice(q.msgs.indexOf(m), 1);
  }

  private backOrDrop(q: MQueue, m: MMsg): boolean {
    m.owner = undefined;
    if (this.expired(m)) {
      this.remove(q, m);
      return false;
    }
    return true;
  }

  /** Moves a removed message into its queue's dead-letter queue (dropped: none, or full). */
  private deadLetter(
    q: MQueue,
    m: MMsg,
    error: { condition: string; description?: string } | undefined,
    out: DeadLetteredModel[],
  ): void {
    const qName = [...this.queues].find(([, v]) => v === q)![0];
    const dlqName = this.dlqOf(qName, q);
    if (dlqName === null) return;
    let dlq = this.queues.get(dlqName);
    if (!dlq) {
      dlq = { options: { deadLetterQueue: null }, msgs: [], dedup: [] };
      this.queues.set(dlqName, dlq);
    }
    if (this.full(dlq, m.bytes.length)) return;
    const newSeq = this.seq++;
    dlq.msgs.push({
      ...m,
      seq: newSeq,
      expiresAt: undefined,
      owner: undefined,
      undeliverable: [],
      deadLetter: error ? { fromQueue: qName, error } : { fromQueue: qName },
    });
    out.push({ seq: m.seq, queue: dlqName, newSeq });
  }

  /** A failed delivery: count + 1, then back (or dropped if expired) or, at the limit, dead-lettered. */
  private failed(q: MQueue, m: MMsg, out: DeadLetteredModel[]): boolean {
    m.deliveryCount++;
    const limit = q.options.deliveryLimit ?? Infinity;
    if (m.deliveryCount < limit || this.expired(m)) return this.backOrDrop(q, m);
    this.remove(q, m);
    this.deadLetter(
      q,
      { ...m, owner: undefined },
      {
        condition: 'quorate:delivery-limit',
        description: `delivered ${m.deliveryCount} times (delivery limit ${limit})`,
      },
      out,
    );
    return false;
  }

  private held(consumer: string): Array<{ q: MQueue; m: MMsg }> {
    const out: Array<{ q: MQueue; m: MMsg }> = [];
    for (const q of this.queues.values())
      for (const m of q.msgs) if (m.owner === consumer) out.push({ q, m });
    return out.sort((a, b) => a.m.seq - b.m.seq);
  }

  apply(e: BrokerEvent): ApplyResult {
    this.now = Math.max(this.now, e.leaderTime);
    switch (e.type) {
      case 'commit': {
        const adding = new Map<MQueue, { n: number; bytes: number }>();
        for (const sub of e.events) {
          if (sub.type !== 'enqueue') continue;
          const q = this.queues.get(sub.queue);
          if (!q) return { type: 'commit', status: 'refused', condition: 'amqp:not-found', description: '' };
          this.trim(q);
          if (sub.dedupKey !== undefined && q.dedup.some((d) => d.key === sub.dedupKey)) continue;
          for (const t of this.targets(sub.queue, q)) {
            const a = adding.get(t) ?? { n: 0, bytes: 0 };
            adding.set(t, { n: a.n + 1, bytes: a.bytes + sub.message.length });
          }
        }
        for (const [q, a] of adding) {
          const bytes = q.msgs.reduce((n, m) => n + m.bytes.length, 0);
          if (
            q.msgs.length + a.n > (q.options.maxMessages ?? Infinity) ||
            bytes + a.bytes > (q.options.maxBytes ?? Infinity)
          ) {
            return {
              type: 'commit',
              status: 'refused',
              condition: 'amqp:resource-limit-exceeded',
              description: '',
            };
          }
        }
        const results = e.events.map((sub) => this.apply({ ...sub, leaderTime: e.leaderTime })) as Array<
          EnqueueResult | SettleResult
        >;
        return { type: 'commit', status: 'committed', results };
      }
      case 'declare': {
        if (this.queues.has(e.queue)) return { type: 'declare', created: false };
        const topic = e.options.subscription?.topic;
        if (topic !== undefined && !this.queues.has(topic))
          this.queues.set(topic, { options: { topic: true }, msgs: [], dedup: [] });
        this.queues.set(e.queue, { options: e.options, msgs: [], dedup: [] });
        return { type: 'declare', created: true };
      }
      case 'owner-attached': {
        const q = this.queues.get(e.queue);
        if (!q || q.options.temporary === undefined) return { type: e.type, changed: false };
        q.holder = e.holder;
        q.ownerLostAt = undefined;
        return { type: e.type, changed: true };
      }
      case 'owner-lost': {
        const q = this.queues.get(e.queue);
        if (!q || q.holder !== e.holder) return { type: e.type, changed: false };
        q.holder = undefined;
        q.ownerLostAt = this.now;
        return { type: e.type, changed: true };
      }
      case 'delete': {
        const q = this.queues.get(e.queue);
        if (!q || (e.ifOwnerLostAt !== undefined && q.ownerLostAt !== e.ifOwnerLostAt))
          return { type: 'delete', deleted: false, dropped: 0 };
        this.queues.delete(e.queue);
        return { type: 'delete', deleted: true, dropped: q.msgs.length };
      }
      case 'purge': {
        const q = this.queues.get(e.queue);
        if (!q) return { type: 'purge', found: false, purged: 0 };
        const kept = q.msgs.filter((m) => m.owner !== undefined);
        const purged = q.msgs.length - kept.length;
        q.msgs = kept;
        return { type: 'purge', found: true, purged };
      }
      case 'enqueue': {
        const q = this.queues.get(e.queue);
        if (!q) return { type: 'enqueue', status: 'refused', condition: 'amqp:not-found', description: '' };
        this.trim(q);
        if (e.dedupKey !== undefined && q.dedup.some((d) => d.key === e.dedupKey)) {
          return { type: 'enqueue', status: 'duplicate' };
        }
        const into = this.targets(e.queue, q);
        if (into.some((t) => this.full(t, e.message.length))) {
          return {
            type: 'enqueue',
            status: 'refused',
            condition: 'amqp:resource-limit-exceeded',
            description: '',
          };
        }
        const first = into.length === 0 ? 0 : this.seq;
        for (const t of into) {
          t.msgs.push({
            seq: this.seq++,
            bytes: e.message,
            expiresAt: e.expiresAt,
            deliveryCount: e.deliveryCount ?? 0,
            acquiredBefore: false,
            owner: undefined,
            undeliverable: [],
            deadLetter: undefined,
          });
        }
        if (e.dedupKey !== undefined && (q.options.dedupWindowCount ?? 10_000) > 0) {
          q.dedup.push({ key: e.dedupKey, time: this.now });
          this.trim(q);
        }
        if (!q.options.topic) return { type: 'enqueue', status: 'enqueued', seq: first };
        const fannedOut = [...this.queues].filter(([, v]) => into.includes(v)).map(([name]) => name);
        return { type: 'enqueue', status: 'enqueued', seq: first, fannedOut };
      }
      case 'acquire': {
        const messages: AcquiredMessage[] = [];
        const q = this.queues.get(e.queue);
        if (!q) return { type: 'acquire', messages };
        const wanted = e.seqs === undefined ? undefined : new Set(e.seqs);
        for (const m of [...q.msgs]) {
          if (messages.length >= (wanted ? wanted.size : (e.max ?? 1))) break;
          if (m.owner !== undefined) continue;
          if (wanted && e.seqs) {
            if (m.seq > e.seqs[e.seqs.length - 1]!) break;
            if (!wanted.has(m.seq)) continue;
          }
          if (this.expired(m)) {
            this.remove(q, m);
            continue;
          }
          const link = e.link ?? e.consumer;
          if (m.reservedFor && m.reservedFor.link !== link && m.reservedFor.until > this.now) continue;
          if (m.undeliverable.includes(link)) continue;
          m.reservedFor = undefined;
          const a: AcquiredMessage = {
            seq: m.seq,
            queue: e.queue,
            message: m.bytes,
            deliveryCount: m.deliveryCount,
            firstAcquirer: !m.acquiredBefore,
          };
          if (m.deadLetter) a.deadLetter = m.deadLetter;
          messages.push(a);
          m.acquiredBefore = true;
          m.owner = e.consumer;
        }
        return { type: 'acquire', messages };
      }
      case 'settle': {
        const r: ApplyResult = { type: 'settle', settled: [], stale: [], deadLettered: [] };
        for (const seq of e.seqs) {
          const h = this.held(e.consumer).find((x) => x.m.seq === seq);
          if (!h) {
            r.stale.push(seq);
            continue;
          }
          r.settled.push(seq);
          const { q, m } = h;
          const o = e.outcome;
          if (o.type === 'accepted') this.remove(q, m);
          else if (o.type === 'rejected') {
            this.remove(q, m);
            this.deadLetter(q, m, o.error, r.deadLettered);
          } else if (
            o.type === 'modified' &&
            o.undeliverableHere &&
            Number.isFinite(q.options.deliveryLimit ?? Infinity)
          ) {
            // a poison message on a queue with a delivery limit: dead-lettered at once
            this.remove(q, m);
            this.deadLetter(
              q,
              m,
              { condition: 'quorate:undeliverable-here', description: 'modified with undeliverable-here' },
              r.deadLettered,
            );
          } else {
            const link = e.link ?? e.consumer;
            if (o.type === 'modified' && o.undeliverableHere && !m.undeliverable.includes(link))
              m.undeliverable.push(link);
            if (o.type === 'modified' && o.deliveryFailed) this.failed(q, m, r.deadLettered);
            else this.backOrDrop(q, m);
          }
        }
        return r;
      }
      case 'release-consumer':
      case 'release-all': {
        const released: number[] = [];
        const deadLettered: DeadLetteredModel[] = [];
        const holders = e.type === 'release-all' ? null : e.consumer;
        const owned = [...this.queues.values()]
          .flatMap((q) => q.msgs.map((m) => ({ q, m })))
          .filter(({ m }) => m.owner !== undefined && (holders === null || m.owner === holders))
          .sort((a, b) => a.m.seq - b.m.seq);
        for (const { q, m } of owned) {
          const hold = this.holds.get(m.owner!);
          if (!this.failed(q, m, deadLettered)) continue;
          released.push(m.seq);
          if (hold) m.reservedFor = { link: hold.link, until: this.now + hold.ms };
        }
        if (holders === null) this.holds.clear();
        else this.holds.delete(holders);
        return deadLettered.length > 0
          ? { type: e.type, released: released.sort((a, b) => a - b), deadLettered }
          : { type: e.type, released: released.sort((a, b) => a - b) };
      }
      case 'hold-unsettled':
        if (e.ms > 0) this.holds.set(e.consumer, { link: e.link, ms: e.ms });
        else this.holds.delete(e.consumer);
        return { type: 'hold-unsettled' };
      case 'expire': {
        const expired: number[] = [];
        for (const q of this.queues.values()) {
          for (const m of [...q.msgs]) {
            if (m.owner === undefined && this.expired(m)) {
              this.remove(q, m);
              expired.push(m.seq);
            }
          }
          this.trim(q);
        }
        return { type: 'expire', expired: expired.sort((a, b) => a - b) };
      }
    }
  }

  /** Available seqs of a queue in delivery order. */
  available(queue: string): number[] {
    return (this.queues.get(queue)?.msgs ?? []).filter((m) => m.owner === undefined).map((m) => m.seq);
  }

  depth(queue: string): number | undefined {
    return this.queues.get(queue)?.msgs.length;
  }
}
