/**
 * The journal of a request a worker runs (docs/runs.md, "Workers"; docs/scale.md): the run
 * journal's lines (src/agent/journal.ts — model turns, host calls with their args and results),
 * kept as they happen in the namespace's bucket AGENT_APPS_<NS>_JOURNALS, where every worker can
 * read them — so a request redelivered after its worker died resumes from them.
 *
 * Keys are the request's own: `<id>.<delivery>.<n>`, line n of the delivery that wrote it, line 0
 * the delivery's header (`{ type: 'journal-start', request, skill, args }`, the args as a digest).
 * A request id is letters, digits, `_` and `-` (work-queue.ts), so `<id>.>` is that request's lines
 * and no other's. Each delivery adds only what it did itself (lines played back from the journal
 * are there already), so the journal is every delivery's lines in the order they were written.
 *
 * What is read back is data, never code: every line is checked for the shape the journal writes
 * before it is played back. A header that names another request, skill or args is a journal that
 * is not this request's (an id used again): ignored and deleted, the request runs from scratch.
 * Anything else that is not a journal line — the journal cannot say what ran — is E_RESUME.
 *
 * Lines are sent as they come, without waiting for one another (a line's key says where it goes);
 * `flush()` resolves once every line written so far is stored — the worker's RunJournal waits for
 * it before a call's tool runs.
 */
import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { AgentAppsError } from '../../core/errors.ts';
import { isPlainObject } from '../../core/path.ts';
import { redact } from '../../core/redact.ts';
import type { JsonObject, LogInput } from '../../core/types.ts';
import { JOURNAL_TAG, readJournal, type Journal } from '../../agent/journal.ts';
import { errorText, isNotFound, retrying, type Nats } from '../../nats/nats.ts';

/** What the worker runs: the request, as far as its journal is concerned. */
export interface JournaledRequest {
  id: string;
  skill: string;
  args: JsonObject;
}

/** A journal read back: its lines, one not this request's (`foreign`), or one that is not a journal (`malformed`). */
export type ReadBack = { journal: Journal; deliveries: number } | { foreign: string } | { malformed: string } | undefined;

/** The fields a journal line keeps in the store (the run file's tag, level and text are the log's). */
const FIELDS = ['type', 'agent', 'skill', 'turn', 'text', 'invoke', 'usage', 'call', 'index', 'tool', 'args', 'result', 'error', 'denied', 'rerun'] as const;
/** A stored line larger than this is not one a worker wrote (NATS' default max payload is 1 MiB). */
const MAX_LINE_BYTES = 8 * 1024 * 1024;
const AGENT = /^\d+(\/\d+\.\d+\/\d+)*$/;
const CALL = /^\d+\.\d+$/;

export class RequestJournal {
  readonly #nats: Nats;
  readonly #kv: KV;
  readonly #request: JournaledRequest;
  readonly #delivery: number;
  readonly #worker: string;
  #n = 0;
  /** What the lines wait for: the first delivery's clean-up of what an earlier request of its id left. */
  #ready: Promise<void> = Promise.resolve();
  /** Writes not yet acknowledged. */
  readonly #pending = new Set<Promise<void>>();
  #error: unknown;

  constructor(nats: Nats, kv: KV, request: JournaledRequest, delivery: number, worker: string) {
    this.#nats = nats;
    this.#kv = kv;
    this.#request = request;
    this.#delivery = delivery;
    this.#worker = worker;
  }

  get bucket(): string {
    return this.#nats.names.bucket('journals');
  }

  /**
   * One line of the run journal (what RunJournal writes). A line played back from the journal is
   * stored already and is not written again. The first line of a delivery writes its header — and
   * on the first delivery drops whatever an earlier request of the same id left behind.
   */
  write(line: LogInput): void {
    if (line.tag !== JOURNAL_TAG || line.replayed === true) return;
    const kept: Record<string, unknown> = {};
    for (const k of FIELDS) if (line[k] !== undefined) kept[k] = line[k];
    // A call line's text is what `tail` shows of it; only a model turn's is the journal's (the model's).
    if (line.type !== 'model-turn') delete kept.text;
    if (this.#n === 0) {
      if (this.#delivery === 1) this.#ready = this.#purge();
      this.#put(0, { type: 'journal-start', request: this.#request.id, skill: this.#request.skill, args: argsDigest(this.#request.args), worker: this.#worker });
    }
    // Redacted as a run file's lines are: the journal compares a call's args as they were kept.
    this.#put(++this.#n, redact(kept));
  }

  /** Resolves once every line written so far is stored; rejects (E_EVENTS) when one could not be. */
  async flush(): Promise<void> {
    await this.#settled();
    if (this.#error !== undefined) {
      throw new AgentAppsError('E_EVENTS', `worker: cannot keep the journal of request ${this.#request.id} in the NATS key-value bucket ${this.bucket} (${errorText(this.#error)}): the call was not made`, { cause: this.#error });
    }
  }

  /**
   * The journal the deliveries before this one left, checked line by line — in the order of their
   * keys (delivery, then line), which is the order they were written in.
   */
  async read(): Promise<ReadBack> {
    const id = this.#request.id;
    const iter = await retrying(() => this.#kv.history({ key: `${id}.>` }));
    const entries: { key: string; delivery: number; n: number; text: string | undefined }[] = [];
    let problem: ReadBack;
    for await (const e of iter) {
      if (problem || e.operation !== 'PUT') continue; // drain the iterator
      const m = /^([A-Za-z0-9_-]+)\.(\d{1,6})\.(\d{1,9})$/.exec(e.key);
      if (!m || m[1] !== id) problem = { malformed: `key ${JSON.stringify(e.key.slice(0, 160))} is not one of its lines` };
      else entries.push({ key: e.key, delivery: Number(m[2]), n: Number(m[3]), text: e.length > MAX_LINE_BYTES ? undefined : e.string() });
    }
    if (problem) return problem;
    entries.sort((a, b) => a.delivery - b.delivery || a.n - b.n);
    const events: Record<string, unknown>[] = [];
    const headers = new Set<number>();
    for (const { key, delivery, n, text } of entries) {
      let value: unknown;
      try {
        if (text === undefined) throw new Error('too large');
        value = JSON.parse(text);
      } catch {
        return { malformed: `${key} is not JSON` };
      }
      if (n === 0) {
        const why = foreignHeader(value, this.#request);
        if (why) return { foreign: `${key} ${why}` };
        headers.add(delivery);
        continue;
      }
      if (!headers.has(delivery)) return { malformed: `${key} has no header line before it` };
      const bad = badLine(value);
      if (bad) return { malformed: `${key}: ${bad}` };
      events.push({ ...(value as object), tag: JOURNAL_TAG });
    }
    if (!headers.size) return undefined;
    return { journal: readJournal(events), deliveries: headers.size };
  }

  /**
   * Deletes the request's journal (its result is published), once every write before it is done —
   * nothing to do for a first delivery that journaled nothing (a request that ran no agent).
   */
  async drop(): Promise<void> {
    if (this.#n === 0 && this.#delivery === 1) return;
    await this.#settled();
    await this.#purge();
  }

  #purge(): Promise<void> {
    const bucket = this.bucket;
    return retrying(() => this.#nats.jsm.streams.purge(`KV_${bucket}`, { filter: `$KV.${bucket}.${this.#request.id}.>` })).then(
      () => undefined,
      (err: unknown) => {
        if (!isNotFound(err)) throw err;
      },
    );
  }

  /**
   * Stores line `n`. Lines are sent at once, not one after the other: their keys, not the order
   * the server stores them in, say where each goes (read() sorts by key).
   */
  #put(n: number, value: unknown): void {
    const key = `${this.#request.id}.${this.#delivery}.${n}`;
    const body = JSON.stringify(value) ?? 'null';
    const write: Promise<void> = this.#ready
      .then(() => (this.#error === undefined ? retrying(() => this.#kv.put(key, body), 10_000) : undefined))
      .then(
        () => undefined,
        (err: unknown) => {
          this.#error ??= err;
        },
      )
      .finally(() => this.#pending.delete(write));
    this.#pending.add(write);
  }

  async #settled(): Promise<void> {
    while (this.#pending.size) await Promise.all(this.#pending);
    await this.#ready.catch((err: unknown) => {
      this.#error ??= err;
    });
  }
}

/** The args as a journal header names them: a digest, so the header holds no argument value. */
function argsDigest(args: JsonObject): string {
  return createHash('sha256').update(JSON.stringify(args) ?? '').digest('hex').slice(0, 32);
}

/** Why a header is not this request's journal's, or undefined when it is. */
function foreignHeader(value: unknown, request: JournaledRequest): string | undefined {
  if (!isPlainObject(value) || value.type !== 'journal-start') return 'is not a journal header';
  if (value.request !== request.id) return 'is the journal of another request';
  if (value.skill !== request.skill) return `is a journal of '${String(value.skill).slice(0, 80)}', not '${request.skill.slice(0, 80)}'`;
  if (value.args !== argsDigest(request.args)) return 'is the journal of a request with other args';
  return undefined;
}

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 1e9;

/** What is wrong with a stored journal line, or undefined when it has the shape the journal writes. */
function badLine(v: unknown): string | undefined {
  if (!isPlainObject(v)) return 'not an object';
  if (typeof v.agent !== 'string' || !AGENT.test(v.agent)) return "no agent key ('1', '1/2.1/1' …)";
  if (!isCount(v.turn)) return 'no turn number';
  if (v.type === 'model-turn') {
    if (typeof v.skill !== 'string') return 'a model turn names no skill';
    if (v.text !== undefined && typeof v.text !== 'string') return "a model turn's text is not a string";
    if (v.invoke !== undefined && typeof v.invoke !== 'string' && !(Array.isArray(v.invoke) && v.invoke.every((c) => typeof c === 'string'))) return "a model turn's code is not text";
    if (v.usage !== undefined && !isPlainObject(v.usage)) return "a model turn's usage is not an object";
    return undefined;
  }
  if (v.type !== 'call-start' && v.type !== 'call-end') return `type ${JSON.stringify(String(v.type).slice(0, 40))} is not model-turn, call-start or call-end`;
  if (typeof v.call !== 'string' || !CALL.test(v.call) || !isCount(v.index) || v.call !== `${v.turn as number}.${v.index as number}`) return 'no call key (TURN.INDEX)';
  if (typeof v.tool !== 'string') return 'a call names no tool';
  if (v.error !== undefined && !(isPlainObject(v.error) && typeof v.error.code === 'string' && typeof v.error.message === 'string')) return "a call's error is not { code, message }";
  if (v.denied !== undefined && v.denied !== true) return "a call's denied is not true";
  if (v.rerun !== undefined && typeof v.rerun !== 'string') return "a call's rerun is not text";
  return undefined;
}
