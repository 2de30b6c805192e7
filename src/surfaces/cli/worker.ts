// `agent-apps worker [--concurrency N] [--queue NAME] [--allow PATTERNS] [--max-ms N] [--drain-ms N]
// [--status]` (docs/scale.md): run invocation requests from a NATS JetStream work queue through
// this workspace's pipeline and the untrusted-caller policy, or show the queues.
import type { Command } from 'commander';
import { createRuntime, type Runtime } from '../../runtime.ts';
import { AgentAppsError } from '../../core/errors.ts';
import { EXIT, exitCodeFor, formatError, painter, type Painter } from '../shared/output.ts';
import { consoleReporter } from '../shared/reporters.ts';
import { globalsOf, runtimeOptions } from '../shared/runtime-options.ts';
import { checkQueueName } from '../../nats/config.ts';
import { parseAllowedTools } from '../../kernel/allowed-tools.ts';
import { natsFor } from '../../nats/connect.ts';
import type { CliIO } from '../shared/io.ts';

interface WorkerFlags {
  concurrency?: string;
  queue?: string;
  allow?: string;
  maxMs?: string;
  drainMs?: string;
  status?: boolean;
}

export function registerWorker(program: Command, io: CliIO): void {
  program
    .command('worker')
    .description('run skills for `run --remote` from a NATS JetStream work queue (or show the queues)')
    .option('-c, --concurrency <n>', 'requests run at the same time', '4')
    .option('-q, --queue <name>', 'the work queue to take requests from', 'default')
    .option('--allow <patterns>', "what publishers may run (allowed-tools syntax), e.g. \"greet summarize file-read(path=docs/*)\"; default: the workspace's own public skills, no built-in")
    .option('--max-ms <n>', 'abort a request running longer than this and answer it E_TIMEOUT', '600000')
    .option('--drain-ms <n>', 'on SIGTERM, how long running requests may finish before they are aborted and handed back to the queue', '20000')
    .option('--status', 'per queue: requests pending and running, workers seen in the last 30 s, dead letters (--json for JSON)')
    .addHelpText(
      'after',
      `
NATS comes from the workspace's main (events: { backend: nats, url: nats://127.0.0.1:4222 }) or
AGENT_APPS_EVENTS=nats://…; start a server with \`nats-server -js\`. A request is a remote
party's: it may run what --allow names (by default the workspace's own public skills; library
built-ins such as file-read or shell only when named), by name, with data-only args; anything
else is answered E_UNTRUSTED_REF / E_ALLOWED_TOOLS. Answers go to the results stream and to a
replyTo of the form agent-apps.<ns>.reply.<random> only. With events.signingKeyEnv set, only
signed requests run. Each request runs through this workspace's full pipeline; a worker that dies
mid-request has it redelivered to another (after events.ackWaitMs), which resumes its agents
from the run journal kept in the AGENT_APPS_<NS>_JOURNALS bucket (journaled turns and calls are
not run again; a call with no result re-runs only for idempotent: true skills, else E_RESUME);
one delivered 3 times without a result goes to agent-apps.<ns>.dead.<queue>. SIGTERM (or Ctrl-C) drains: no new
requests are taken, running ones get --drain-ms to finish, then are aborted and handed back to
the queue; exit 0.

Examples:
  $ agent-apps worker --concurrency 8
  $ agent-apps worker --allow "summarize translate file-read(path=docs/*)" --max-ms 120000
  $ AGENT_APPS_EVENTS=nats://127.0.0.1:4222 agent-apps worker --queue gpu
  $ agent-apps run summarize --text "…" --remote --queue gpu
  $ agent-apps worker --status --json | jq '.queues[] | {queue, pending, dead, workers: (.workers | length)}'`,
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
    const maxMs = wholeMs(flags.maxMs ?? '600000', '--max-ms');
    const drainMs = wholeMs(flags.drainMs ?? '20000', '--drain-ms', 0);
    const allow = flags.allow;
    if (allow !== undefined) {
      if (allow.trim() === '') throw new AgentAppsError('E_USAGE', '--allow: name at least one skill or pattern (allowed-tools syntax), e.g. --allow "greet summarize"');
      // An unclosed parenthesis would be read as two bare names: a typo must not widen the list.
      if ((allow.match(/\(/g) ?? []).length !== (allow.match(/\)/g) ?? []).length) throw new AgentAppsError('E_USAGE', `--allow: unbalanced parentheses in ${JSON.stringify(allow)}`);
      try {
        parseAllowedTools(allow);
      } catch (err) {
        throw new AgentAppsError('E_USAGE', `--allow: ${(err as Error).message}`);
      }
    }
    const rtOpts = runtimeOptions(g);
    runtime = await createRuntime({ ...rtOpts, reporters: [consoleReporter(io.stderr, paint)] });
    if (rtOpts.logLevel) runtime.root.manager.configure({ level: rtOpts.logLevel, global: true });
    const nats = await natsFor(runtime.root, 'agent-apps worker');
    if (flags.status) {
      const { workStatus } = await import('../../nats/status.ts');
      const status = await workStatus(nats);
      io.stdout.write(g.json ? JSON.stringify(status) + '\n' : statusTable(status, paint));
      return EXIT.ok;
    }
    const { Worker } = await import('../worker/worker.ts');
    const log = (level: 'info' | 'warn' | 'error', text: string) => io.stderr.write(`${level === 'info' ? paint.dim('info') : level === 'warn' ? paint.yellow('warn') : paint.red('error')}: ${text}\n`);
    const w = new Worker(runtime, nats, { queue, concurrency, log, maxMs, drainMs, ...(allow !== undefined ? { allow } : {}) });
    await w.start();
    const runs = allow !== undefined ? `runs ${JSON.stringify(allow)}` : "runs the workspace's own skills";
    log('info', `worker ${w.id}: queue '${queue}' on ${nats.config.url} (namespace ${nats.config.namespace}), ${concurrency} at a time, ${runs}${nats.signer ? `, signed requests only (${nats.signer.from})` : ''} — SIGTERM or Ctrl-C drains`);
    const signal = await new Promise<'SIGTERM' | 'SIGINT'>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    // A second Ctrl-C leaves at once (what runs is redelivered to another worker after the ack wait).
    process.once('SIGINT', () => process.exit(EXIT.interrupted));
    log('info', `worker ${w.id}: ${signal} — draining (${w.stats.running} running, up to ${drainMs} ms)`);
    const handedBack = await w.drain();
    log('info', `worker ${w.id}: drained — ${w.stats.done} done, ${w.stats.failed} failed${handedBack ? `, ${handedBack} handed back` : ''}`);
    return EXIT.ok;
  } catch (err) {
    io.stderr.write(formatError(err, { debug: !!g.debug, paint }) + '\n');
    return exitCodeFor(err);
  } finally {
    await runtime?.close();
  }
}

/** A whole number of milliseconds from a flag (E_USAGE, exit 2, otherwise). */
function wholeMs(value: string, flag: string, min = 1): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > 2 ** 31 - 1) throw new AgentAppsError('E_USAGE', `${flag}: a whole number of milliseconds from ${min} to ${2 ** 31 - 1}, got ${JSON.stringify(value)}`);
  return n;
}

function statusTable(s: import('../../nats/status.ts').WorkStatus, paint: Painter): string {
  let out = `${paint.bold('NATS')} ${s.url}  namespace ${s.namespace}\n`;
  if (!s.queues.length) out += 'no work queues yet — start one: agent-apps worker\n';
  else {
    const w = Math.max(5, ...s.queues.map((q) => q.queue.length));
    out += paint.bold(`${'QUEUE'.padEnd(w)}  ${'PENDING'.padStart(7)}  ${'RUNNING'.padStart(7)}  ${'DEAD'.padStart(5)}  WORKERS (seen in the last 30 s)`) + '\n';
    for (const q of s.queues) {
      const workers = q.workers.length ? q.workers.map((b) => `${b.id} (${b.running}/${b.concurrency} busy, ${b.done} done)`).join(', ') : paint.dim('none');
      out += `${q.queue.padEnd(w)}  ${String(q.pending).padStart(7)}  ${String(q.running).padStart(7)}  ${String(q.dead).padStart(5)}  ${q.workers.length} ${workers}\n`;
    }
  }
  out += `dead letters: ${s.dead}${s.dead ? ` (${s.deadSubject}.<queue>)` : ''}\n`;
  return out;
}
