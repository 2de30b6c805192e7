// Run by test/security/loader.test.ts as `node --expose-gc loader-heap-cycles.ts DIR CYCLES`: that many
// createRuntime() / invoke(code skill) / close() cycles over the workspace DIR, then prints the
// heap growth (bytes, after a full GC) as JSON on stdout. A child process of its own, because
// node:test files cannot be given --expose-gc.
import { createRuntime } from '../../src/index.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const [dir, cyclesArg, skill = 'hello'] = process.argv.slice(2);
const cycles = Number(cyclesArg ?? 500);

async function cycle(): Promise<void> {
  const rt = await createRuntime({ cwd: dir });
  try {
    await rt.invoke(skill, {});
  } finally {
    await rt.close();
  }
}

async function heap(): Promise<number> {
  // Let timers and finalizers of the closed runtimes run before measuring.
  for (let i = 0; i < 4; i++) {
    await new Promise((r) => setTimeout(r, 10));
    gc!();
  }
  return process.memoryUsage().heapUsed;
}

// Warm-up: first-use loads (ajv, yaml, the library's modules) are not a leak.
for (let i = 0; i < 20; i++) await cycle();
const before = await heap();
const started = Date.now();
for (let i = 0; i < cycles; i++) await cycle();
const after = await heap();
process.stdout.write(JSON.stringify({ cycles, before, after, growth: after - before, ms: Date.now() - started }) + '\n');
