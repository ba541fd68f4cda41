/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for the tests: every sample
 * must belong to a family declared by `# TYPE` before it, names and labels must be well formed,
 * label values correctly escaped, values numbers (or NaN/+Inf/-Inf), no duplicate series, and a
 * histogram's buckets cumulative with `+Inf` equal to `_count`. Throws on the first violation.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(raw: string, line: number): number {
  if (raw === 'NaN') return Number.NaN;
  if (raw === '+Inf') return Number.POSITIVE_INFINITY;
  if (raw === '-Inf') return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw))
    throw new Error(`line ${line}: bad value '${raw}'`);
  return Number(raw);
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`line ${line}: label without '='`);
    const name = text.slice(i, eq).trim();
    if (!LABEL.test(name)) throw new Error(`line ${line}: bad label name '${name}'`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label value not quoted`);
    let j = eq + 2;
    let value = '';
    for (;;) {
      if (j >= text.length) throw new Error(`line ${line}: unterminated label value`);
      const c = text[j]!;
      if (c === '\\') {
        const n = text[j + 1];
        if (n === 'n') value += '\n';
        else if (n === '\\') value += '\\';
        else if (n === '"') value += '"';
        else throw new Error(`line ${line}: bad escape '\\${n}'`);
        j += 2;
      } else if (c === '"') {
        j++;
        break;
      } else {
        value += c;
        j++;
      }
    }
    if (name in labels) throw new Error(`line ${line}: duplicate label '${name}'`);
    labels[name] = value;
    if (j < text.length) {
      if (text[j] !== ',') throw new Error(`line ${line}: expected ',' between labels`);
      j++;
    }
    i = j;
  }
  return labels;
}

/** The family a sample name belongs to (histogram/summary suffixes stripped when declared so). */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  if (families.has(name)) return families.get(name);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  const seen = new Set<string>();
  const lines = text.split('\n');
  lines.pop();
  lines.forEach((raw, idx) => {
    const line = idx + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name '${name}'`);
      if (kind === 'HELP') {
        if (helps.has(name)) throw new Error(`line ${line}: second HELP for ${name}`);
        helps.set(name, rest);
        const f = families.get(name);
        if (f) f.help = rest;
        return;
      }
      if (!TYPES.has(rest)) throw new Error(`line ${line}: bad type '${rest}'`);
      if (families.has(name)) throw new Error(`line ${line}: second TYPE for ${name}`);
      families.set(name, { name, type: rest as Family['type'], help: helps.get(name) ?? '', samples: [] });
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(raw);
    if (!m) throw new Error(`line ${line}: not a sample: '${raw}'`);
    const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
    const family = familyOf(name, families);
    if (!family) throw new Error(`line ${line}: sample ${name} before its # TYPE`);
    const labels = labelText ? parseLabels(labelText, line) : {};
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`line ${line}: duplicate series ${key}`);
    seen.add(key);
    family.samples.push({ name, labels, value: parseValue(valueText, line) });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  // one histogram per label set (le aside): e.g. nodejs_gc_duration_seconds{kind=...}
  const seriesKey = (labels: Record<string, string>): string =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([k]) => k !== 'le')
        .sort(),
    );
  const groups = new Map<string, Sample[]>();
  for (const s of f.samples) {
    if (s.name !== `${f.name}_bucket`) continue;
    const key = seriesKey(s.labels);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const [key, buckets] of groups) {
    const les = buckets.map((b) => {
      if (b.labels.le === undefined) throw new Error(`${f.name}: bucket without le`);
      return parseValue(b.labels.le, 0);
    });
    for (let i = 1; i < buckets.length; i++) {
      if (!(les[i]! > les[i - 1]!)) throw new Error(`${f.name}${key}: bucket bounds not increasing`);
      if (buckets[i]!.value < buckets[i - 1]!.value)
        throw new Error(`${f.name}${key}: buckets not cumulative`);
    }
    if (les.at(-1) !== Number.POSITIVE_INFINITY) throw new Error(`${f.name}${key}: no +Inf bucket`);
    const count = f.samples.find((s) => s.name === `${f.name}_count` && seriesKey(s.labels) === key);
    if (!count || count.value !== buckets.at(-1)!.value)
      throw new Error(`${f.name}${key}: +Inf bucket != _count`);
    if (!f.samples.some((s) => s.name === `${f.name}_sum` && seriesKey(s.labels) === key)) {
      throw new Error(`${f.name}${key}: no _sum`);
    }
  }
}

/** The value of one series (labels must match exactly); undefined when absent. */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const f = familyOf(name, families);
  const want = JSON.stringify(Object.entries(labels).sort());
  return f?.samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want)
    ?.value;
}
