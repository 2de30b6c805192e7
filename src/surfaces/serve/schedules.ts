// Schedules fire only under `agent-apps serve` (docs/serve.md, "Schedules"): startSchedules loads
// the store (the workspace's .agent-apps/schedules.json, or NATS KV: src/events/schedules-store.ts),
// arms one timer per schedule, and on each fire runs its `ref` with its `args` through the full pipeline from the root,
// with `nonlocals.trigger = 'schedule'`. Each fire is a run of its own: a run file under
// .agent-apps/runs/ with run-start / run-end (as `agent-apps run` writes them, reporters.ts) and
// `trigger: 'schedule'`, so `agent-apps runs` lists it. The store is watched: a schedule created or
// deleted while serve runs is armed or disarmed. Each fire is claimed first (src/events/claims.ts):
// of several serve processes on one NATS namespace, each arms every schedule and the one that takes
// the fire's claim runs it. The clock and the timer are injectable for tests.
import { randomUUID } from 'node:crypto';
import type { Runtime } from '../../runtime.ts';
import type { JsonObject, LogEvent } from '../../core/types.ts';
import { EXIT, exitCodeFor } from '../../core/errors.ts';
import { cronReady, definitionOf, makeSchedule, missedFire, nextFire, scheduleStore, type Schedule, type ScheduleInput, type ScheduleStore } from '../../events/schedules-store.ts';
import { claimsFor, claimKey, type Claims } from '../../events/claims.ts';
import { jsonlReporter, recordsRuns } from '../shared/reporters.ts';

export type SetTimer = (fn: () => void, ms: number) => () => void;

export interface ScheduleOptions {
  /** One line on the serve process's stderr. */
  log(level: 'info' | 'warn' | 'error', text: string): void;
  /** The clock that decides when a schedule is due (ms since the epoch). */
  now?: () => number;
  /** Arms a timer; returns what disarms it. */
  setTimer?: SetTimer;
  /** Watch the store for changes made while serve runs (default true). */
  watch?: boolean;
  /** Where the schedules are (default: the runtime's, scheduleStore). */
  store?: ScheduleStore;
  /** Who runs a fire (default: the runtime's, claimsFor). */
  claims?: Claims;
}

export interface Schedules {
  close(): Promise<void>;
  /** What serve prints at start: one line per schedule armed. */
  lines: string[];
  /** Re-reads the store now (what the watcher does on a change); settles when it is re-armed. */
  reload(): Promise<void>;
  /** Settles when every fire in flight has ended (tests). */
  idle(): Promise<void>;
}

// setTimeout's longest delay; a schedule further away re-arms when it elapses.
const MAX_DELAY = 2 ** 31 - 1;

const defaultTimer: SetTimer = (fn, ms) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

interface Armed {
  schedule: Schedule;
  /** Its definition (without lastFiredAt): a change to it re-arms. */
  key: string;
  disarm?: () => void;
  /** Fires in flight (overlap: skip refuses one while this is > 0). */
  active: number;
  tail: Promise<void>;
}

function definitionKey(s: Schedule): string {
  const { lastFiredAt: _, ...rest } = s;
  return JSON.stringify(rest);
}

function describeWhen(s: Schedule): string {
  if (s.cron !== undefined) return `cron '${s.cron}'${s.timezone ? ` (${s.timezone})` : ''}`;
  if (s.every !== undefined) return `every ${s.every}ms`;
  return `at ${s.at}`;
}

export async function startSchedules(runtime: Runtime, opts: ScheduleOptions): Promise<Schedules> {
  const now = opts.now ?? Date.now;
  const setTimer = opts.setTimer ?? defaultTimer;
  const workspace = runtime.root.locals.config.workspace;
  const store = opts.store ?? (await scheduleStore(runtime.root));
  const claims = opts.claims ?? (await claimsFor(runtime.root));
  const armed = new Map<string, Armed>();
  const inFlight = new Set<Promise<void>>();
  let closed = false;
  await cronReady();

  const record = (file: ReturnType<typeof jsonlReporter> | undefined, id: string, e: Omit<LogEvent, 'timestamp' | 'contextId' | 'tool'>) =>
    file?.report({ timestamp: Date.now(), contextId: id, rootContextId: id, tool: 'serve', ...e } as LogEvent);

  /**
   * One fire: claimed first (another serve on the same NATS namespace may have taken it: then
   * nothing runs here), noted in the store (a crash mid-run does not fire it again), then the run.
   */
  async function runOnce(s: Schedule, due: number): Promise<void> {
    try {
      if ((await claims.take(claimKey('fire', s.name, due), String(process.pid))) !== undefined) return;
    } catch (err) {
      opts.log('error', `schedule ${s.name}: cannot claim the fire due ${new Date(due).toISOString()} (${(err as Error).message}): not run`);
      return;
    }
    try {
      await store.update((list) => {
        const stored = list.find((x) => x.name === s.name);
        if (stored) stored.lastFiredAt = new Date(due).toISOString();
      });
    } catch (err) {
      opts.log('warn', `schedule ${s.name}: cannot note the fire in ${store.where} (${(err as Error).message})`);
    }
    const id = randomUUID();
    let file: ReturnType<typeof jsonlReporter> | undefined;
    try {
      if (recordsRuns(workspace)) file = jsonlReporter(workspace, id);
    } catch (err) {
      opts.log('warn', `schedule ${s.name}: cannot record the run under ${workspace}/.agent-apps (${(err as Error).message})`);
    }
    const started = Date.now();
    const args = (s.args ?? {}) as JsonObject;
    const fields = { skill: s.ref, trigger: 'schedule', schedule: s.name, dueAt: new Date(due).toISOString() };
    // tag `cli`: the run-start / run-end `agent-apps runs` reads (src/surfaces/cli/runs.ts).
    record(file, id, { type: 'run-start', tag: 'cli', level: 'info', text: `run ${s.ref}`, args, pid: process.pid, ...fields });
    try {
      await runtime.invoke(s.ref, args, { context: { nonlocals: { trigger: 'schedule', schedule: s.name } } });
      record(file, id, { type: 'run-end', tag: 'cli', level: 'info', text: `run ${s.ref}: ok`, exitCode: EXIT.ok, durationMs: Date.now() - started, ...fields });
    } catch (err) {
      const code = (err as { code?: string })?.code;
      const exitCode = exitCodeFor(err);
      const text = `run ${s.ref}: ${(err as Error)?.message ?? err}`;
      record(file, id, { type: 'run-end', tag: 'cli', level: exitCode === EXIT.refused ? 'info' : 'error', text, ...(code ? { code } : {}), exitCode, durationMs: Date.now() - started, ...fields });
      opts.log('error', `schedule ${s.name}: ${text}`);
    } finally {
      file?.close?.();
    }
  }

  function fire(a: Armed, due: number): void {
    if (closed) return;
    const s = a.schedule;
    if (a.active > 0 && s.overlap === 'skip') {
      opts.log('info', `schedule ${s.name}: skipped the fire due ${new Date(due).toISOString()} (the previous one still runs; overlap: skip)`);
      return;
    }
    a.active++;
    // overlap: queue — this fire starts when the one before it ends.
    const p = a.tail.then(() => runOnce(s, due)).finally(() => {
      a.active--;
      inFlight.delete(p);
    });
    a.tail = p;
    inFlight.add(p);
  }

  function arm(a: Armed, at?: number): void {
    a.disarm?.();
    a.disarm = undefined;
    if (closed) return;
    const due = at ?? nextFire(a.schedule, now());
    if (due === undefined) return;
    const delay = Math.max(0, due - now());
    a.disarm = setTimer(() => {
      a.disarm = undefined;
      // Early (a delay over setTimeout's longest, or a clock that moved back): wait the rest.
      if (now() < due) return arm(a, due);
      fire(a, due);
      arm(a);
    }, Math.min(delay, MAX_DELAY));
  }

  async function load(start: boolean): Promise<string[]> {
    const lines: string[] = [];
    let list: Schedule[];
    try {
      list = await store.list();
    } catch (err) {
      opts.log('error', `schedules: ${(err as Error).message}`);
      return lines;
    }
    if (closed) return lines;
    const names = new Set(list.map((s) => s.name));
    for (const [name, a] of armed) {
      if (names.has(name)) continue;
      a.disarm?.();
      armed.delete(name);
      if (!start) opts.log('info', `schedule ${name}: deleted, disarmed`);
    }
    for (const s of list) {
      const key = definitionKey(s);
      const known = armed.get(s.name);
      if (known && known.key === key) continue;
      let a: Armed;
      if (known) {
        known.schedule = s;
        known.key = key;
        a = known;
      } else {
        a = { schedule: s, key, active: 0, tail: Promise.resolve() };
        armed.set(s.name, a);
      }
      try {
        // A fire missed while no serve ran (docs/serve.md): catchUp latest runs the latest one once, now.
        const missed = start ? missedFire(s, now()) : undefined;
        if (missed !== undefined && s.catchUp === 'latest') {
          opts.log('info', `schedule ${s.name}: catching up the fire due ${new Date(missed).toISOString()}`);
          fire(a, missed);
        }
        arm(a);
      } catch (err) {
        opts.log('error', `schedule ${s.name}: ${(err as Error).message}`);
        continue;
      }
      const next = nextFire(s, now());
      const line = `schedule ${s.name}: ${describeWhen(s)} → ${s.ref}${next === undefined ? ' (no fire ahead)' : ` (next ${new Date(next).toISOString()})`}`;
      if (start) lines.push(line);
      else opts.log('info', known ? `${line}: changed, re-armed` : `${line}: armed`);
    }
    return lines;
  }

  // Loads one after another: a change seen while the store is being read is read again after.
  let loading: Promise<unknown> = Promise.resolve();
  const reload = () => (loading = loading.then(() => (closed ? undefined : load(false))));

  await syncDeclared(runtime, store, now(), opts.log);
  const lines = await load(true);

  // The store changes when schedule-create / -delete run (in this serve or in another process).
  let unwatch: (() => void) | undefined;
  if (opts.watch !== false) {
    try {
      unwatch = await store.watch(() => void reload());
    } catch (err) {
      opts.log('warn', `schedules: cannot watch ${store.where} (${(err as Error).message}): changes apply at the next serve`);
    }
  }

  const idle = async () => {
    while (inFlight.size) await Promise.allSettled([...inFlight]);
  };

  return {
    lines,
    reload: async () => void (await reload()),
    idle,
    async close() {
      closed = true;
      unwatch?.();
      for (const a of armed.values()) a.disarm?.();
      // What runs goes on to its end (the drain, docs/serve.md).
      await idle();
    },
  };
}

/**
 * A skill's own `schedule:` key (docs/serve.md) — `{ cron | every | at, timezone?, args?,
 * overlap?, catchUp? }`, a cron string, or a list of them — read from the skill's own metadata
 * (never the cascade: a main's `schedule` is not every skill's). Declared schedules are kept in the
 * store beside the created ones, named after the skill (`NAME`, or `NAME.2` … for a list) and marked
 * `declaredBy`, so that catch-up knows when they last fired; one whose declaration changed starts
 * afresh, one no skill declares any more is dropped. A created schedule of the same name wins.
 */
async function syncDeclared(runtime: Runtime, store: ScheduleStore, now: number, log: ScheduleOptions['log']): Promise<void> {
  const { paths, cwd } = runtime.root.locals.config;
  const kernel = runtime.root.globals.internals.kernel;
  const declared: Schedule[] = [];
  let summaries: Awaited<ReturnType<Runtime['list']>>;
  try {
    summaries = await runtime.list();
  } catch (err) {
    log('warn', `schedules: cannot list the skills for their schedule: keys (${(err as Error).message})`);
    return;
  }
  for (const summary of summaries) {
    if (summary.error || summary.kind === 'mcp') continue;
    let own: unknown;
    try {
      own = (await kernel.resolve(summary.name, paths, cwd)).metadata?.schedule;
    } catch {
      continue;
    }
    if (own === undefined || own === null || own === false) continue;
    const list = Array.isArray(own) ? own : [own];
    for (const [i, entry] of list.entries()) {
      const name = list.length === 1 ? summary.name : `${summary.name}.${i + 1}`;
      const decl = (typeof entry === 'string' ? { cron: entry } : entry) as Partial<ScheduleInput> | null;
      try {
        if (!decl || typeof decl !== 'object' || Array.isArray(decl)) throw new Error('a schedule is { cron | every | at, … } or a cron string');
        const { cron, every, at, timezone, args, overlap, catchUp } = decl;
        const s = await makeSchedule({ name, ref: summary.name, cron, every, at, timezone, args, overlap, catchUp }, now);
        s.declaredBy = summary.name;
        declared.push(s);
      } catch (err) {
        log('error', `schedule ${name}: ${summary.name}'s schedule: key — ${(err as Error).message}`);
      }
    }
  }
  try {
    // Nothing declared, nothing declared before: the store is left as it is (or absent).
    if (!declared.length && !(await store.list()).some((s) => s.declaredBy !== undefined)) return;
    await store.update((list) => {
      const byName = new Map(declared.map((s) => [s.name, s]));
      for (let i = list.length - 1; i >= 0; i--) {
        const stored = list[i]!;
        if (stored.declaredBy === undefined) {
          if (byName.delete(stored.name)) log('warn', `schedule ${stored.name}: a schedule made with schedule-create has this name: the skill's schedule: key is not armed`);
          continue;
        }
        const fresh = byName.get(stored.name);
        if (!fresh) list.splice(i, 1);
        else {
          if (definitionOf(fresh) !== definitionOf(stored)) list[i] = fresh;
          byName.delete(stored.name);
        }
      }
      list.push(...byName.values());
    });
  } catch (err) {
    log('error', `schedules: cannot keep the declared schedules in ${store.where} (${(err as Error).message})`);
  }
}
