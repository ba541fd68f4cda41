// The quorate status page: polls this member's JSON API every second and redraws.
// Plain browser JavaScript, no framework, no build step, nothing fetched from elsewhere.
// Every name that comes from the broker (queue names, container-ids) goes in through
// textContent, never as HTML.

const REFRESH_MS = 1000;
const HISTORY_EVERY = 2; // fetch the chart history every 2nd refresh
const SVG = 'http://www.w3.org/2000/svg';

let tick = 0;
let history = { queues: [] };
let lastOverview = null;

/**
 * `u` when it is an http(s) URL, else null: member URLs come from other members' reports, and a
 * `javascript:` one must never become a link (docs/security.md#http-port).
 */
function webUrl(u) {
  if (typeof u !== 'string') return null;
  try {
    const p = new URL(u).protocol;
    return p === 'http:' || p === 'https:' ? u : null;
  } catch {
    return null;
  }
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

async function getJson(path) {
  const res = await fetch(path, { cache: 'no-store', credentials: 'same-origin' });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return res.json();
}

function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

function fmtNum(n) {
  return Number(n).toLocaleString('en-US');
}

function fmtDuration(s) {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function renderHeader(o) {
  document.getElementById('member').textContent =
    o.role === 'single' ? `single node ${o.member}` : `member ${o.member} of cluster ${o.clusterId}`;
  const health = document.getElementById('health');
  if (o.serving) {
    health.textContent = o.role === 'single' ? 'serving' : 'quorate · serving';
    health.className = 'pill ok';
  } else if (o.quorate) {
    health.textContent = 'quorate · catching up';
    health.className = 'pill warn';
  } else {
    health.textContent = 'NOT QUORATE';
    health.className = 'pill bad';
  }
  document.getElementById('cluster-facts').textContent =
    o.role === 'single'
      ? `up ${fmtDuration(o.uptimeSeconds)} · index ${fmtNum(o.commitIndex)}`
      : `leader ${o.leader ?? 'none'} · term ${o.term} · commit ${fmtNum(o.commitIndex)} · applied ${fmtNum(o.appliedIndex)} · up ${fmtDuration(o.uptimeSeconds)}`;
}

function renderMembers(o) {
  const box = document.getElementById('members');
  box.replaceChildren(
    ...o.members.map((m) => {
      const self = m.id === o.member;
      const leader = m.id === o.leader;
      const up = m.reachable;
      const card = el(
        'div',
        {
          class: `member${up ? '' : ' down'}${self ? ' self' : ''}`,
          'data-member': m.id,
          'data-state': up ? 'up' : 'down',
        },
        el(
          'div',
          {},
          el('span', { class: 'name', text: m.id }),
          el('span', {
            class: `role${leader ? ' leader' : ''}`,
            text: leader ? '★ leader' : self ? o.role : 'follower',
          }),
        ),
        el('div', { class: `state ${up ? 'up' : 'down'}`, text: up ? '● up' : '● down (unreachable)' }),
        el('div', {
          class: 'muted',
          text: `lag ${m.lag === null ? '?' : fmtNum(m.lag)} entries${self ? ' · this member' : ''}`,
        }),
        el('div', { class: 'counts', text: clientCounts(m) }),
        m.url ? el('div', { class: 'muted', text: m.url }) : null,
        webUrl(m.httpUrl) && !self ? el('a', { href: webUrl(m.httpUrl), text: 'its status page' }) : null,
      );
      if (leader) card.setAttribute('data-leader', 'true');
      return card;
    }),
  );
}

/** A member's client counts; unknown (null: unreachable, or not reported) is never shown as 0. */
function clientCounts(m) {
  if (typeof m.connections !== 'number' || typeof m.consumers !== 'number') return 'clients unknown';
  return `${fmtNum(m.connections)} connections · ${fmtNum(m.consumers)} consumers`;
}

function renderClusterCounts(o) {
  const unknown = o.uncountedMembers.length > 0 ? ` (not counted: ${o.uncountedMembers.join(', ')})` : '';
  document.getElementById('cluster-counts').textContent =
    `cluster: ${fmtNum(o.clusterConnections)} connections · ${fmtNum(o.clusterConsumers)} consumers${unknown}`;
}

function spark(name) {
  const h = history.queues.find((q) => q.name === name);
  const W = 240;
  const H = 36;
  const s = svg('svg', { class: 'spark', width: W, height: H, viewBox: `0 0 ${W} ${H}` });
  s.append(svg('rect', { x: 0, y: 0, width: W, height: H, fill: '#f3f5f9', rx: 3 }));
  if (!h || h.messages.length < 2) return s;
  const n = h.messages.length;
  const x = (i) => (i / (n - 1)) * W;
  const path = (values, max) =>
    values
      .map((v, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${(H - 2 - (v / max) * (H - 4)).toFixed(1)}`)
      .join(' ');
  const depthMax = Math.max(1, ...h.messages);
  s.append(
    svg('path', {
      d: `${path(h.messages, depthMax)} L${W},${H} L0,${H} Z`,
      fill: 'rgba(59,111,216,.18)',
      stroke: '#3b6fd8',
      'stroke-width': 1.2,
    }),
  );
  const rateMax = Math.max(1, ...h.publishRate, ...h.deliverRate);
  s.append(
    svg('path', { d: path(h.publishRate, rateMax), fill: 'none', stroke: '#1f9d55', 'stroke-width': 1.2 }),
  );
  s.append(
    svg('path', { d: path(h.deliverRate, rateMax), fill: 'none', stroke: '#e07b1a', 'stroke-width': 1.2 }),
  );
  const title = svg('title', {});
  title.textContent = `max ${fmtNum(depthMax)} messages, max ${fmtNum(rateMax)} msg/s`;
  s.append(title);
  return s;
}

function renderQueues(doc) {
  const body = document.querySelector('#queues tbody');
  if (doc.queues.length === 0) {
    body.replaceChildren(el('tr', {}, el('td', { class: 'empty', colspan: 9, text: 'no queues yet' })));
    return;
  }
  body.replaceChildren(
    ...doc.queues.map((q) =>
      el(
        'tr',
        { 'data-queue': q.name },
        el('td', { text: q.name }),
        el('td', { class: 'num', text: fmtNum(q.messages) }),
        el('td', { class: 'num', text: fmtBytes(q.bytes) }),
        el('td', { class: 'num', text: fmtNum(q.consumers) }),
        el('td', { class: 'num', text: fmtNum(q.unacknowledged) }),
        el('td', { class: 'num', text: fmtNum(q.publishRate) }),
        el('td', { class: 'num', text: fmtNum(q.deliverRate) }),
        el('td', {}, spark(q.name)),
        el(
          'td',
          { class: 'actions' },
          el('button', { type: 'button', 'data-action': 'purge', text: 'Purge' }),
          el('button', { type: 'button', 'data-action': 'delete', text: 'Delete' }),
        ),
      ),
    ),
  );
}

// Purge and delete through the HTTP API's queue changes (docs/management.md#http). Each is asked
// for first; the request carries the custom header the API demands of every change (so no other
// site's page can make one, docs/security.md#http-changes) and the credentials this page was
// loaded with: a user without the manage grant gets the API's refusal shown, nothing else.
const QUEUE_ACTIONS = {
  purge: {
    ask: (q) => `Purge queue '${q.name}'? Its ${fmtNum(q.messages)} messages are removed for good.`,
    path: (name) => `api/queues/${encodeURIComponent(name)}/messages`,
    done: (name, body) => `Purged ${fmtNum(body.purged)} messages from '${name}'.`,
  },
  delete: {
    ask: (q) => `Delete queue '${q.name}' with its ${fmtNum(q.messages)} messages?`,
    path: (name) => `api/queues/${encodeURIComponent(name)}`,
    done: (name, body) => `Deleted '${name}' (${fmtNum(body.dropped)} messages dropped).`,
  },
};

function showActionResult(text, ok) {
  const line = document.getElementById('queue-action');
  line.textContent = text;
  line.className = `action-result ${ok ? 'ok' : 'bad'}`;
  line.hidden = false;
}

async function queueAction(kind, name) {
  const action = QUEUE_ACTIONS[kind];
  const q = lastQueues?.queues.find((x) => x.name === name) ?? { name, messages: 0 };
  if (!window.confirm(action.ask(q))) return;
  try {
    const res = await fetch(action.path(name), {
      method: 'DELETE',
      cache: 'no-store',
      credentials: 'same-origin',
      headers: { 'X-Quorate-Request': '1' },
    });
    const body = await res.json().catch(() => ({}));
    if (res.ok) showActionResult(action.done(name, body), true);
    else
      showActionResult(
        `${kind} '${name}' refused: HTTP ${res.status}: ${body.error ?? res.statusText}`,
        false,
      );
  } catch (err) {
    showActionResult(`${kind} '${name}' failed: ${err.message}`, false);
  }
  await update();
}

document.querySelector('#queues tbody').addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  const row = button?.closest('tr[data-queue]');
  if (!button || !row) return;
  void queueAction(button.getAttribute('data-action'), row.getAttribute('data-queue'));
});

function renderConnections(doc) {
  const list = doc.connections;
  document.getElementById('conn-count').textContent = `${list.length} open on this member`;
  const body = document.querySelector('#connections tbody');
  if (list.length === 0) {
    body.replaceChildren(
      el('tr', {}, el('td', { class: 'empty', colspan: 6, text: 'no client connections' })),
    );
    return;
  }
  body.replaceChildren(
    ...list.map((c) =>
      el(
        'tr',
        {},
        el('td', { text: c.remote }),
        el('td', { text: c.containerId }),
        el('td', { text: c.user ?? '—' }),
        el('td', { class: 'num', text: String(c.sessions) }),
        el('td', { class: 'num', text: String(c.links) }),
        el('td', { text: new Date(c.openedAt).toLocaleTimeString() }),
      ),
    ),
  );
}

function showBanner(message) {
  const b = document.getElementById('banner');
  if (!message) {
    b.hidden = true;
    return;
  }
  b.replaceChildren(message);
  const others = (lastOverview?.members ?? []).filter(
    (m) => m.id !== lastOverview.member && webUrl(m.httpUrl),
  );
  if (others.length > 0) {
    b.append(' Other members: ');
    others.forEach((m, i) => {
      if (i > 0) b.append(' · ');
      b.append(el('a', { href: webUrl(m.httpUrl), text: m.id }));
    });
  }
  b.hidden = false;
}

let lastQueues = null;

async function refreshHistory() {
  try {
    history = await getJson('api/history');
    if (lastQueues) renderQueues(lastQueues);
  } catch {
    // the next refresh shows the error
  }
}

/** Fetches this member's documents once and redraws (a queue change redraws at once). */
async function update() {
  try {
    const [overview, queues, connections] = await Promise.all([
      getJson('api/overview'),
      getJson('api/queues'),
      getJson('api/connections'),
    ]);
    lastOverview = overview;
    lastQueues = queues;
    renderHeader(overview);
    renderMembers(overview);
    renderClusterCounts(overview);
    renderQueues(queues);
    renderConnections(connections);
    showBanner(null);
    document.getElementById('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
    document.body.setAttribute('data-loaded', 'true');
  } catch (err) {
    showBanner(`This member is not answering (${err.message}); showing its last known state.`);
  }
}

async function refresh() {
  tick++;
  // the charts' history comes separately, so the first paint does not wait for it
  if (tick % HISTORY_EVERY === 1) void refreshHistory();
  await update();
  setTimeout(refresh, REFRESH_MS);
}

refresh();
