// MCP benchmarks (docs/mcp.md; issue 9):
// - `mcp.call` (µs): one `tools/call` of the no-op skill through `agent-apps mcp serve` over stdio,
//   sequential, warm, from the official client (@modelcontextprotocol/client); baseline: one
//   `runtime.invoke` of the same skill in this process.
//   The record also carries `ipc`: the µs of a bare round trip of a message of the same size
//   through the same kind of pipes to a Node child that echoes it — the floor any stdio server
//   stands on, on this machine, now — and `cpu`: the CPU µs per call of the client and of the
//   server process, which (unlike the wall time) a loaded machine does not inflate much.
// - `mcp.spawn` (ms): first use of the stdio server — spawn `agent-apps mcp serve`, connect
//   (the 2025 handshake) and list the tools; baseline `node -e 0`.
// Run alone with `node bench/mcp.js`, or through `bench/run.js`, which imports `run`.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createRuntime } from '../src/index.ts';
import { benchRunner, runIfMain } from './runner.js';

const CALLS = 2000;
const WARMUP = 5000;
const RUNS = 5;
const SPAWNS = 5;

const here = path.dirname(fileURLToPath(import.meta.url));
const ws = path.join(here, 'ws');
const bin = path.join(here, '..', 'bin', 'agent-apps.js');

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round = (n) => Math.round(n * 1000) / 1000;

async function connect() {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', 'serve'], cwd: ws, stderr: 'ignore' });
  const client = new Client({ name: 'agent-apps-bench', version: '1.0.0' });
  await client.connect(transport);
  return { client, pid: transport.pid };
}

/** CPU µs a process has used (user + system), from /proc; undefined where there is none. */
function cpuOf(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime + stime, in clock ticks of 10 ms
  } catch {
    return undefined;
  }
}

async function mcpCall() {
  const { client, pid } = await connect();
  try {
    const call = async () => {
      const r = await client.callTool({ name: 'noop', arguments: {} });
      if (r.isError) throw new Error(`mcp.call: ${JSON.stringify(r.content)}`);
    };
    // Warm: both processes' JITs settle only after a few thousand calls.
    for (let i = 0; i < WARMUP; i++) await call();
    const perCall = [];
    // CPU per call on each side: what the wall time is made of, whatever the machine's load.
    const serverCpu0 = cpuOf(pid);
    const clientCpu0 = process.cpuUsage();
    for (let run = 0; run < RUNS; run++) {
      const t = performance.now();
      for (let i = 0; i < CALLS; i++) await call();
      perCall.push(((performance.now() - t) * 1000) / CALLS);
    }
    const clientCpu = process.cpuUsage(clientCpu0);
    const serverCpu = serverCpu0 === undefined ? undefined : cpuOf(pid) - serverCpu0;
    const rt = await createRuntime({ cwd: ws });
    const perInvoke = [];
    try {
      for (let i = 0; i < CALLS; i++) await rt.invoke('noop');
      for (let run = 0; run < RUNS; run++) {
        const t = performance.now();
        for (let i = 0; i < CALLS; i++) await rt.invoke('noop');
        perInvoke.push(((performance.now() - t) * 1000) / CALLS);
      }
    } finally {
      await rt.close();
    }
    const value = median(perCall);
    const baseline = median(perInvoke);
    return { name: 'mcp.call', value: round(value), unit: 'µs', baseline: round(baseline), ratio: round(value / baseline), ipc: round(await pipeRoundTrip()), cpu: { client: round((clientCpu.user + clientCpu.system) / (RUNS * CALLS)), server: serverCpu === undefined ? null : round(serverCpu / (RUNS * CALLS)) }, calls: CALLS, runs: RUNS };
  } finally {
    await client.close();
  }
}

/** µs per round trip of a tools/call-sized line through stdio pipes to an echoing Node child. */
async function pipeRoundTrip() {
  const child = spawn(process.execPath, ['-e', "process.stdin.on('data', (d) => process.stdout.write(d))"], { stdio: ['pipe', 'pipe', 'ignore'] });
  const line = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'noop', arguments: {}, _meta: {} } }) + '\n';
  let answered = () => {};
  child.stdout.on('data', () => answered());
  const once = () => new Promise((resolve) => ((answered = resolve), child.stdin.write(line)));
  try {
    for (let i = 0; i < WARMUP; i++) await once();
    const runs = [];
    for (let run = 0; run < RUNS; run++) {
      const t = performance.now();
      for (let i = 0; i < CALLS; i++) await once();
      runs.push(((performance.now() - t) * 1000) / CALLS);
    }
    return median(runs);
  } finally {
    child.kill();
  }
}

async function mcpSpawn() {
  const times = [];
  for (let i = 0; i < SPAWNS; i++) {
    const t = performance.now();
    const { client } = await connect();
    await client.listTools();
    times.push(performance.now() - t);
    await client.close();
  }
  const nodeTimes = [];
  for (let i = 0; i < SPAWNS; i++) {
    const t = performance.now();
    execFileSync(process.execPath, ['-e', '0']);
    nodeTimes.push(performance.now() - t);
  }
  const value = median(times);
  const baseline = median(nodeTimes);
  return { name: 'mcp.spawn', value: round(value), unit: 'ms', baseline: round(baseline), ratio: round(value / baseline), runs: SPAWNS };
}

export const run = benchRunner({ 'mcp.call': mcpCall, 'mcp.spawn': mcpSpawn });

await runIfMain(import.meta.url, run);
