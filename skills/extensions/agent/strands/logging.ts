// The Strands SDK logs through one module-level logger that defaults to the console. A CLI
// prints only its result on stdout, so we replace it once, and route whatever the SDK logs to
// the `onLog` of the agent loop that is running (AsyncLocalStorage keeps concurrent loops apart).

import { AsyncLocalStorage } from 'node:async_hooks';
import { configureLogging } from './sdk.ts';

export type StrandsLogLevel = 'debug' | 'info' | 'warn' | 'error';
export type StrandsLogSink = (level: StrandsLogLevel, message: string) => void;

const sinks = new AsyncLocalStorage<StrandsLogSink>();
let installed = false;

/** Replaces the SDK's console logger (idempotent). */
export function silenceStrands(): void {
  if (installed) return;
  installed = true;
  const emit = (level: StrandsLogLevel) => (...args: unknown[]) => {
    const sink = sinks.getStore();
    if (!sink) return;
    try {
      sink(level, args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : safeJson(a))).join(' '));
    } catch {
      // a logging sink never breaks the loop
    }
  };
  configureLogging({ debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') });
}

/** Runs `fn` with SDK log lines going to `sink` (or nowhere). */
export function withStrandsLog<T>(sink: StrandsLogSink | undefined, fn: () => T): T {
  silenceStrands();
  return sink ? sinks.run(sink, fn) : fn();
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
