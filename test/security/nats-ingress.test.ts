// Red-team tests for what reaches a process over NATS (docs/scale.md, docs/security.md "The
// callers"): every attack is made from a second NATS client, as an outsider who can publish and
// subscribe on the server would — raw JSON on `agent-apps.<ns>.invoke.<queue>`, forged results on
// the results and reply subjects, raw events on an event subject — against real `agent-apps
// worker` processes, `run --remote` and runtimes, on a real `nats-server -js` (plain, with a
// password, a token, an nkey, TLS). Each asserts the safe outcome.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, nkeys, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { BIN, cli, cliEnv, folder } from '../cli-process.ts';
import { natsSkip, startNats, type NatsServer } from '../nats-helpers.ts';
import { createRuntime, eventBusReady, type Runtime } from '../../src/index.ts';
import { inlineRef, markerModule } from './attack.ts';

const KEY = 'a-test-signing-key-of-some-length';
const KEY_ENV = 'AA_TEST_SIGNING_KEY';

const SKILLS: Record<string, string> = {
  'skills/greet.skill.ts': `export const frontmatter = { name: 'greet', description: 'Greets.', metadata: { params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } };
export default (_ctx: unknown, args: { name: string }) => 'hello ' + args.name;
`,
  // Passes a request on: what a publisher puts in its inner args reaches a second invocation.
  'skills/relay.skill.ts': `export const frontmatter = { name: 'relay', description: 'Invokes another skill.', metadata: { params: { type: 'object', properties: { skill: { type: 'string' }, args: { type: 'object' } }, required: ['skill'] } } };
export default (ctx: { manager: { invoke(r: string, a: unknown): unknown } }, args: { skill: string; args?: object }) => ctx.manager.invoke(args.skill, args.args ?? {});
`,
  // One line per run, in the workspace: proof that a request ran (or did not).
  'skills/mark.skill.ts': `import fs from 'node:fs';
export const frontmatter = { name: 'mark', description: 'Leaves a mark.', metadata: { params: { type: 'object', properties: { tag: { type: 'string' } } } } };
export default (_ctx: unknown, args: { tag?: string }) => { fs.appendFileSync(new URL('../marks.txt', import.meta.url), (args.tag ?? 'x') + '\\n'); return 'marked'; };
`,
  // Answers only once the test opens the gate (a file): a forgery can be placed before the real result.
  'skills/gate.skill.ts': `import fs from 'node:fs';
export const frontmatter = { name: 'gate', description: 'Waits for the gate.' };
export default async () => { while (!fs.existsSync(new URL('../open', import.meta.url))) await new Promise((r) => setTimeout(r, 20)); return 'real'; };
`,
  // Ends its worker: the poison request that makes a dead letter.
  'skills/crash.skill.ts': `export const frontmatter = { name: 'crash', description: 'Kills its worker.' };
export default () => process.exit(7);
`,
  // A route handler: writes the event's data to the file its route's args name.
  'skills/writer.skill.ts': `import fs from 'node:fs';
export const frontmatter = { name: 'writer', description: 'Writes events down.', metadata: { params: { type: 'object', properties: { file: { type: 'string' }, event: { type: 'object' } }, required: ['file', 'event'] } } };
export default (_ctx: unknown, args: { file: string; event: { id: string } }) => { fs.appendFileSync(new URL('../' + args.file, import.meta.url), args.event.id + '\\n'); return 'written'; };
`,
};

const mainMd = (events: string, extra = '') => `---\nname: main\ndescription: A workspace on NATS.\nmetadata:\n  events:\n${events
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}\n${extra}---\n`;

let server: NatsServer;
let ws: string; // namespace default, no signing
let signedWs: string; // namespace signed, signing
const children = new Set<ChildProcess>();

interface Proc {
  child: ChildProcess;
  stderr(): string;
  exited: Promise<number | null>;
}

function startWorker(cwd: string, args: string[] = [], env: Record<string, string | undefined> = {}): Proc {
  const child = spawn(process.execPath, [BIN, 'worker', ...args], { cwd, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => (children.delete(child), resolve(code))));
  return { child, stderr: () => err, exited };
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const ready = (w: Proc) => until(() => /queue '.*' on (nats|tls)/.test(w.stderr()), `the worker to start (stderr: ${w.stderr()})`);

async function stop(w: Proc): Promise<number | null> {
  w.child.kill('SIGTERM');
  return w.exited;
}

/** The outsider: a plain client of the server, no agent-apps code. */
interface Attacker {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** Publishes `body` (an object, or raw text) as a request on `queue` and resolves with the result stored for its id. */
  request(ns: string, queue: string, body: Record<string, unknown> | string, id?: string): Promise<{ id: string; ok: boolean; result?: unknown; error?: { code: string; message: string }; [k: string]: unknown }>;
  close(): Promise<void>;
}

async function attacker(url = server.url): Promise<Attacker> {
  const nc = await connect({ servers: url });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  return {
    nc,
    js,
    jsm,
    async request(ns, queue, body, id) {
      const rid = id ?? (typeof body === 'string' ? randomUUID() : String(body.id));
      const sub = nc.subscribe(`agent-apps.${ns}.results.${rid}`, { max: 1 });
      await js.publish(`agent-apps.${ns}.invoke.${queue}`, typeof body === 'string' ? body : JSON.stringify(body));
      for await (const m of sub) return JSON.parse(m.string());
      throw new Error('no result');
    },
    close: () => nc.close(),
  };
}

const lines = (file: string): string[] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);

/** JSON with sorted keys, as a submitter holding the key would sign (written here, not imported). */
function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}
const hmac = (key: string, body: object) => createHmac('sha256', key).update(canonical(body)).digest('hex');

describe('NATS ingress', { skip: natsSkip }, () => {
  before(async () => {
    server = await startNats();
    ws = folder({ ...SKILLS, 'skills/main.md': mainMd(`backend: nats\nurl: ${server.url}\nackWaitMs: 1000`, '  event:\n    routes:\n      - { topic: jobs, ref: writer, args: { file: safe.txt } }\n') });
    signedWs = folder({ ...SKILLS, 'skills/main.md': mainMd(`backend: nats\nurl: ${server.url}\nnamespace: signed\nackWaitMs: 1000\nsigningKeyEnv: ${KEY_ENV}`) });
  });
  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    await server?.stop();
  });

  describe('a default worker (the workspace’s own skills)', () => {
    let w: Proc;
    let opened: Proc | undefined;
    let a: Attacker;
    /** A second worker, on queue `open`, whose allow-list names built-ins: the arg, ref and path rules still hold for them. */
    const open = async () => {
      if (!opened) {
        opened = startWorker(ws, ['--queue', 'open', '--allow', 'greet relay file-read skill-describe event-subscribe']);
        await ready(opened);
      }
    };
    before(async () => {
      w = startWorker(ws, ['--concurrency', '1']);
      await ready(w);
      a = await attacker();
    });
    after(async () => {
      await a?.close();
      assert.equal(await stop(w), 0, w.stderr());
      if (opened) assert.equal(await stop(opened), 0, opened.stderr());
    });

    test('file-read of /etc/passwd is refused: a built-in the allow-list does not name; named, the path is outside the workspace', async () => {
      const plain = await a.request('default', 'default', { id: randomUUID(), skill: 'file-read', args: { path: '/etc/passwd' } });
      assert.equal(plain.ok, false);
      assert.equal(plain.error?.code, 'E_ALLOWED_TOOLS');
      assert.match(plain.error!.message, /built-in/);
      const withReply = await a.request('default', 'default', { id: randomUUID(), skill: 'file-read', args: { path: '/etc/passwd' }, replyTo: 'x' });
      assert.equal(withReply.ok, false);
      await open();
      const named = await a.request('default', 'open', { id: randomUUID(), skill: 'file-read', args: { path: '/etc/passwd' } });
      assert.equal(named.error?.code, 'E_ALLOWED_TOOLS');
      assert.match(named.error!.message, /outside the workspace/);
      for (const r of [plain, withReply, named]) assert.doesNotMatch(JSON.stringify(r), /root:/);
      assert.match(w.stderr(), /refused a request from a NATS publisher/);
    });

    test('$context and __proto__ in a request are refused at any depth — a relaying skill cannot pass middleware on', async () => {
      const marker = path.join(ws, 'pwned-context');
      const inner = { name: 'x', $context: { middleware: { [inlineRef(markerModule(marker))]: {} } } };
      const relayed = await a.request('default', 'default', { id: randomUUID(), skill: 'relay', args: { skill: 'greet', args: inner } });
      assert.equal(relayed.error?.code, 'E_UNTRUSTED_REF');
      assert.match(relayed.error!.message, /\$context/);
      const top = await a.request('default', 'default', { id: randomUUID(), skill: 'greet', args: inner });
      assert.equal(top.error?.code, 'E_UNTRUSTED_REF');
      const id = randomUUID();
      const proto = await a.request('default', 'default', `{"id":"${id}","skill":"greet","args":{"name":"x","__proto__":{"polluted":true}}}`, id);
      assert.equal(proto.error?.code, 'E_UNTRUSTED_REF');
      assert.match(proto.error!.message, /__proto__/);
      assert.equal(fs.existsSync(marker), false, 'no injected middleware ran');
      // …and the worker keeps serving.
      const ok = await a.request('default', 'default', { id: randomUUID(), skill: 'greet', args: { name: 'still here' } });
      assert.deepEqual([ok.ok, ok.result], [true, 'hello still here']);
    });

    test('skill-describe and event-subscribe with an inline:// ref load nothing: refused by default, and named, the ref must be a bare name', async () => {
      const marker = path.join(ws, 'pwned-ref');
      const ref = inlineRef(markerModule(marker));
      for (const queue of ['default', 'open']) {
        if (queue === 'open') await open();
        const describe = await a.request('default', queue, { id: randomUUID(), skill: 'skill-describe', args: { name: ref } });
        assert.equal(describe.error?.code, queue === 'default' ? 'E_ALLOWED_TOOLS' : 'E_UNTRUSTED_REF', JSON.stringify(describe));
        const subscribe = await a.request('default', queue, { id: randomUUID(), skill: 'event-subscribe', args: { topic: 'pings', ref } });
        assert.equal(subscribe.error?.code, queue === 'default' ? 'E_ALLOWED_TOOLS' : 'E_UNTRUSTED_REF', JSON.stringify(subscribe));
      }
      // A bare handler whose args would inject middleware on every event: refused as well.
      const injected = await a.request('default', 'open', { id: randomUUID(), skill: 'event-subscribe', args: { topic: 'pings', ref: 'greet', args: { name: 'x', $context: { middleware: { [ref]: {} } } } } });
      assert.equal(injected.error?.code, 'E_UNTRUSTED_REF');
      await a.js.publish('agent-apps.default.events.pings', JSON.stringify({ id: 'p1', topic: 'pings', type: 'ping', data: {}, timestamp: Date.now() }));
      const emitted = await cli(['run', 'event-emit', '--topic', 'pings', '--type', 'ping'], ws);
      assert.equal(emitted.code, 0, emitted.stderr);
      assert.equal(fs.existsSync(marker), false, 'no inline module was imported');
      assert.deepEqual(await a.jsm.consumers.list('AGENT_APPS_DEFAULT_EVENTS').next().then((list) => list.filter((c) => c.config.filter_subject === 'agent-apps.default.events.pings')), [], 'no handler was subscribed');
    });

    test('replyTo may only be a reply subject: a foreign one is refused on the results stream and nothing is published there', async () => {
      const foreign: string[] = [];
      const spy = a.nc.subscribe('victim.>', { callback: (_e, m) => void foreign.push(m.subject) });
      const inbox: string[] = [];
      const spyInbox = a.nc.subscribe('_INBOX.>', { callback: (_e, m) => void inbox.push(m.subject) });
      for (const replyTo of ['victim.inbox', 'agent-apps.default.reply.short', 'agent-apps.default.results.someone-else', '_INBOX.abc']) {
        const r = await a.request('default', 'default', { id: randomUUID(), skill: 'greet', args: { name: 'x' }, replyTo });
        assert.equal(r.ok, false, replyTo);
        assert.equal(r.error?.code, 'E_UNTRUSTED_REF', replyTo);
        assert.match(r.error!.message, /reply subject/);
      }
      // The worker (one slot) answers in order: once the next result is here, any reply to the
      // foreign subjects would have arrived before it.
      const replyTo = `agent-apps.default.reply.${randomUUID().replace(/-/g, '')}`;
      const got: unknown[] = [];
      const mine = a.nc.subscribe(replyTo, { callback: (_e, m) => void got.push(JSON.parse(m.string())) });
      const ok = await a.request('default', 'default', { id: randomUUID(), skill: 'greet', args: { name: 'y' }, replyTo });
      assert.equal(ok.result, 'hello y');
      await a.nc.flush();
      await until(() => got.length === 1, 'the reply on the reply subject');
      assert.deepEqual(foreign, []);
      assert.deepEqual(inbox.filter((s) => s === '_INBOX.abc'), []);
      spy.unsubscribe();
      spyInbox.unsubscribe();
      mine.unsubscribe();
    });

    test('unsigned: a forged result (even with Nats-Msg-Id = the id) never pushes the real one out of the results stream', async () => {
      fs.rmSync(path.join(ws, 'open'), { force: true });
      const seen = a.nc.subscribe('agent-apps.default.invoke.default', { max: 1 });
      const run = cli(['run', 'gate', '--remote', '--remote-timeout', '60000'], ws);
      let id = '';
      for await (const m of seen) id = (JSON.parse(m.string()) as { id: string }).id;
      await a.js.publish(`agent-apps.default.results.${id}`, JSON.stringify({ id, ok: true, result: 'forged' }), { msgID: id });
      fs.writeFileSync(path.join(ws, 'open'), '');
      await run;
      const stored: unknown[] = [];
      await until(async () => {
        stored.length = 0;
        let seq = 0;
        for (;;) {
          const m = await a.jsm.streams.getMessage('AGENT_APPS_DEFAULT_RESULTS', { seq, next_by_subj: `agent-apps.default.results.${id}` } as unknown as { seq: number });
          if (!m) break;
          stored.push(m.json<{ result: unknown }>().result);
          seq = m.seq + 1;
        }
        return stored.includes('real');
      }, 'the real result in the results stream');
      assert.deepEqual(stored, ['forged', 'real']);
    });
  });

  test('events from NATS are data: $context is refused, an event never overrides a route’s args, and the process keeps serving', async (t) => {
    const rt: Runtime = await createRuntime({ cwd: ws });
    t.after(() => rt.close());
    await eventBusReady(rt.root); // registers the main's route jobs → writer { file: safe.txt }
    const a = await attacker();
    t.after(() => a.close());
    const marker = path.join(ws, 'pwned-event');
    const ref = inlineRef(markerModule(marker));
    const subject = 'agent-apps.default.events.jobs';
    const base = { topic: 'jobs', type: 'job', timestamp: Date.now() };
    await a.js.publish(subject, JSON.stringify({ ...base, id: 'evil-1', data: {}, $context: { middleware: { [ref]: {} } } }));
    await a.js.publish(subject, JSON.stringify({ ...base, id: 'evil-2', data: { deep: { $context: { middleware: { [ref]: {} } } } } }));
    await a.js.publish(subject, `{"id":"evil-3","topic":"jobs","type":"job","timestamp":1,"data":{"__proto__":{"polluted":true}}}`);
    await a.js.publish(subject, JSON.stringify({ ...base, id: 'override', data: { n: 1 }, file: 'evil.txt' }));
    const refused = () => rt.root.manager.tail({ type: 'refused' }).filter((e) => e.tag === 'events');
    await until(() => lines(path.join(ws, 'safe.txt')).includes('override') && refused().length === 3, 'the override event handled and three refusals logged');
    assert.deepEqual(lines(path.join(ws, 'safe.txt')), ['override'], "the route's own file, once: the event's `file` stayed under args.event");
    assert.equal(fs.existsSync(path.join(ws, 'evil.txt')), false);
    assert.equal(fs.existsSync(marker), false, 'no middleware from an event ran');
    assert.deepEqual(refused().map((e) => [e.level, e.eventId]).sort(), [['warn', 'evil-1'], ['warn', 'evil-2'], ['warn', 'evil-3']]);
    // Settled (acked): a later event is handled, the refused ones are not redelivered.
    await a.js.publish(subject, JSON.stringify({ ...base, id: 'later', data: {} }));
    await until(() => lines(path.join(ws, 'safe.txt')).includes('later'), 'a later event handled');
    // The route's handler is a durable group: its own stream (AGENT_APPS_DEFAULT_G_<durable>) and consumer.
    const group = (await a.jsm.streams.names().next()).find((n) => n.startsWith('AGENT_APPS_DEFAULT_G_h_jobs'))!;
    const handler = group.slice('AGENT_APPS_DEFAULT_G_'.length);
    await until(async () => (await a.jsm.consumers.info(group, handler)).num_ack_pending === 0, 'every event acked');
    assert.equal(refused().length, 3);
  });

  test('--max-ms bounds two event-waits without a timeout (answered E_TIMEOUT, the slots free again); SIGTERM’s drain ends, handing running requests back', async () => {
    const a = await attacker();
    try {
      const bounded = startWorker(ws, ['--queue', 'waits', '--concurrency', '2', '--allow', 'event-wait greet', '--max-ms', '1500']);
      await ready(bounded);
      const waits = [randomUUID(), randomUUID()].map((id) => a.request('default', 'waits', { id, skill: 'event-wait', args: { topic: 'never' } }));
      const greet = a.request('default', 'waits', { id: randomUUID(), skill: 'greet', args: { name: 'after' } });
      for (const r of await Promise.all(waits)) {
        assert.equal(r.error?.code, 'E_TIMEOUT', JSON.stringify(r));
        assert.match(r.error!.message, /1500 ms/);
      }
      assert.equal((await greet).result, 'hello after');
      assert.equal(await stop(bounded), 0, bounded.stderr());

      const draining = startWorker(ws, ['--queue', 'drain', '--concurrency', '2', '--allow', 'event-wait', '--drain-ms', '300']);
      await ready(draining);
      const ids = [randomUUID(), randomUUID()];
      const answered = ids.map((id) => a.request('default', 'drain', { id, skill: 'event-wait', args: { topic: 'never' } }));
      await until(async () => (await a.jsm.consumers.info('AGENT_APPS_DEFAULT_INVOKE', 'worker_drain')).num_ack_pending === 2, 'both waits running');
      assert.equal(await stop(draining), 0, draining.stderr());
      assert.match(draining.stderr(), /2 request\(s\) still running after 300 ms of drain.*handed back/);
      // Handed back unanswered: the next worker of the queue takes them.
      const next = startWorker(ws, ['--queue', 'drain', '--concurrency', '2', '--allow', 'event-wait', '--max-ms', '1000']);
      await ready(next);
      for (const r of await Promise.all(answered)) assert.equal(r.error?.code, 'E_TIMEOUT');
      assert.equal(await stop(next), 0);
    } finally {
      await a.close();
    }
  });

  test('worker --allow that does not parse is a usage error at start (exit 2): a typo never widens the list', async () => {
    for (const [allow, why] of [['greet(path)', /must look like key=glob/], ['file-read(path=/x', /unbalanced parentheses/], ['', /name at least one/]] as const) {
      const r = await cli(['worker', '--allow', allow], ws);
      assert.equal(r.code, 2, `${allow}: ${r.stderr}`);
      assert.match(r.stderr, /E_USAGE.*--allow/);
      assert.match(r.stderr, why);
    }
  });

  test('worker --status --json: per queue { queue, pending, running, workers, dead } with that queue’s dead letters', async () => {
    const run = cli(['run', 'crash', '--remote', '--queue', 'poison'], ws);
    for (let i = 0; i < 3; i++) assert.equal(await startWorker(ws, ['--queue', 'poison']).exited, 7);
    const last = startWorker(ws, ['--queue', 'poison']);
    const idle = startWorker(ws, ['--queue', 'idle']);
    try {
      assert.match((await run).stderr, /E_DEAD_LETTER/);
      await ready(idle);
      await until(async () => {
        const s = JSON.parse((await cli(['worker', '--status', '--json'], ws)).stdout) as { queues: { queue: string; workers: unknown[] }[] };
        return s.queues.some((q) => q.queue === 'idle' && q.workers.length === 1);
      }, 'the idle worker’s heartbeat');
      const status = await cli(['worker', '--status', '--json'], ws);
      assert.equal(status.code, 0, status.stderr);
      const s = JSON.parse(status.stdout) as { dead: number; queues: Record<string, unknown>[] };
      for (const q of s.queues) assert.deepEqual(Object.keys(q).sort(), ['dead', 'pending', 'queue', 'running', 'workers'], JSON.stringify(q));
      const by = Object.fromEntries(s.queues.map((q) => [q.queue, q]));
      assert.equal(by.poison!.dead, 1);
      assert.equal(by.idle!.dead, 0);
      assert.equal((by.idle!.workers as unknown[]).length, 1);
      assert.equal(s.dead, 1);
    } finally {
      await stop(last);
      await stop(idle);
    }
  });

  describe('signing (events.signingKeyEnv)', () => {
    const env = { [KEY_ENV]: KEY };
    let w: Proc;
    let a: Attacker;
    before(async () => {
      w = startWorker(signedWs, ['--concurrency', '1'], env);
      await ready(w);
      a = await attacker();
    });
    after(async () => {
      await a?.close();
      assert.equal(await stop(w), 0, w.stderr());
    });

    const signed = (body: Record<string, unknown>, key = KEY) => ({ ...body, sig: hmac(key, { ...body, queue: 'default' }) });

    test('an unsigned, mis-signed, altered, stale or future request is refused (E_SIGNATURE) and does not run; a signed one runs once, its replay not at all', async () => {
      const marks = path.join(signedWs, 'marks.txt');
      const now = Date.now();
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ['unsigned', { id: randomUUID(), skill: 'mark', args: { tag: 'unsigned' } }, /unsigned/],
        ['another key', signed({ id: randomUUID(), skill: 'mark', args: { tag: 'other' }, ts: now }, 'not-the-key-at-all-really'), /bad signature/],
        ['altered', { ...signed({ id: randomUUID(), skill: 'mark', args: { tag: 'a' }, ts: now }), args: { tag: 'altered' } }, /bad signature/],
        ['stale', signed({ id: randomUUID(), skill: 'mark', args: { tag: 'stale' }, ts: now - 10 * 60_000 }), /stale/],
        ['future', signed({ id: randomUUID(), skill: 'mark', args: { tag: 'future' }, ts: now + 10 * 60_000 }), /future/],
      ];
      for (const [what, body, why] of cases) {
        const r = await a.request('signed', 'default', body);
        assert.equal(r.ok, false, what);
        assert.equal(r.error?.code, 'E_SIGNATURE', what);
        assert.match(r.error!.message, why, what);
      }
      assert.deepEqual(lines(marks), [], 'none of them ran');
      const good = signed({ id: randomUUID(), skill: 'mark', args: { tag: 'good' }, ts: Date.now() });
      const r = await a.request('signed', 'default', good);
      assert.deepEqual([r.ok, r.result, r.req], [true, 'marked', good.sig], 'the result names the request it answers');
      await a.js.publish('agent-apps.signed.invoke.default', JSON.stringify(good)); // a replay, without the Nats-Msg-Id
      const after = signed({ id: randomUUID(), skill: 'mark', args: { tag: 'after' }, ts: Date.now() });
      assert.equal((await a.request('signed', 'default', after)).result, 'marked');
      assert.deepEqual(lines(marks), ['good', 'after'], 'the replay did not run');
    });

    test('run --remote takes only a result signed for its request: forgeries from a client that saw the request id are logged and ignored, the real one arrives', async () => {
      fs.rmSync(path.join(signedWs, 'open'), { force: true });
      const seen = a.nc.subscribe('agent-apps.signed.invoke.default', { max: 1 });
      const run = cli(['run', 'gate', '--remote', '--remote-timeout', '60000'], signedWs, { env });
      let request: { id: string; replyTo: string; sig: string } | undefined;
      for await (const m of seen) request = JSON.parse(m.string());
      const { id, replyTo } = request!;
      assert.match(replyTo, /^agent-apps\.signed\.reply\.[A-Za-z0-9_-]{16,}$/);
      const forged = { id, ok: true, result: 'forged', worker: 'evil', ts: Date.now() };
      const wrongKey = { ...forged, result: 'forged-signed', req: request!.sig, sig: hmac('not-the-key-at-all-really', { ...forged, result: 'forged-signed', req: request!.sig }) };
      for (const body of [forged, wrongKey]) {
        await a.js.publish(`agent-apps.signed.results.${id}`, JSON.stringify(body), { msgID: id });
        a.nc.publish(replyTo, JSON.stringify(body));
      }
      await a.nc.flush();
      fs.writeFileSync(path.join(signedWs, 'open'), '');
      const r = await run;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'real\n');
      assert.match(r.stderr, /warn.*ignored a message .* for request .*forgery/);
    });

    test('run --remote signs its requests; without the key set it refuses to start (E_CONFIG naming the variable)', async () => {
      const ok = await cli(['run', 'greet', '--name', 'Ada', '--remote', '--remote-timeout', '30000'], signedWs, { env });
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.stdout, 'hello Ada\n');
      const keyless = await cli(['run', 'greet', '--name', 'Ada', '--remote'], signedWs, { env: { [KEY_ENV]: undefined } });
      assert.equal(keyless.code, 2, keyless.stderr);
      assert.match(keyless.stderr, new RegExp(`E_CONFIG.*signingKeyEnv names ${KEY_ENV}, which is not set`));
    });
  });

  describe('authentication and TLS', () => {
    test('a password-protected server: the bus, a worker and run --remote work with the credentials; without or with a wrong password, E_EVENTS naming the URL (never the password)', async (t) => {
      const s = await startNats(['--user', 'ada', '--pass', 's3cret-pw']);
      t.after(() => s.stop());
      const plainUrl = `nats://127.0.0.1:${s.port}`;
      const dir = folder({ ...SKILLS, 'skills/main.md': mainMd(`backend: nats\nurl: ${plainUrl}\nauth: { user: ada, passEnv: AA_TEST_NATS_PASS }`) });
      const env = { AA_TEST_NATS_PASS: 's3cret-pw' };
      const emit = await cli(['run', 'event-emit', '--topic', 't', '--type', 'x'], dir, { env });
      assert.equal(emit.code, 0, emit.stderr);
      const w = startWorker(dir, [], env);
      try {
        await ready(w);
        const remote = await cli(['run', 'greet', '--name', 'Ada', '--remote', '--remote-timeout', '30000'], dir, { env });
        assert.equal(remote.stdout, 'hello Ada\n', remote.stderr);
        const viaUrl = await cli(['run', 'greet', '--name', 'Bo', '--remote', '--remote-timeout', '30000'], ws, { env: { AGENT_APPS_EVENTS: `nats://ada:s3cret-pw@127.0.0.1:${s.port}` } });
        assert.equal(viaUrl.stdout, 'hello Bo\n', viaUrl.stderr);
      } finally {
        assert.equal(await stop(w), 0);
      }
      for (const [events, what] of [[plainUrl, 'none'], [`nats://ada:wrong-pw@127.0.0.1:${s.port}`, 'wrong']] as const) {
        for (const args of [['run', 'event-emit', '--topic', 't', '--type', 'x'], ['worker'], ['run', 'greet', '--name', 'x', '--remote']]) {
          const r = await cli(args, ws, { env: { AGENT_APPS_EVENTS: events } });
          assert.equal(r.code, 1, `${what} ${args.join(' ')}: ${r.stderr}`);
          assert.match(r.stderr, new RegExp(`E_EVENTS.*authentication failed at NATS nats://127\\.0\\.0\\.1:${s.port}`));
          assert.doesNotMatch(r.stderr, /wrong-pw|s3cret/);
        }
      }
      const unset = await cli(['run', 'event-emit', '--topic', 't', '--type', 'x'], dir);
      assert.equal(unset.code, 2);
      assert.match(unset.stderr, /E_CONFIG.*auth: passEnv names AA_TEST_NATS_PASS, which is not set/);
    });

    test('a token server: the token from the URL or from events.auth (${env.X} interpolated) works; none is E_EVENTS', async (t) => {
      const s = await startNats(['--auth', 'tok-123456']);
      t.after(() => s.stop());
      const viaUrl = await cli(['run', 'event-emit', '--topic', 't', '--type', 'x'], ws, { env: { AGENT_APPS_EVENTS: `nats://tok-123456@127.0.0.1:${s.port}` } });
      assert.equal(viaUrl.code, 0, viaUrl.stderr);
      const dir = folder({ ...SKILLS, 'skills/main.md': mainMd(`backend: nats\nurl: nats://127.0.0.1:${s.port}\nauth: { token: "\${env.AA_TEST_TOKEN}" }`) });
      const viaConfig = await cli(['run', 'event-emit', '--topic', 't', '--type', 'x'], dir, { env: { AA_TEST_TOKEN: 'tok-123456' } });
      assert.equal(viaConfig.code, 0, viaConfig.stderr);
      const wrong = await cli(['run', 'event-emit', '--topic', 't', '--type', 'x'], dir, { env: { AA_TEST_TOKEN: 'tok-wrong' } });
      assert.equal(wrong.code, 1);
      assert.match(wrong.stderr, /E_EVENTS.*authentication failed.*token/);
      assert.doesNotMatch(wrong.stderr, /tok-wrong/);
    });

    test('an nkey server: events.auth.nkeySeedFile signs the server’s nonce; another seed is refused', async (t) => {
      const user = nkeys.createUser();
      const other = nkeys.createUser();
      const dir = folder({
        ...SKILLS,
        'user.nk': new TextDecoder().decode(user.getSeed()),
        'other.nk': new TextDecoder().decode(other.getSeed()),
        'nats.conf': `authorization { users = [ { nkey: ${user.getPublicKey()} } ] }\n`,
      });
      const s = await startNats(['-c', path.join(dir, 'nats.conf')]);
      t.after(() => s.stop());
      for (const [seed, code] of [['../user.nk', 0], ['../other.nk', 1]] as const) {
        fs.writeFileSync(path.join(dir, 'skills', 'main.md'), mainMd(`backend: nats\nurl: nats://127.0.0.1:${s.port}\nauth: { nkeySeedFile: ${seed} }`));
        const r = await cli(['run', 'event-emit', '--topic', 't', '--type', 'x'], dir);
        assert.equal(r.code, code, r.stderr);
        if (code) assert.match(r.stderr, /E_EVENTS.*authentication failed.*nkey seed/);
      }
    });

    test('with the subject permissions of docs/scale.md, a submitter runs skills but can neither forge a result nor watch the queue; an outsider can publish nothing', async (t) => {
      const streams = (kinds: string[]) => kinds.map((k) => `"$JS.API.STREAM.INFO.AGENT_APPS_PROD_${k}"`).join(', ');
      const conf = `accounts {
  APPS {
    jetstream: enabled
    users = [
      { user: admin, password: admin-pw }
      { user: worker, password: worker-pw, permissions: {
          publish: { allow: ["$JS.API.INFO", ${streams(['INVOKE', 'RESULTS', 'DEAD', 'WORKERS'])}, "$JS.API.CONSUMER.INFO.AGENT_APPS_PROD_INVOKE.*", "$JS.API.CONSUMER.MSG.NEXT.AGENT_APPS_PROD_INVOKE.*", "$JS.ACK.AGENT_APPS_PROD_INVOKE.>", "$JS.API.STREAM.MSG.GET.AGENT_APPS_PROD_RESULTS", "agent-apps.prod.results.>", "agent-apps.prod.reply.>", "agent-apps.prod.dead.>", "agent-apps.prod.workers.>"] }
          subscribe: { allow: ["_INBOX.>"] } } }
      { user: submitter, password: submitter-pw, permissions: {
          publish: { allow: ["$JS.API.INFO", ${streams(['INVOKE', 'RESULTS'])}, "$JS.API.CONSUMER.INFO.AGENT_APPS_PROD_INVOKE.*", "$JS.API.STREAM.MSG.GET.AGENT_APPS_PROD_RESULTS", "agent-apps.prod.invoke.>"] }
          subscribe: { allow: ["_INBOX.>", "agent-apps.prod.reply.>"] } } }
      { user: outsider, password: outsider-pw, permissions: { publish: { deny: ">" }, subscribe: { deny: ">" } } }
    ]
  }
}
`;
      const dir = folder({ ...SKILLS, 'nats.conf': conf, 'skills/main.md': mainMd('backend: nats\nurl: nats://127.0.0.1:4222\nnamespace: prod') });
      const s = await startNats(['-c', path.join(dir, 'nats.conf')]);
      t.after(() => s.stop());
      const as = (user: string) => ({ AGENT_APPS_EVENTS: `nats://${user}:${user}-pw@127.0.0.1:${s.port}` });
      // An administrator makes the streams and the queue once (a worker run with its credentials).
      const setup = startWorker(dir, [], as('admin'));
      await ready(setup);
      assert.equal(await stop(setup), 0, setup.stderr());
      const w = startWorker(dir, [], as('worker'));
      try {
        await ready(w);
        const ok = await cli(['run', 'greet', '--name', 'Ada', '--remote', '--remote-timeout', '30000'], dir, { env: as('submitter') });
        assert.equal(ok.stdout, 'hello Ada\n', ok.stderr);
        const violations = async (user: string, act: (nc: NatsConnection) => void): Promise<string[]> => {
          const nc = await connect({ servers: `nats://127.0.0.1:${s.port}`, user, pass: `${user}-pw` });
          const seen: string[] = [];
          const watching = (async () => {
            for await (const st of nc.status()) if (st.type === 'error') seen.push(`${(st.error as { operation?: string }).operation} ${(st.error as { subject?: string }).subject}`);
          })();
          act(nc);
          await until(() => seen.length > 0, `a permissions violation for ${user}`);
          await nc.close();
          await watching;
          return seen;
        };
        assert.deepEqual(await violations('submitter', (nc) => nc.publish('agent-apps.prod.results.someone', JSON.stringify({ id: 'someone', ok: true, result: 'forged' }))), ['publish agent-apps.prod.results.someone']);
        assert.deepEqual(await violations('submitter', (nc) => void nc.subscribe('agent-apps.prod.invoke.>')), ['subscription agent-apps.prod.invoke.>']);
        assert.deepEqual(await violations('outsider', (nc) => nc.publish('agent-apps.prod.invoke.default', JSON.stringify({ id: 'x', skill: 'greet', args: { name: 'x' } }))), ['publish agent-apps.prod.invoke.default']);
      } finally {
        assert.equal(await stop(w), 0, w.stderr());
      }
    });

    test('a TLS server: tls://… with events.tls.ca works; without the CA, E_EVENTS saying TLS failed', { skip: spawnSync('openssl', ['version']).error ? 'openssl is not installed' : undefined }, async (t) => {
      const dir = folder(SKILLS);
      const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { cwd: dir, encoding: 'utf8' });
      assert.equal(made.status, 0, made.stderr);
      const s = await startNats(['--tls', '--tlscert', path.join(dir, 'cert.pem'), '--tlskey', path.join(dir, 'key.pem')]);
      t.after(() => s.stop());
      fs.writeFileSync(path.join(dir, 'skills', 'main.md'), mainMd(`backend: nats\nurl: tls://127.0.0.1:${s.port}\ntls: { ca: ../cert.pem }`));
      const ok = await cli(['run', 'event-emit', '--topic', 't', '--type', 'x'], dir);
      assert.equal(ok.code, 0, ok.stderr);
      fs.writeFileSync(path.join(dir, 'skills', 'main.md'), mainMd(`backend: nats\nurl: tls://127.0.0.1:${s.port}`));
      const bad = await cli(['run', 'event-emit', '--topic', 't', '--type', 'x'], dir);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /E_EVENTS.*TLS with NATS at tls:\/\/127\.0\.0\.1:\d+ failed/);
    });
  });
});
