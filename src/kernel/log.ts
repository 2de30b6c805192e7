// Logging (docs/events.md, docs/concepts.md): one ring buffer of 10,000 events on globals.internals, levels
// trace < debug < info < warn < error, per-run settings (scoped by rootContextId) over global
// ones, and reporters. Secrets are redacted before any reporter sees an event.
// Limits (docs/security.md): an event's `text` is cut at 64 KiB (with a note saying how much went), and
// the ring is bounded in bytes (64 MiB) as well as in count, oldest dropped. Each event is
// measured once, as it enters the ring (`approxBytes`); the ring keeps the sizes beside it.
import { ConfigurationError } from '../core/errors.ts';
import { redact } from '../core/redact.ts';
import type { ConfigureOptions, LogEvent, LogLevel, LogSettings, Reporter, TailOptions } from '../core/types.ts';

export const LEVELS: Record<LogLevel, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4 };
/** docs/security.md: a log event's text is cut at this many characters. */
export const MAX_LOG_TEXT = 64 * 1024;
/** docs/security.md: the ring retains at most this many bytes of events. */
export const DEFAULT_RING_BYTES = 64 * 1024 * 1024;

interface Settings {
  level: LogLevel;
  scope: string[] | null;
  reporters: Set<string>;
}

export class Logger {
  readonly capacity: number;
  readonly maxBytes: number;
  private ring: (LogEvent | undefined)[];
  /** The measured size of each slot's event. */
  private sizes: Float64Array;
  private bytes = 0;
  private head = 0;
  private size = 0;
  private global: Settings = { level: 'info', scope: null, reporters: new Set() };
  private runs = new Map<string, Settings>();
  private reporters = new Map<string, Reporter>();

  constructor(capacity = 10_000, maxBytes = DEFAULT_RING_BYTES) {
    this.capacity = capacity;
    this.maxBytes = maxBytes;
    this.ring = new Array(capacity);
    this.sizes = new Float64Array(capacity);
  }

  /** What the ring retains: events and their measured bytes. */
  get retained(): { events: number; bytes: number } {
    return { events: this.size, bytes: this.bytes };
  }

  addReporter(reporter: Reporter, active = true): void {
    this.reporters.set(reporter.name, reporter);
    if (active) this.global.reporters.add(reporter.name);
  }

  reporter(name: string): Reporter | undefined {
    return this.reporters.get(name);
  }

  private settings(rootContextId: string | undefined): Settings {
    return (rootContextId && this.runs.get(rootContextId)) || this.global;
  }

  /** A run's reporters: the global ones (whenever they were activated) plus those activated for the run. */
  private active(s: Settings): Iterable<string> {
    if (s === this.global || s.reporters.size === 0) return this.global.reporters;
    return new Set([...this.global.reporters, ...s.reporters]);
  }

  emit(event: LogEvent): void {
    const s = this.settings(event.rootContextId);
    // `record: true` marks the run's own record (run-start, run-end, the session's agent-run,
    // docs/ci.md): kept whatever the level and scope, so `agent-apps runs` never misreads a run.
    if (event.record !== true) {
      if (LEVELS[event.level] < LEVELS[s.level]) return;
      if (s.scope && !s.scope.includes(event.tag)) return;
    }
    // The redaction every output shares (docs/security.md, "Secrets"): by key and inside strings.
    const clean = redact(typeof event.text === 'string' && event.text.length > MAX_LOG_TEXT ? { ...event, text: cutText(event.text) } : event) as LogEvent;
    this.retain(clean);
    for (const name of this.active(s)) {
      const r = this.reporters.get(name);
      if (!r) continue;
      try {
        r.report(clean);
      } catch {
        // A reporter failing must never break the run that logged.
      }
    }
  }

  private retain(event: LogEvent): void {
    const cap = this.capacity;
    if (cap <= 0) return;
    const bytes = approxBytes(event);
    // An event alone over the bound is reported but not retained (it would push out all the rest).
    if (bytes > this.maxBytes) return;
    const slot = this.head;
    if (this.size === cap) this.bytes -= this.sizes[slot]!; // overwriting the oldest
    else this.size++;
    this.ring[slot] = event;
    this.sizes[slot] = bytes;
    this.bytes += bytes;
    this.head = (slot + 1) % cap;
    // Over the byte bound: drop the oldest until it fits.
    while (this.bytes > this.maxBytes && this.size > 0) {
      const oldest = (this.head - this.size + cap) % cap;
      this.bytes -= this.sizes[oldest]!;
      this.sizes[oldest] = 0;
      this.ring[oldest] = undefined;
      this.size--;
    }
  }

  tail(rootContextId: string | undefined, opts: TailOptions = {}): LogEvent[] {
    const out: LogEvent[] = [];
    const types = opts.type === undefined ? null : Array.isArray(opts.type) ? opts.type : [opts.type];
    const minLevel = opts.level ? LEVELS[opts.level] : -1;
    for (let i = 0; i < this.size; i++) {
      const e = this.ring[(this.head - this.size + i + this.capacity) % this.capacity]!;
      if (rootContextId && e.rootContextId !== rootContextId) continue;
      if (opts.tag && e.tag !== opts.tag) continue;
      if (types && !types.includes(e.type)) continue;
      if (LEVELS[e.level] < minLevel) continue;
      out.push(e);
    }
    return opts.last !== undefined ? out.slice(Math.max(0, out.length - opts.last)) : out;
  }

  configure(rootContextId: string | undefined, opts?: ConfigureOptions): LogSettings {
    let s: Settings;
    // No args (or no `global`) reads or changes this run's settings: its own, or else the global ones.
    if (opts?.global || !rootContextId) s = this.global;
    else {
      s = this.runs.get(rootContextId) ?? { level: this.global.level, scope: this.global.scope, reporters: new Set<string>() };
      if (opts && (opts.level !== undefined || opts.scope !== undefined || opts.reporter !== undefined)) this.runs.set(rootContextId, s);
    }
    if (opts?.level) {
      if (!Object.hasOwn(LEVELS, opts.level)) throw new ConfigurationError(`unknown log level '${opts.level}' — use trace, debug, info, warn or error`);
      s.level = opts.level;
    }
    if (opts?.scope !== undefined) s.scope = opts.scope;
    if (opts?.reporter !== undefined) {
      if (typeof opts.reporter === 'string') {
        if (!this.reporters.has(opts.reporter)) throw new ConfigurationError(`unknown reporter '${opts.reporter}'`);
        s.reporters.add(opts.reporter);
      } else {
        this.reporters.set(opts.reporter.name, opts.reporter);
        s.reporters.add(opts.reporter.name);
      }
    }
    return { level: s.level, scope: s.scope, reporters: [...this.active(s)] };
  }

  /** Drops a finished run's settings so long-lived runtimes do not grow. */
  forgetRun(rootContextId: string): void {
    this.runs.delete(rootContextId);
  }

  /** Empties the ring (runtime.close() releases what it retained). */
  clear(): void {
    this.ring.fill(undefined);
    this.sizes.fill(0);
    this.head = 0;
    this.size = 0;
    this.bytes = 0;
  }

  async close(): Promise<void> {
    for (const r of this.reporters.values()) await r.close?.();
  }
}

/** `text` cut at MAX_LOG_TEXT characters (never inside a surrogate pair), with a note of what went. */
export function cutText(text: string): string {
  let end = MAX_LOG_TEXT;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}… [cut: ${text.length - end} more characters]`;
}

/**
 * Roughly how many bytes `value` retains, by one walk over it: strings by length, other
 * primitives 8, keys by length, binary data by byteLength; shared objects and cycles counted
 * once. Cheap for the small events logging is made of, linear in what a large one holds.
 */
export function approxBytes(value: unknown): number {
  let total = 0;
  let seen: Set<object> | undefined;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      total += v.length + 2;
      continue;
    }
    if (v === null || typeof v !== 'object') {
      total += 8;
      continue;
    }
    if ((seen ??= new Set()).has(v)) continue;
    seen.add(v);
    total += 16;
    if (ArrayBuffer.isView(v)) total += v.byteLength;
    else if (v instanceof ArrayBuffer) total += v.byteLength;
    else if (Array.isArray(v)) {
      for (const item of v) {
        if (typeof item === 'string') total += item.length + 2;
        else if (item === null || typeof item !== 'object') total += 8;
        else stack.push(item);
      }
    } else if (v instanceof Map) {
      for (const [k, item] of v) stack.push(k, item);
    } else if (v instanceof Set) {
      for (const item of v) stack.push(item);
    } else {
      for (const k of Object.keys(v)) {
        total += k.length + 4;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return total;
}
