// `agent-apps worker [--concurrency N] [--queue NAME] [--status]` (SPEC §19): run invocation
// requests from a NATS JetStream work queue through this workspace's pipeline, or show the queues.
import type { Command } from 'commander';
import { createRuntime, type Runtime } from '../runtime.ts';
import { AgentAppsError } from '../core/errors.ts';
import { EXIT, exitCodeFor, formatError, painter, type Painter } from './output.ts';
import { consoleReporter } from './reporters.ts';
import { globalsOf, runtimeOptions } from './runtime-options.ts';
import { checkQueueName } from '../nats/config.ts';
import { natsFor } from '../nats/connect.ts';
import type { CliIO } from './io.ts';

interface WorkerFlags {
  concurrency?: string;
  queue?: string;
  status?: boolean;
}

export function registerWorker(program: Command, io: CliIO): void {
  program
    .command('worker')
    .description('run skills for `run --remote` from a NATS JetStream work queue (or show the queues)')
    .option('-c, --concurrency <n>', 'requests run at the same time', '4')
    .option('-q, --queue <name>', 'the work queue to take requests from', 'default')
    .option('--status', 'per queue: requests waiting and running, workers seen in the last 30 s, dead letters (--json for JSON)')
    .addHelpText(
      'after',
      `
NATS comes from the workspace's main (events: { backend: nats, url: nats://127.0.0.1:4222 }) or
AGENT_APPS_EVENTS=nats://…; start a server with \`nats-server -js\`. Each request runs through
this workspace's full pipeline; a worker that dies mid-request has it redelivered to another
(after events.ackWaitMs), one delivered 3 times without a result goes to agent-apps.<ns>.dead.
SIGTERM (or Ctrl-C) drains: running requests finish, no new ones are taken, exit 0.

Examples:
  $ agent-apps worker --concurrency 8
  $ AGENT_APPS_EVENTS=nats://127.0.0.1:4222 agent-apps worker --queue gpu
  $ agent-apps run summarize --text "…" --remote --queue gpu
  $ agent-apps worker --status --json | jq '.queues[] | {queue, waiting, workers: (.workers | length)}'`,
    )
    .action(async (flags: WorkerFlags, cmd: Command) => {
      const code = await worker(flags, cmd, io);
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = code;
    });
}

async function worker(flags: WorkerFlags, cmd: Command, io: CliIO): Promise<number> {
  const g = globalsOf(cmd);
  const paint = await painter(io.stderr, g.color !== false);
  let runtime: Runtime | undefined;
  try {
    const concurrency = Number(flags.concurrency ?? 4);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1024) throw new AgentAppsError('E_USAGE', `--concurrency: a whole number from 1 to 1024, got ${JSON.stringify(flags.concurrency)}`);
    const queue = checkQueueName(flags.queue ?? 'default', '--queue');
    const rtOpts = runtimeOptions(g);
    runtime = await createRuntime({ ...rtOpts, reporters: [consoleReporter(io.stderr, paint)] });
    if (rtOpts.logLevel) runtime.root.manager.configure({ level: rtOpts.logLevel, global: true });
    const nats = await natsFor(runtime.root, 'agent-apps worker');
    if (flags.status) {
      const { workStatus } = await import('../nats/status.ts');
      const status = await workStatus(nats);
      io.stdout.write(g.json ? JSON.stringify(status) + '\n' : statusTable(status, paint));
      return EXIT.ok;
    }
    const { Worker } = await import('../nats/worker.ts');
    const log = (level: 'info' | 'warn' | 'error', text: string) => io.stderr.write(`${level === 'info' ? paint.dim('info') : level === 'warn' ? paint.yellow('warn') : paint.red('error')}: ${text}\n`);
    const w = new Worker(runtime, nats, { queue, concurrency, log });
    await w.start();
    log('info', `worker ${w.id}: queue '${queue}' on ${nats.config.url} (namespace ${nats.config.namespace}), ${concurrency} at a time — SIGTERM or Ctrl-C drains`);
    const signal = await new Promise<'SIGTERM' | 'SIGINT'>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    // A second Ctrl-C leaves at once (what runs is redelivered to another worker after the ack wait).
    process.once('SIGINT', () => process.exit(EXIT.interrupted));
    log('info', `worker ${w.id}: ${signal} — draining (${w.stats.running} running)`);
    await w.drain();
    log('info', `worker ${w.id}: drained — ${w.stats.done} done, ${w.stats.failed} failed`);
    return EXIT.ok;
  } catch (err) {
    io.stderr.write(formatError(err, { debug: !!g.debug, paint }) + '\n');
    return exitCodeFor(err);
  } finally {
    await runtime?.close();
  }
}

function statusTable(s: import('../nats/status.ts').WorkStatus, paint: Painter): string {
  let out = `${paint.bold('NATS')} ${s.url}  namespace ${s.namespace}\n`;
  if (!s.queues.length) out += 'no work queues yet — start one: agent-apps worker\n';
  else {
    const w = Math.max(5, ...s.queues.map((q) => q.queue.length));
    out += paint.bold(`${'QUEUE'.padEnd(w)}  ${'WAITING'.padStart(7)}  ${'RUNNING'.padStart(7)}  WORKERS (seen in the last 30 s)`) + '\n';
    for (const q of s.queues) {
      const workers = q.workers.length ? q.workers.map((b) => `${b.id} (${b.running}/${b.concurrency} busy, ${b.done} done)`).join(', ') : paint.dim('none');
      out += `${q.queue.padEnd(w)}  ${String(q.waiting).padStart(7)}  ${String(q.running).padStart(7)}  ${q.workers.length} ${workers}\n`;
    }
  }
  out += `dead letters: ${s.dead}${s.dead ? ` (${s.deadSubject})` : ''}\n`;
  return out;
}
