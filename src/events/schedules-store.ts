// Schedules (docs/serve.md): what `schedule-create` stores and `agent-apps serve` fires. The store
// is the workspace's .agent-apps/schedules.json, written whole to a temporary file and renamed in,
// so a reader (another CLI run, a serve watching the file) never sees half of it — or, on the NATS
// backend, one key of a JetStream key-value bucket every process of the namespace shares, changed
// by compare-and-set (src/nats/kv.ts). Cron syntax and time zones are croner's: a maintained
// parser, not one of ours.
import fs from 'node:fs';
import path from 'node:path';
import type { Cron as CronType } from 'croner';
import { AgentAppsError, ValidationError } from '../core/errors.ts';
import type { Context } from '../core/types.ts';
import { eventsConfig } from '../nats/config.ts';
import { natsFor } from '../nats/connect.ts';

export const SCHEDULES_FILE = path.join('.agent-apps', 'schedules.json');

export interface Schedule {
  name: string;
  cron?: string;
  /** Milliseconds between fires, counted from `createdAt`. */
  every?: number;
  /** One fire, at this ISO 8601 time. */
  at?: string;
  timezone?: string;
  ref: string;
  args?: Record<string, unknown>;
  /** A fire due while the previous one still runs: skipped, or run after it. */
  overlap: 'skip' | 'queue';
  /** A fire missed while no serve ran: skipped, or the latest one run once at start. */
  catchUp: 'none' | 'latest';
  createdAt: string;
  /** When it last fired (the due time): what catch-up counts missed fires from. */
  lastFiredAt?: string;
  /** Declared by this skill's own `schedule:` key (docs/serve.md), not made by schedule-create. */
  declaredBy?: string;
}

export interface ScheduleInput {
  name?: string;
  cron?: string;
  every?: string | number;
  at?: string;
  timezone?: string;
  ref: string;
  args?: Record<string, unknown>;
  overlap?: 'skip' | 'queue';
  catchUp?: 'none' | 'latest';
}

// croner is loaded on first need: the public API re-exports this module, and a run that never
// schedules anything must not pay for the parser.
let Cron: typeof CronType | undefined;
export async function cronReady(): Promise<void> {
  Cron ??= (await import('croner')).Cron;
}
function cron(pattern: string, timezone?: string): CronType {
  if (!Cron) throw new AgentAppsError('E_INTERNAL', 'croner is not loaded: await cronReady() first');
  return new Cron(pattern, { paused: true, ...(timezone ? { timezone } : {}) });
}

function invalid(field: string, message: string): ValidationError {
  // Named by field, as validate-args names a param (docs/errors.md, E_VALIDATION).
  return new ValidationError('schedule-create args', [{ instancePath: `/${field}`, message, keyword: 'format', params: { field }, schemaPath: `#/properties/${field}` }]);
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "30s", "5m", "1h", "1h30m", "250ms", or a number of milliseconds. */
export function parseDuration(value: string | number, field = 'every'): number {
  let ms: number;
  if (typeof value === 'number') ms = value;
  else if (/^\d+$/.test(value.trim())) ms = Number(value.trim());
  else {
    const parts = [...value.trim().matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
    if (!parts.length || parts.map((p) => p[0]).join('') !== value.trim()) throw invalid(field, `'${value}' is not a duration (30s, 5m, 1h, or milliseconds)`);
    ms = parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]!]!, 0);
  }
  if (!Number.isFinite(ms) || ms < 1) throw invalid(field, `'${value}' is not a positive duration`);
  return Math.round(ms);
}

function checkTimezone(tz: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw invalid('timezone', `'${tz}' is not an IANA time zone (e.g. Europe/Berlin)`);
  }
}

/** A stored schedule from what schedule-create was given: exactly one of cron, every, at; each checked. */
export async function makeSchedule(input: ScheduleInput, now = Date.now()): Promise<Schedule> {
  await cronReady();
  const given = (['cron', 'every', 'at'] as const).filter((k) => input[k] !== undefined);
  if (given.length !== 1) throw invalid(given.length ? given.join('/') : 'cron', given.length ? `give one of cron, every, at — not ${given.join(' and ')}` : 'one of cron, every, at is required');
  if (input.timezone !== undefined) checkTimezone(input.timezone);
  const name = input.name ?? `${input.ref.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 40)}-${now.toString(36)}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) throw invalid('name', `'${name}' is not a schedule name (letters, digits, . _ -)`);
  const s: Schedule = { name, ref: input.ref, overlap: input.overlap ?? 'skip', catchUp: input.catchUp ?? 'none', createdAt: new Date(now).toISOString() };
  if (input.args !== undefined) s.args = input.args;
  if (input.timezone !== undefined) s.timezone = input.timezone;
  if (input.cron !== undefined) {
    try {
      cron(input.cron, input.timezone).nextRun();
    } catch (err) {
      throw invalid('cron', `'${input.cron}' is not a cron expression: ${(err as Error).message}`);
    }
    s.cron = input.cron;
  } else if (input.every !== undefined) s.every = parseDuration(input.every);
  else {
    const t = Date.parse(input.at!);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(input.at!) || Number.isNaN(t)) throw invalid('at', `'${input.at}' is not an ISO 8601 time (2026-12-24T18:00:00Z)`);
    s.at = new Date(t).toISOString();
  }
  return s;
}

/** A declaration's identity: what it fires and when, not when it was stored or last fired. */
export function definitionOf(s: Schedule): string {
  const { lastFiredAt: _l, createdAt: _c, ...rest } = s;
  return JSON.stringify(Object.fromEntries(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1))));
}

/** The first time after `after` (ms) the schedule is due, or undefined when it never is again. */
export function nextFire(s: Schedule, after: number): number | undefined {
  if (s.cron !== undefined) {
    const next = cron(s.cron, s.timezone).nextRun(new Date(after));
    return next ? next.getTime() : undefined;
  }
  if (s.every !== undefined) {
    const anchor = Date.parse(s.createdAt);
    if (after < anchor) return anchor + s.every;
    return anchor + (Math.floor((after - anchor) / s.every) + 1) * s.every;
  }
  const t = Date.parse(s.at!);
  return t > after ? t : undefined;
}

/** The latest due time in (since, now] — a fire missed while nothing ran — or undefined. */
export function missedFire(s: Schedule, now: number): number | undefined {
  const since = Date.parse(s.lastFiredAt ?? s.createdAt);
  const first = nextFire(s, since);
  if (first === undefined || first > now) return undefined;
  if (s.every !== undefined) {
    const anchor = Date.parse(s.createdAt);
    return anchor + Math.floor((now - anchor) / s.every) * s.every;
  }
  if (s.cron !== undefined) {
    let latest = first;
    // Walk forward to the last one at or before now; bounded, a cron once a second over a long outage included.
    for (let i = 0, t = nextFire(s, latest); t !== undefined && t <= now && i < 100_000; i++, t = nextFire(s, t)) latest = t;
    return latest;
  }
  return first;
}

export function storeFile(workspace: string): string {
  return path.join(workspace, SCHEDULES_FILE);
}

export function readSchedules(workspace: string): Schedule[] {
  let text: string;
  try {
    text = fs.readFileSync(storeFile(workspace), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new AgentAppsError('E_CONFIG', `${storeFile(workspace)} is not JSON: ${(err as Error).message}`);
  }
  const list = (data as { schedules?: unknown })?.schedules;
  if (!Array.isArray(list)) throw new AgentAppsError('E_CONFIG', `${storeFile(workspace)} has no schedules list`);
  return list as Schedule[];
}

/** Written whole and renamed in: a reader sees the old store or the new one, never part of one. */
export function writeSchedules(workspace: string, schedules: readonly Schedule[]): void {
  const file = storeFile(workspace);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now().toString(36)}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ version: 1, schedules }, null, 2) + '\n');
  fs.renameSync(tmp, file);
}

/** Read, change, write back (one process at a time: see docs/serve.md on several serves). */
export function updateSchedules<T>(workspace: string, change: (list: Schedule[]) => T): T {
  const list = readSchedules(workspace);
  const out = change(list);
  writeSchedules(workspace, list);
  return out;
}

/** Where the schedules are kept: the workspace's file, or NATS (docs/serve.md, "Several serve processes"). */
export interface ScheduleStore {
  /** For messages: the file, or the bucket and server. */
  readonly where: string;
  /** Whether other processes share it (NATS). */
  readonly shared: boolean;
  list(): Promise<Schedule[]>;
  /** Read, change, write back — as one step against other writers on NATS. */
  update<T>(change: (list: Schedule[]) => T): Promise<T>;
  /** Calls `onChange` when the store changes (here or in another process); resolves with a stop. */
  watch(onChange: () => void): Promise<() => void>;
}

/** The workspace's .agent-apps/schedules.json. */
export function fileStore(workspace: string): ScheduleStore {
  const file = storeFile(workspace);
  return {
    where: file,
    shared: false,
    list: async () => readSchedules(workspace),
    update: async (change) => updateSchedules(workspace, change),
    async watch(onChange) {
      // The folder is watched, as the file is renamed in whole.
      fs.mkdirSync(path.dirname(file), { recursive: true });
      let debounce: ReturnType<typeof setTimeout> | undefined;
      const watcher = fs.watch(path.dirname(file), (_event, name) => {
        if (name !== null && name !== path.basename(file)) return;
        clearTimeout(debounce);
        debounce = setTimeout(onChange, 50);
      });
      watcher.unref();
      return () => {
        clearTimeout(debounce);
        watcher.close();
      };
    },
  };
}

/** The runtime's schedule store: NATS when the events backend is NATS, else the workspace's file. */
export async function scheduleStore(ctx: Context): Promise<ScheduleStore> {
  const config = await eventsConfig(ctx);
  if (config.backend === 'nats') {
    const nats = await natsFor(ctx, 'schedules');
    const { bucket, KvDocument } = await import('../nats/kv.ts');
    const doc = new KvDocument<{ version: number; schedules: Schedule[] }>(await bucket(nats, 'schedules'), 'schedules', () => ({ version: 1, schedules: [] }));
    const where = `the NATS key-value bucket ${nats.names.bucket('schedules')} (${config.url ?? 'nats://127.0.0.1:4222'})`;
    const listOf = (v: { schedules?: unknown }) => {
      if (!Array.isArray(v?.schedules)) throw new AgentAppsError('E_CONFIG', `${where} has no schedules list`);
      return v.schedules as Schedule[];
    };
    return {
      where,
      shared: true,
      list: async () => listOf(await doc.read()),
      update: (change) => doc.update((v) => change(listOf(v))),
      watch: (onChange) => doc.watch(onChange),
    };
  }
  const workspace = ctx.locals.config.workspace;
  if (!workspace) throw new AgentAppsError('E_CONFIG', 'schedules live in a workspace (.agent-apps/schedules.json): run this in one');
  return fileStore(workspace);
}
