/**
 * Qpid Proton's own Python example suite (`test_examples.py` from Debian's
 * libqpid-proton11-dev-examples, run with python3-qpid-proton) against a single node and against
 * a member of a 3-member cluster: each example test is one vitest test. The examples dial
 * `localhost:5672` (and their peer-to-peer ones `localhost:8888`): a temp copy has those
 * addresses rewritten to the broker under test and a free port. The two tornado tests run when
 * python3-tornado is installed (.ci/run installs it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, type ClusterHandle, startBroker } from '../../src/broker.js';
import { startTestCluster, waitServing } from '../cluster-broker/cluster/cluster-support.js';
import { freePort } from '../support/net.js';

const EXAMPLES = '/usr/share/proton/examples/python';
const PYTHON = '/usr/bin/python3';
const PER_TEST_MS = 90_000;

/** The example tests in file order (unittest runs them by name; the order here is the file's). */
function exampleTests(): string[] {
  const src = readFileSync(join(EXAMPLES, 'test_examples.py'), 'utf8');
  return [...src.matchAll(/^ {4}def (test_\w+)\(/gm)].map((m) => m[1]!);
}

/** A copy of the examples pointed at `brokerPort` (and `directPort` for the peer-to-peer ones). */
function examplesFor(brokerPort: number, directPort: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'proton-examples-'));
  cpSync(EXAMPLES, dir, { recursive: true });
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.py')) continue;
    const p = join(dir, f);
    const text = readFileSync(p, 'utf8')
      .replaceAll('localhost:5672', `127.0.0.1:${brokerPort}`)
      .replaceAll('localhost:8888', `127.0.0.1:${directPort}`)
      .replaceAll('0.0.0.0:8888', `127.0.0.1:${directPort}`);
    writeFileSync(p, text);
    chmodSync(p, 0o755);
  }
  // the examples start with `#!/usr/bin/env python3`: make that the Python that has proton
  const bin = join(dir, '.bin');
  mkdirSync(bin);
  symlinkSync(PYTHON, join(bin, 'python3'));
  return dir;
}

/** Runs one example test; resolves with its exit code and output. */
function runExampleTest(dir: string, name: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(
      PYTHON,
      ['-m', 'unittest', '-v', `test_examples.ExamplesTest.${name}`],
      {
        cwd: dir,
        env: { PATH: `${join(dir, '.bin')}:/usr/bin:/bin` },
        detached: true, // its own process group: a hung example is killed with everything it started
      },
    );
    let output = '';
    child.stdout?.on('data', (b: Buffer) => {
      output += b.toString();
    });
    child.stderr?.on('data', (b: Buffer) => {
      output += b.toString();
    });
    const timer = setTimeout(() => {
      output += `\n(killed after ${PER_TEST_MS} ms)`;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, PER_TEST_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const available = existsSync(join(EXAMPLES, 'test_examples.py')) && existsSync(PYTHON);
const tests = available ? exampleTests() : [];
const tornado = available && existsSync('/usr/lib/python3/dist-packages/tornado');

it('the Proton examples and their test suite are installed (libqpid-proton11-dev-examples)', () => {
  expect(available).toBe(true);
  expect(tests.length).toBeGreaterThanOrEqual(16);
});

function suite(target: () => number): void {
  let dir: string;
  beforeAll(async () => {
    dir = examplesFor(target(), await freePort());
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  for (const name of tests) {
    const needsTornado = name.includes('tornado');
    it(
      name,
      async () => {
        if (needsTornado) expect(tornado, 'python3-tornado is installed').toBe(true);
        const { code, output } = await runExampleTest(dir, name);
        expect(code, output).toBe(0);
      },
      PER_TEST_MS + 10_000,
    );
  }
}

describe('against a single node', () => {
  let broker: BrokerHandle;
  beforeAll(async () => {
    broker = await startBroker();
  });
  afterAll(() => broker?.stop());
  suite(() => broker.port);
});

describe('against a member of a 3-member cluster', () => {
  let cluster: ClusterHandle;
  beforeAll(async () => {
    cluster = await startTestCluster();
    await waitServing(cluster);
  });
  afterAll(() => cluster?.stop());
  suite(() => Number(new URL(cluster.urls[1]!).port));
});
