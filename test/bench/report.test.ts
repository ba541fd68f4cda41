import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  cpuMsPerSecond,
  cpuPerMessageUs,
  ownCpuMs,
  ProcStatParseError,
  parseProcStat,
  processCpuMs,
  schedstatCpuNs,
  statCpuMs,
  threadsCpuMs,
} from '../../bench/lib/process-cpu.js';
import {
  REPORT_END,
  REPORT_START,
  ReportMarkersError,
  renderLog,
  renderReport,
  replaceGenerated,
} from '../../bench/lib/report-page.js';

// fields 3..52 of a real line, with minflt 18224 (field 10), utime 1234, stime 567, cutime 8, cstime 9 (fields 14-17)
const TAIL =
  'S 4242 4243 4243 0 -1 4194304 18224 0 0 0 1234 567 8 9 20 0 11 0 987654 1277112320 25061 18446744073709551615 1 1 0 0 0 0 0 16781312 17922 0 0 0 17 1 0 0 0 0 0';

describe('parseProcStat', () => {
  it('counts the fields from the last parenthesis, so a command name with spaces and parentheses does not shift them', () => {
    const s = parseProcStat(`31337 (node (worker) a b) ${TAIL}\n`);
    expect(s).toEqual({
      pid: 31337,
      ppid: 4242,
      minflt: 18224,
      utime: 1234,
      stime: 567,
      cutime: 8,
      cstime: 9,
    });
  });

  it('reads this process from /proc', () => {
    const s = parseProcStat(readFileSync('/proc/self/stat', 'utf8'));
    expect(s.pid).toBe(process.pid);
    expect(s.ppid).toBe(process.ppid);
  });

  it('rejects a truncated line, a non-numeric field and a line without a command', () => {
    expect(() => parseProcStat('12 (node) S 1 2 3')).toThrow(ProcStatParseError);
    expect(() => parseProcStat(`12 (node) ${TAIL.replace('1234', '12x4')}`)).toThrow(/field 14/);
    expect(() => parseProcStat(`12 node ${TAIL}`)).toThrow(ProcStatParseError);
  });

  it('turns ticks into milliseconds, children waited for included', () => {
    const s = parseProcStat(`1 (x) ${TAIL}`);
    expect(statCpuMs(s, 100)).toBe((1234 + 567 + 8 + 9) * 10);
    expect(statCpuMs(s, 1000)).toBe(1234 + 567 + 8 + 9);
  });
});

/** Spends `ms` of this process's CPU (a deadline, not a fixed wait, bounds it on a busy machine). */
function burnCpu(ms: number): void {
  const start = ownCpuMs();
  const deadline = Date.now() + 30_000;
  let x = 0;
  while (ownCpuMs() - start < ms && Date.now() < deadline) x += Math.sqrt(x + 1);
  expect(x).toBeGreaterThan(0);
}

describe('CPU per process', () => {
  it("follows this process's CPU as the OS counts it", () => {
    const before = processCpuMs(process.pid);
    expect(before).not.toBeNull();
    burnCpu(200);
    expect(processCpuMs(process.pid)! - before!).toBeGreaterThanOrEqual(150);
  });

  it('reads null for a process that is not there', () => {
    expect(processCpuMs(2 ** 22 + 12_345)).toBeNull();
    expect(threadsCpuMs(2 ** 22 + 12_345)).toBeNull();
  });

  it("reads a schedstat line's time on a CPU in nanoseconds, and nothing from a line that is not one", () => {
    expect(schedstatCpuNs('257004168 231328033 221\n')).toBe(257_004_168);
    expect(schedstatCpuNs('')).toBeNull();
    expect(schedstatCpuNs('12x 3 4')).toBeNull();
  });

  it("sums this process's threads to below a clock tick, and counts the CPU it burns", () => {
    const before = threadsCpuMs(process.pid);
    expect(before).not.toBeNull();
    burnCpu(30);
    const after = threadsCpuMs(process.pid)!;
    expect(after - before!).toBeGreaterThanOrEqual(25);
    // stat's ticks are whole 10 ms; nanoseconds summed are not (a whole ms has a 1e-6 chance)
    expect(Number.isInteger(after)).toBe(false);
    expect(Number.isInteger(processCpuMs(process.pid)!)).toBe(false);
  });

  it('divides each process difference by the messages, null where a side is unreadable', () => {
    const before = new Map<string, number | null>([
      ['client', 1000],
      ['leader n1', 200],
      ['follower n2', null],
    ]);
    const after = new Map<string, number | null>([
      ['client', 1050],
      ['leader n1', 330],
      ['follower n2', 90],
    ]);
    expect([...cpuPerMessageUs(before, after, 2000)]).toEqual([
      ['client', 25],
      ['leader n1', 65],
      ['follower n2', null],
    ]);
  });

  it('divides each process difference by the seconds between the snapshots, null where a side is unreadable', () => {
    const before = new Map<string, number | null>([
      ['east leader n1', 500],
      ['west leader n2', null],
    ]);
    const after = new Map<string, number | null>([
      ['east leader n1', 560],
      ['west leader n2', 90],
    ]);
    expect([...cpuMsPerSecond(before, after, 3)]).toEqual([
      ['east leader n1', 20],
      ['west leader n2', null],
    ]);
  });
});

describe('the generated section of docs/benchmarks.md', () => {
  const page = `# Benchmarks\n\nintro\n\n${REPORT_START}\nold figures\n${REPORT_END}\n\n## History\n\nkept\n`;

  it('replaces only what lies between the markers, and again on a second run', () => {
    const once = replaceGenerated(page, 'new figures');
    expect(once).toBe(
      `# Benchmarks\n\nintro\n\n${REPORT_START}\nnew figures\n${REPORT_END}\n\n## History\n\nkept\n`,
    );
    expect(replaceGenerated(once, 'newer')).toBe(once.replace('new figures', 'newer'));
  });

  it('refuses a page with a marker missing, doubled or out of order', () => {
    expect(() => replaceGenerated('no markers', 'x')).toThrow(ReportMarkersError);
    expect(() => replaceGenerated(`${page}${REPORT_END}`, 'x')).toThrow(/1 start and 2 end/);
    expect(() => replaceGenerated(`${REPORT_END}\n${REPORT_START}`, 'x')).toThrow(/before the start/);
  });

  it('holds its markers on the page itself', () => {
    const docs = readFileSync(new URL('../../docs/benchmarks.md', import.meta.url), 'utf8');
    expect(() => replaceGenerated(docs, 'x')).not.toThrow();
  });

  it("keeps a bench's tables as tables and puts its other lines in text blocks", () => {
    expect(renderLog(['single node: 5 msg/s', '', '| a | b |', '|---|---|', '| 1 | 2 |', 'ratio 2x'])).toBe(
      '```text\nsingle node: 5 msg/s\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```text\nratio 2x\n```',
    );
  });

  it('names the commit, the machine and the command, says quick mode, and shows a failed bench', () => {
    const text = renderReport(
      {
        commit: 'abc1234+dirty',
        date: '2026-12-04T20:00:00Z',
        machine: '2 cores, Some CPU, Node v20.0.0',
        command: 'npm run bench -- report --quick',
        quick: true,
        seconds: 61.4,
      },
      [
        { title: 'Topics', command: 'npm run bench -- topics', lines: ['ratio 2x'], seconds: 3 },
        {
          title: 'Federation',
          command: 'npm run bench -- federation',
          lines: [],
          error: 'no\nleader',
          seconds: 9,
        },
      ],
    );
    expect(text).toContain(
      '`npm run bench -- report --quick` on commit `abc1234+dirty`, 2026-12-04T20:00:00Z',
    );
    expect(text).toContain('2 cores, Some CPU, Node v20.0.0');
    expect(text).toContain('**Quick mode**');
    expect(text).toContain('### Topics\n\n`npm run bench -- topics` (3 s)\n\n```text\nratio 2x\n```');
    expect(text).toContain('### Federation');
    expect(text).toContain('**Failed**: no leader');
  });
});
