// `npm run bench [-- NAME…]`: one JSON line per figure (each one is on its subsystem's docs page). Not a test; never gates CI.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const { benchmarks } = await import('./kernel.js');
const suites = { ...benchmarks };
// Subsystem benchmarks export `run()`; each prints its own lines.
const modules = { 'events.throughput': 'events.js', 'events.throughput.skill': 'events.js', 'sandbox.start': 'sandbox.js', 'sandbox.roundtrip': 'sandbox.js', 'sandbox.start.inline': 'sandbox.js', 'sandbox.roundtrip.inline': 'sandbox.js', 'sandbox.start.process': 'sandbox.js', 'sandbox.roundtrip.process': 'sandbox.js', 'sandbox.spawn': 'sandbox.js', 'agent.turn': 'agent.js', 'mcp.call': 'mcp.js', 'mcp.spawn': 'mcp.js', 'cli.test50': 'evals.js', 'cli.test50x5': 'evals.js', 'cli.agent': 'agent-cli.js', resume: 'resume.js', 'dist.throughput.w1': 'dist.js', 'dist.throughput.w2': 'dist.js', 'dist.throughput.w4': 'dist.js', 'events.throughput.nats': 'dist.js', 'serve.http': 'serve.js', 'otel.overhead': 'otel.js' };
for (const [name, file] of Object.entries(modules)) {
  if (fs.existsSync(path.join(here, file))) suites[name] = file;
}
const selected = wanted.length ? wanted : Object.keys(suites);
const unknown = selected.filter((n) => !(n in suites) && !n.startsWith('invoke.fanout'));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')} — known: ${Object.keys(suites).join(', ')}`);
  process.exit(2);
}
const ranFiles = new Set();
for (const name of selected) {
  const suite = suites[name] ?? suites['invoke.fanout'];
  if (typeof suite === 'string') {
    if (ranFiles.has(suite)) continue;
    ranFiles.add(suite);
    const mod = await import(pathToFileURL(path.join(here, suite)).href);
    const records = await mod.run(wanted.length ? selected : undefined);
    if (Array.isArray(records) && mod.printsItself === false) for (const r of records) console.log(JSON.stringify(r));
    continue;
  }
  for (const record of await suite()) console.log(JSON.stringify(record));
}
// Every figure is printed: end here. A suite whose module keeps a handle open (the full run was
// seen to stay alive after its last figure, with two sockets opened at start) must not hold the
// terminal or a CI job; which suite it is stays to be found (docs/decisions.md).
process.exit(process.exitCode ?? 0);
