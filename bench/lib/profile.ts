import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/** Runs `fn` under the V8 CPU profiler of this process and writes the profile to `file`. */
export async function profiled<T>(file: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (file === undefined) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}
