// The code that runs inside the isolate before any agent code: it builds the globals the agent
// sees (`ctx`, `target`, `memory`, `console`, `setTimeout`) and the one function the host calls
// (`bridge`). It is written as a function so that tsc checks it, and shipped as its source text
// (`BOOTSTRAP_SOURCE`): it must not use anything from this module's scope.
//
// Rules it keeps (docs/sandbox.md, "What is blocked, and how"):
// - `send` (the host's ignored callback) and `bridge` live only in this closure; nothing reachable
//   from agent code holds them. Strict mode keeps V8's CallSite#getFunction from handing these
//   frames' functions to an `Error.prepareStackTrace` hook.
// - Only numbers and strings cross the boundary; every value travels as JSON text.
// - Intrinsics are captured before agent code can replace them (`JSON.stringify = …`).

/** The host's side of the channel: `(epoch, id, method, payload)`, fire-and-forget. */
export type Send = (epoch: number, id: number, method: string, payload: string) => void;

/** The isolate's side: `bridge('exec', epoch, argsJson, middleware, fn)`, `bridge('deliver', id, ok, json)`. */
export type Bridge = (op: string, a: unknown, b: unknown, c: unknown, d: unknown) => void;

export interface BootConfig {
  maxPendingCalls: number;
  maxLogLines: number;
  maxLogChars: number;
  memory: Record<string, unknown>;
}

type Fn = (...args: unknown[]) => unknown;
interface PendingCall { timer: false; resolve: Fn; reject: Fn }
interface PendingTimer { timer: true; fn: Fn; args: unknown[] }

export function bootstrap(send: Send, configJson: string): Bridge {
  'use strict';
  const g = globalThis as Record<string, unknown>;
  const { parse, stringify } = JSON;
  const { freeze, defineProperty, create, keys, getPrototypeOf, getOwnPropertyDescriptor, getOwnPropertyNames, is, assign } = Object;
  const reflectApply = Reflect.apply;
  const PromiseCtor = Promise;
  const promiseThen = Promise.prototype.then;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const isArray = Array.isArray;
  const StringCtor = String;
  const regexpExec = RegExp.prototype.exec;
  const stringSlice = String.prototype.slice;
  const symbolToString = Symbol.prototype.toString;
  const dateToISOString = Date.prototype.toISOString;
  const regexpToString = RegExp.prototype.toString;
  const functionToString = Function.prototype.toString;
  const mapEntries = Map.prototype.entries;
  const setValues = Set.prototype.values;
  const mapSize = getOwnPropertyDescriptor(Map.prototype, 'size')!.get!;
  const setSize = getOwnPropertyDescriptor(Set.prototype, 'size')!.get!;
  const iteratorNext = getPrototypeOf(new Map().entries()).next as Fn;
  const setIteratorNext = getPrototypeOf(new Set().values()).next as Fn;
  const ObjectProto = Object.prototype;
  const MapProto = Map.prototype;
  const SetProto = Set.prototype;
  const WeakMapProto = WeakMap.prototype;
  const WeakSetProto = WeakSet.prototype;
  const PromiseProto = Promise.prototype;
  const DateProto = Date.prototype;
  const RegExpProto = RegExp.prototype;
  const ErrorProto = Error.prototype;

  const config = parse(configJson) as BootConfig;
  const maxPending = config.maxPendingCalls;
  const maxLogLines = config.maxLogLines;
  const maxLogChars = config.maxLogChars;

  // Per-execution state. `epoch` tags every message so the host can drop stale ones.
  let epoch = 0;
  let completed = true;
  let middleware = false;
  let sent = 0;
  let nextId = 1;
  let pending: Record<number, PendingCall | PendingTimer> = create(null);
  let pendingCount = 0;
  let logLines = 0;
  let logChars = 0;
  let capReported = false;
  let currentCtx: unknown = undefined;
  let currentTarget: unknown = undefined;

  function notify(method: string, payload: string): void {
    sent++;
    send(epoch, 0, method, payload);
  }

  function rejected(error: unknown): Promise<never> {
    return new PromiseCtor((_resolve, reject) => reject(error));
  }

  function sandboxError(message: string): Error {
    const error = new ErrorCtor(message);
    defineProperty(error, 'code', { value: 'E_SANDBOX', writable: true, enumerable: true, configurable: true });
    return error;
  }

  function reserve(): boolean {
    if (pendingCount < maxPending) return true;
    if (!capReported) {
      capReported = true;
      notify('$cap', '');
    }
    return false;
  }

  function call(method: string, args: unknown[]): Promise<unknown> {
    if (completed) return rejected(sandboxError(`ctx.manager.${method}: this execution has already finished`));
    if (!reserve()) return rejected(sandboxError(`too many pending host calls (limit ${maxPending})`));
    let payload: string;
    try {
      while (args.length > 0 && args[args.length - 1] === undefined) args.length--;
      payload = stringify(args);
    } catch (error) {
      return rejected(new TypeErrorCtor(`ctx.manager.${method}: arguments must be JSON data (${describe(error).message})`));
    }
    const id = nextId++;
    let resolve: Fn = () => undefined;
    let reject: Fn = () => undefined;
    const promise = new PromiseCtor<unknown>((res, rej) => {
      resolve = res as Fn;
      reject = rej;
    });
    pending[id] = { timer: false, resolve, reject };
    pendingCount++;
    sent++;
    send(epoch, id, method, payload);
    return promise;
  }

  // `fail(error)`: an Error travels as its message and code, anything else as itself.
  function errorValue(value: unknown): unknown {
    if (value !== null && typeof value === 'object' && getPrototypeOf(value) !== ObjectProto && !isArray(value)) {
      const d = describe(value);
      return d.code === 'E_SKILL' ? { message: d.message } : { message: d.message, code: d.code };
    }
    return value;
  }

  const manager = freeze({
    invoke: (ref: unknown, args?: unknown, options?: unknown) => call('invoke', [ref, args, options]),
    finish: (value?: unknown) => call('finish', [value]),
    fail: (error?: unknown) => call('fail', [errorValue(error)]),
    abort: (reason?: unknown) => call('abort', [reason]),
    get: (path: unknown) => call('get', [path]),
    set: (path: unknown, value?: unknown) => call('set', [path, value]),
    log: (event: unknown) => call('log', [event]),
  });
  const targetManager = freeze({
    next: () => (middleware ? call('next', []) : rejected(sandboxError('target.manager.next() is only available in middleware mode'))),
  });

  // ---- console: formatted like Node's, captured line by line --------------------------------

  function quote(s: string): string {
    return "'" + reflectApply(stringSlice, stringify(s), [1, -1]).replace(/'/g, "\\'").replace(/\\"/g, '"') + "'";
  }

  function keyText(key: string): string {
    return reflectApply(regexpExec, /^[A-Za-z_$][\w$]*$/, [key]) ? key : quote(key);
  }

  function inspect(value: unknown, depth: number, seen: unknown[]): string {
    switch (typeof value) {
      case 'string': return depth === 0 ? value : quote(value);
      case 'number': return is(value, -0) ? '-0' : StringCtor(value);
      case 'bigint': return StringCtor(value) + 'n';
      case 'symbol': return reflectApply(symbolToString, value, []) as string;
      case 'undefined': return 'undefined';
      case 'boolean': return value ? 'true' : 'false';
      case 'function': {
        const name = (value as { name?: unknown }).name;
        const source = reflectApply(functionToString, value, []) as string;
        const kind = reflectApply(regexpExec, /^class\b/, [source]) ? 'class' : 'Function';
        return typeof name === 'string' && name ? `[${kind}: ${name}]` : `[${kind} (anonymous)]`;
      }
    }
    if (value === null) return 'null';
    const object = value as Record<string, unknown>;
    for (let i = 0; i < seen.length; i++) if (seen[i] === object) return '[Circular]';
    const proto = getPrototypeOf(object);
    if (proto === DateProto) {
      try { return reflectApply(dateToISOString, object, []) as string; } catch { return 'Invalid Date'; }
    }
    if (proto === RegExpProto) return reflectApply(regexpToString, object, []) as string;
    if (isErrorLike(object, proto)) {
      const stack = object.stack;
      return typeof stack === 'string' ? stack : `${StringCtor(object.name)}: ${StringCtor(object.message)}`;
    }
    if (proto === PromiseProto) return 'Promise {}';
    if (depth > 2) return isArray(object) ? '[Array]' : '[Object]';
    seen[seen.length] = object;
    const parts: string[] = [];
    let open = '{';
    let close = '}';
    let prefix = '';
    if (proto === MapProto) {
      prefix = `Map(${reflectApply(mapSize, object, []) as number}) `;
      const it = reflectApply(mapEntries, object, []);
      for (let step = reflectApply(iteratorNext, it, []) as IteratorResult<[unknown, unknown]>; !step.done; step = reflectApply(iteratorNext, it, []) as IteratorResult<[unknown, unknown]>) {
        if (parts.length >= 100) { parts[parts.length] = '...'; break; }
        parts[parts.length] = `${inspect(step.value[0], depth + 1, seen)} => ${inspect(step.value[1], depth + 1, seen)}`;
      }
    } else if (proto === SetProto) {
      prefix = `Set(${reflectApply(setSize, object, []) as number}) `;
      const it = reflectApply(setValues, object, []);
      for (let step = reflectApply(setIteratorNext, it, []) as IteratorResult<unknown>; !step.done; step = reflectApply(setIteratorNext, it, []) as IteratorResult<unknown>) {
        if (parts.length >= 100) { parts[parts.length] = '...'; break; }
        parts[parts.length] = inspect(step.value, depth + 1, seen);
      }
    } else {
      if (isArray(object)) {
        open = '[';
        close = ']';
        const length = (object as unknown[]).length;
        for (let i = 0; i < length && i < 100; i++) parts[parts.length] = inspect(object[i], depth + 1, seen);
        if (length > 100) parts[parts.length] = `... ${length - 100} more items`;
      } else if (proto === null) {
        prefix = '[Object: null prototype] ';
      } else if (proto !== ObjectProto) {
        const ctor = getOwnPropertyDescriptor(proto, 'constructor');
        const name = ctor && typeof ctor.value === 'function' ? (ctor.value as { name?: unknown }).name : undefined;
        if (typeof name === 'string' && name) prefix = name + ' ';
      }
      const names = getOwnPropertyNames(object);
      for (let i = 0; i < names.length; i++) {
        const key = names[i]!;
        if (isArray(object) && (key === 'length' || reflectApply(regexpExec, /^\d+$/, [key]))) continue;
        const desc = getOwnPropertyDescriptor(object, key);
        if (!desc || !desc.enumerable) continue;
        if (parts.length >= 100) { parts[parts.length] = '...'; break; }
        const shown = desc.get || desc.set ? (desc.get && desc.set ? '[Getter/Setter]' : desc.get ? '[Getter]' : '[Setter]') : inspect(desc.value, depth + 1, seen);
        parts[parts.length] = `${keyText(key)}: ${shown}`;
      }
    }
    seen.length--;
    if (parts.length === 0) return prefix + open + close;
    return `${prefix}${open} ${parts.join(', ')} ${close}`;
  }

  function isErrorLike(object: unknown, proto: unknown): boolean {
    for (let p = proto; p !== null && p !== undefined; p = getPrototypeOf(p)) if (p === ErrorProto) return true;
    return false;
  }

  function format(args: unknown[]): string {
    let out = '';
    let start = 0;
    const first = args[0];
    if (typeof first === 'string' && args.length > 1) {
      let next = 1;
      start = 1;
      out = first.replace(/%[sdifjoOc%]/g, (spec) => {
        if (spec === '%%') return '%';
        if (next >= args.length) return spec;
        const arg = args[next++];
        start = next;
        switch (spec) {
          case '%s': return typeof arg === 'string' ? arg : inspect(arg, 1, []);
          case '%d': case '%i': return typeof arg === 'bigint' ? StringCtor(arg) + 'n' : StringCtor(spec === '%i' ? Math.trunc(Number(arg)) : Number(arg));
          case '%f': return StringCtor(Number(arg));
          case '%j': try { return stringify(arg) ?? 'undefined'; } catch { return '[Circular]'; }
          case '%c': return '';
          default: return inspect(arg, 1, []);
        }
      });
    }
    for (let i = start; i < args.length; i++) out += (i === 0 ? '' : ' ') + inspect(args[i], 0, []);
    return out;
  }

  function log(...args: unknown[]): void {
    if (completed || logLines > maxLogLines) return;
    let line: string;
    try {
      line = format(args);
    } catch (error) {
      line = `[console: unprintable value: ${describe(error).message}]`;
    }
    logLines++;
    if (logLines > maxLogLines || logChars + line.length > maxLogChars) {
      logLines = maxLogLines + 1;
      notify('$log', `[console output truncated: limit ${maxLogLines} lines / ${maxLogChars} characters per execution]`);
      return;
    }
    logChars += line.length;
    notify('$log', line);
  }

  // ---- timers: host-backed, cancelled when the execution ends -------------------------------

  function setTimeoutImpl(fn: unknown, delay?: unknown, ...args: unknown[]): number {
    if (typeof fn !== 'function') throw new TypeErrorCtor('setTimeout: the callback must be a function');
    if (completed) return 0;
    if (!reserve()) throw sandboxError(`too many pending host calls and timers (limit ${maxPending})`);
    const ms = typeof delay === 'number' && delay > 0 ? delay : 0;
    const id = nextId++;
    pending[id] = { timer: true, fn: fn as Fn, args };
    pendingCount++;
    sent++;
    send(epoch, id, '$timer', StringCtor(ms));
    return id;
  }

  function clearTimeoutImpl(id: unknown): void {
    if (typeof id !== 'number') return;
    const entry = pending[id];
    if (!entry || !entry.timer) return;
    delete pending[id];
    pendingCount--;
    if (!completed) {
      sent++;
      send(epoch, id, '$clear', '');
    }
  }

  // ---- completion --------------------------------------------------------------------------

  interface Described { code: string; message: string; line?: number; column?: number }

  function describe(error: unknown): Described {
    const out: Described = { code: 'E_SKILL', message: '' };
    try {
      if (error !== null && (typeof error === 'object' || typeof error === 'function')) {
        const e = error as Record<string, unknown>;
        const message = e.message;
        out.message = typeof message === 'string' ? message : inspect(e, 1, []);
        const code = e.code;
        if (typeof code === 'string' && code) out.code = code;
        const name = e.name;
        if (typeof name === 'string' && name && name !== 'Error' && typeof message === 'string') out.message = `${name}: ${out.message}`;
        const stack = e.stack;
        if (typeof stack === 'string') {
          const at = reflectApply(regexpExec, /agent\.js:(\d+):(\d+)/, [stack]) as RegExpExecArray | null;
          if (at) {
            out.line = Number(at[1]);
            out.column = Number(at[2]);
          }
        }
      } else {
        out.message = typeof error === 'string' ? error : inspect(error, 1, []);
      }
    } catch {
      out.message = 'a value was thrown that cannot be described';
    }
    if (out.message.length > 10000) out.message = reflectApply(stringSlice, out.message, [0, 10000]) + '…';
    return out;
  }

  // Best effort: top-level keys whose values are JSON data; Maps, Sets, functions … are skipped.
  function snapshotMemory(): string {
    let out = '{';
    try {
      const memory = g.memory;
      if (memory === null || typeof memory !== 'object') return '{}';
      const names = keys(memory);
      for (let i = 0; i < names.length; i++) {
        const key = names[i]!;
        try {
          const value = (memory as Record<string, unknown>)[key];
          if (value !== null && typeof value === 'object') {
            const proto = getPrototypeOf(value);
            if (proto === MapProto || proto === SetProto || proto === WeakMapProto || proto === WeakSetProto || proto === PromiseProto) continue;
          }
          const json = stringify(value);
          if (typeof json !== 'string') continue;
          out += (out.length > 1 ? ',' : '') + stringify(key) + ':' + json;
        } catch {
          // not JSON (a cycle, a BigInt …): skipped
        }
      }
    } catch {
      return '{}';
    }
    return out + '}';
  }

  function complete(runEpoch: number, ok: boolean, value: unknown): void {
    if (runEpoch !== epoch || completed) return;
    let valueJson = 'null';
    if (ok) {
      try {
        const json = stringify(value === undefined ? null : value);
        if (typeof json === 'string') valueJson = json;
      } catch (error) {
        ok = false;
        value = new TypeErrorCtor(`the code's return value is not JSON data (${describe(error).message})`);
      }
    }
    const memory = snapshotMemory();
    completed = true;
    const head = `{"calls":${sent},"memory":${memory},`;
    send(runEpoch, 0, '$done', ok ? `${head}"ok":true,"value":${valueJson}}` : `${head}"ok":false,"error":${stringify(describe(value))}}`);
  }

  function deepFreeze(value: unknown): unknown {
    if (value !== null && typeof value === 'object') {
      const names = keys(value);
      for (let i = 0; i < names.length; i++) deepFreeze((value as Record<string, unknown>)[names[i]!]);
      freeze(value);
    }
    return value;
  }

  function exec(runEpoch: number, argsJson: string, isMiddleware: boolean, fn: unknown): void {
    epoch = runEpoch;
    completed = false;
    middleware = isMiddleware;
    sent = 0;
    pending = create(null);
    pendingCount = 0;
    logLines = 0;
    logChars = 0;
    capReported = false;
    currentCtx = freeze({ args: deepFreeze(parse(argsJson)), manager });
    currentTarget = isMiddleware ? freeze({ manager: targetManager }) : currentCtx;
    if (typeof fn !== 'function') return complete(runEpoch, false, new TypeErrorCtor('the code did not compile to a function'));
    let result: unknown;
    try {
      result = (fn as Fn)();
    } catch (error) {
      return complete(runEpoch, false, error);
    }
    const settled = new PromiseCtor<unknown>((resolve) => resolve(result));
    reflectApply(promiseThen, settled, [
      (value: unknown) => complete(runEpoch, true, value),
      (error: unknown) => complete(runEpoch, false, error),
    ]);
  }

  function deliver(id: unknown, ok: unknown, json: unknown): void {
    if (typeof id !== 'number' || typeof json !== 'string') return;
    const entry = pending[id];
    if (!entry) return;
    delete pending[id];
    pendingCount--;
    if (entry.timer) {
      if (completed) return;
      try {
        reflectApply(entry.fn, undefined, entry.args);
      } catch (error) {
        // An exception escaping a timer callback ends the execution, as it would end a Node process.
        complete(epoch, false, error);
      }
      return;
    }
    const value: unknown = json === '' ? undefined : parse(json);
    if (ok === true) {
      entry.resolve(value);
    } else {
      const data = (value !== null && typeof value === 'object' ? value : {}) as { message?: unknown; code?: unknown };
      const error = new ErrorCtor(typeof data.message === 'string' ? data.message : 'the host call failed');
      if (typeof data.code === 'string') defineProperty(error, 'code', { value: data.code, writable: true, enumerable: true, configurable: true });
      entry.reject(error);
    }
  }

  // ---- globals -----------------------------------------------------------------------------

  // Not ECMAScript, and a large attack surface (a second compiler) that agent code has no use for.
  delete g.WebAssembly;
  defineProperty(g, 'ctx', { get: () => currentCtx, enumerable: true, configurable: false });
  defineProperty(g, 'target', { get: () => currentTarget, enumerable: true, configurable: false });
  defineProperty(g, 'memory', { value: assign({}, config.memory), writable: true, enumerable: true, configurable: false });
  const console = freeze({ log, info: log, warn: log, error: log, debug: log, trace: log });
  defineProperty(g, 'console', { value: console, writable: true, enumerable: false, configurable: true });
  defineProperty(g, 'setTimeout', { value: setTimeoutImpl, writable: true, enumerable: false, configurable: true });
  defineProperty(g, 'clearTimeout', { value: clearTimeoutImpl, writable: true, enumerable: false, configurable: true });

  return function bridge(op: string, a: unknown, b: unknown, c: unknown, d: unknown): void {
    if (op === 'deliver') return deliver(a, b, c);
    if (op === 'exec') return exec(a as number, b as string, c === true, d);
  };
}

/** Run by `context.evalClosure` with `$0` = the host's `send` callback and `$1` = config JSON. */
export const BOOTSTRAP_SOURCE = `'use strict';\nreturn (${bootstrap.toString()})($0, $1);`;
