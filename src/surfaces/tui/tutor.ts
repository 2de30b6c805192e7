// `agent-apps tutor` (docs/terminal.md): a guided tour in the person's own workspace. Each step writes real
// files under skills/tutor/ (a file that is already there is kept: the person may have edited it),
// runs them in a fresh runtime — as a new `agent-apps` command would — and checks the outcome; a
// step that did not work says why and can be tried again. Progress is kept in
// .agent-apps/tutor.json, so running the tutor again resumes at the first unfinished step.
// Keys: Enter does the step (or goes on), s skips it, q or Ctrl-C leaves (progress kept).
import fs from 'node:fs';
import path from 'node:path';
import React from 'react';
import { Box, Text, useInput } from 'ink';
import { Spinner } from '@inkjs/ui';
import { createRuntime, type Runtime } from '../../runtime.ts';
import type { Context, JsonObject, LogEvent } from '../../core/types.ts';
import { buildTree, treeLines } from '../shared/debug-tree.ts';
import { PACKAGE_ROOT } from '../../loader/search-paths.ts';
import type { Screen } from './screen.ts';
import { errorLine, oneLine } from './text.ts';
import { FocusContext, Line, h, useTheme, type Element } from './ui.ts';

export interface TutorOptions {
  screen: Screen;
  /** Start again from the first step. */
  restart?: boolean;
}

interface StepEnv {
  screen: Screen;
  workspace: string;
  /** A fresh runtime on the workspace, with this screen as its agent view, person to ask and breakpoints. */
  runtime(overrides?: JsonObject): Promise<Runtime>;
}

interface Outcome {
  ok: boolean;
  /** What the run gave, as a line. */
  shown: string;
  /** Why it does not count (when not ok). */
  why?: string;
}

export interface Step {
  id: string;
  title: string;
  text: string[];
  /** Files written under the workspace (paths relative to it). */
  files: Record<string, string>;
  /** The command a person would type to do what the check does. */
  command: string;
  check(env: StepEnv): Promise<Outcome>;
}

const HELLO = `import type { Context } from 'agent-apps';

// A code skill: a module with a frontmatter (name, description, params) and a function.
export const frontmatter = {
  name: 'tutor-hello',
  description: 'Says hello (written by agent-apps tutor).',
  metadata: {
    params: { type: 'object', properties: { name: { type: 'string', default: 'world' } } },
  },
};

export default async function (_ctx: Context, args: { name: string }) {
  return \`Hello, \${args.name}!\`;
}
`;

const STAMP = `import { ctxTarget, type Context } from 'agent-apps';

// A middleware: it wraps the skills it serves. next() runs the rest of their chain; what it
// returns (when not undefined) becomes their result.
export const frontmatter = {
  name: 'tutor-stamp',
  description: 'Middleware: appends a stamp to string results (written by agent-apps tutor).',
  metadata: { role: 'middleware', visibility: 'hidden', params: { type: 'object', properties: { stamp: { type: 'string' } } } },
};

export default async function (ctx: Context, args: { stamp?: string }) {
  const target = ctxTarget(ctx);
  // Serve skills only (a main.md key reaches middleware pipelines too).
  if (target.envelope.hasOtherTarget) return target.manager.next();
  const result = await target.manager.next();
  const stamp = \` [\${args?.stamp ?? 'stamped'}]\`;
  return typeof result === 'string' && !result.endsWith(stamp) ? result + stamp : undefined;
}
`;

const MAIN = `---
name: main
description: The main of skills/tutor/ (written by agent-apps tutor). Its metadata cascades to every skill in this folder.
metadata:
  # A key that names a skill turns that skill on as middleware; the value is its args.
  tutor-stamp: { stamp: via main.md }
---
`;

const AGENT = `---
name: tutor-agent
description: An agent skill that greets through tutor-hello (written by agent-apps tutor; replays a cassette, so no model is needed).
metadata:
  params: { type: object, properties: { name: { type: string } }, required: [name] }
  allowed-tools: tutor-hello
  model: { provider: replay, cassette: tutor-agent.cassette.yaml }
---
Greet :arg{name=name} by calling the tutor-hello skill, and finish with its greeting.
`;

const CASSETTE = `# The model's side of a run of tutor-agent, recorded: one entry per model response.
# Record your own with --set model.record=FILE against a live model.
turns:
  - text: I'll ask tutor-hello to greet them, then finish with its greeting.
    invoke: |
      const greeting = await ctx.manager.invoke('tutor-hello', { name: ctx.args.name });
      ctx.manager.finish(greeting);
`;

export const STEPS: Step[] = [
  {
    id: 'code-skill',
    title: 'A code skill',
    text: [
      'A skill is a file on a search path: a TypeScript module (NAME.skill.ts) or a Markdown prompt (NAME.md).',
      'This step writes skills/tutor/tutor-hello.skill.ts and runs it.',
    ],
    files: { 'skills/tutor/tutor-hello.skill.ts': HELLO },
    command: 'agent-apps run tutor-hello --name Ada',
    async check(env) {
      const rt = await env.runtime();
      try {
        const value = await rt.invoke('tutor-hello', { name: 'Ada' });
        return outcome(value, (v) => typeof v === 'string' && v.startsWith('Hello, Ada!'), "expected a string starting with 'Hello, Ada!'");
      } finally {
        await rt.close();
      }
    },
  },
  {
    id: 'middleware',
    title: 'A middleware in main.md',
    text: [
      'Every call runs through a chain of middleware, which are skills too. A folder’s main.md sets metadata for the',
      'skills in it; a key that names a skill puts that skill in their chain. This step writes the middleware',
      'tutor-stamp and skills/tutor/main.md, which turns it on for tutor-hello — then runs tutor-hello again.',
    ],
    files: { 'skills/tutor/tutor-stamp.skill.ts': STAMP, 'skills/tutor/main.md': MAIN },
    command: 'agent-apps describe tutor-hello   then   agent-apps run tutor-hello --name Ada',
    async check(env) {
      const rt = await env.runtime();
      try {
        const chain = (await rt.describe('tutor-hello')).chain.map((e) => e.name);
        env.screen.print(h(Line, { dim: true }, `chain of tutor-hello: ${chain.join(' → ')}`));
        if (!chain.includes('tutor-stamp')) return { ok: false, shown: chain.join(' → '), why: 'tutor-stamp is not in the chain: is skills/tutor/main.md there, with the key tutor-stamp?' };
        const value = await rt.invoke('tutor-hello', { name: 'Ada' });
        return outcome(value, (v) => typeof v === 'string' && v.includes('[via main.md]'), "expected the stamp '[via main.md]' at the end");
      } finally {
        await rt.close();
      }
    },
  },
  {
    id: 'agent-skill',
    title: 'An agent skill, from a cassette',
    text: [
      'A Markdown skill is run by an LLM agent that acts by writing JavaScript; its code runs in a sandbox and calls',
      'other skills through the same pipeline, limited by allowed-tools. A cassette replays a recorded model, so this',
      'runs offline. Watch the agent below: its text, its code, the skills it calls.',
    ],
    files: { 'skills/tutor/tutor-agent.md': AGENT, 'skills/tutor/tutor-agent.cassette.yaml': CASSETTE },
    command: 'agent-apps run tutor-agent --name Ada',
    async check(env) {
      const rt = await env.runtime();
      try {
        const value = await rt.invoke('tutor-agent', { name: 'Ada' });
        env.screen.agentsDone();
        return outcome(value, (v) => typeof v === 'string' && v.startsWith('Hello, Ada!'), "expected the agent to finish with tutor-hello's greeting");
      } finally {
        await rt.close();
      }
    },
  },
  {
    id: 'debug',
    title: 'Debug: the pipeline, paused',
    text: [
      'debug runs a skill with the debug hooks on and shows its pipeline as a tree; --break NAME pauses where a tool’s',
      'pipeline starts (or at a chain entry of that name). This step pauses tutor-hello: press s to step to the next',
      'entry (tutor-stamp first), i to see the context there, c to run to the end.',
    ],
    files: {},
    command: 'agent-apps debug tutor-hello --name Ada --break tutor-hello',
    async check(env) {
      const rt = await env.runtime({ debug: { break: ['tutor-hello'] } });
      try {
        const value = await rt.invoke('tutor-hello', { name: 'Ada' });
        const events = rt.root.manager.tail({ tag: 'debug' }) as LogEvent[];
        env.screen.print(h(TreeView, { events }));
        if (!events.some((e) => e.type === 'breakpoint-hit')) return { ok: false, shown: oneLine(value), why: 'the run did not stop at tutor-hello' };
        return outcome(value, (v) => typeof v === 'string' && v.startsWith('Hello, Ada!'), 'expected the greeting after the pause');
      } finally {
        await rt.close();
      }
    },
  },
];

function outcome(value: unknown, ok: (v: unknown) => boolean, why: string): Outcome {
  return ok(value) ? { ok: true, shown: oneLine(value) } : { ok: false, shown: oneLine(value), why };
}

interface TutorState {
  done: string[];
}

export function stateFile(workspace: string): string {
  return path.join(workspace, '.agent-apps', 'tutor.json');
}

export function readState(workspace: string): TutorState {
  try {
    const s = JSON.parse(fs.readFileSync(stateFile(workspace), 'utf8')) as { done?: unknown };
    return { done: Array.isArray(s.done) ? s.done.filter((d): d is string => typeof d === 'string') : [] };
  } catch {
    return { done: [] };
  }
}

function writeState(workspace: string, state: TutorState): void {
  fs.mkdirSync(path.dirname(stateFile(workspace)), { recursive: true });
  fs.writeFileSync(stateFile(workspace), JSON.stringify({ version: 1, done: state.done, updated: new Date().toISOString() }, null, 2) + '\n');
}

/** Runs the tour; resolves with the ids of the steps done (this time and before). */
export async function runTutor(ctx: Context, o: TutorOptions): Promise<string[]> {
  const { screen } = o;
  const workspace = ctx.locals.config.workspace;
  const state = o.restart ? { done: [] } : readState(workspace);
  const env: StepEnv = {
    screen,
    workspace,
    async runtime(overrides) {
      const rt = await createRuntime({ cwd: workspace, interactive: true, asker: { ask: (q, signal) => screen.ask(q, signal) }, ...(overrides ? { overrides } : {}) });
      const internals = rt.root.globals.internals;
      internals.interactive = true;
      internals.progress = screen.progress;
      internals.breakpoint = (request: Parameters<Screen['pause']>[0], signal?: AbortSignal) => screen.pause(request, signal);
      return rt;
    },
  };
  const todo = STEPS.filter((s) => !state.done.includes(s.id));
  screen.print(
    h(
      Box,
      { flexDirection: 'column' },
      h(Line, { bold: true }, `agent-apps tutor — ${STEPS.length} steps in ${workspace}`),
      h(Line, { dim: true }, !todo.length ? 'All done before (--restart starts again).' : todo.length < STEPS.length ? `${STEPS.length - todo.length} done before; going on at “${todo[0]!.title}” (--restart starts again)` : 'Each step writes files under skills/tutor/, runs them and checks the outcome.'),
    ),
  );
  try {
    for (const step of todo) {
      const n = STEPS.indexOf(step) + 1;
      let choice = await ask(screen, h(StepView, { step, n, total: STEPS.length }));
      if (choice === 'quit') break;
      if (choice === 'skip') continue;
      screen.print(h(Line, { bold: true }, `${n}/${STEPS.length}  ${step.title}`));
      for (const [rel, text] of Object.entries(step.files)) writeFile(screen, workspace, rel, text);
      for (;;) {
        screen.setMain(h(Box, null, h(Spinner, { label: step.command })));
        let result: Outcome;
        try {
          result = await step.check(env);
        } catch (err) {
          screen.agentsDone();
          const { code, message } = errorLine(err);
          result = { ok: false, shown: `${code ? `[${code}] ` : ''}${message}`, why: 'it failed' };
        }
        screen.print(h(ResultView, { step, result }));
        if (result.ok) {
          state.done = [...new Set([...state.done, step.id])];
          writeState(workspace, state);
          break;
        }
        choice = await ask(screen, h(RetryView, null));
        if (choice !== 'go') break;
      }
      if (choice === 'quit') break;
    }
  } finally {
    screen.setMain(undefined);
  }
  const left = STEPS.filter((s) => !state.done.includes(s.id));
  screen.print(
    left.length
      ? h(Line, { dim: true }, `${STEPS.length - left.length}/${STEPS.length} steps done — agent-apps tutor goes on at “${left[0]!.title}”.`)
      : h(
          Box,
          { flexDirection: 'column' },
          h(Line, { bold: true }, `All ${STEPS.length} steps done. Next:`),
          h(Line, null, '  agent-apps repl                 run skills at a prompt (Tab completes)'),
          h(Line, null, '  agent-apps new NAME [--code]    a skill of your own'),
          h(Line, null, '  agent-apps tail                 what the last run did'),
          h(Line, null, '  agent-apps --help               every command; agent-apps COMMAND --help for one'),
          h(Line, { dim: true }, '  skills/tutor/ is yours to change or delete.'),
          ...docsLines(),
        ),
  );
  return state.done;
}

/**
 * Where to read on. The workspace has no docs/ of its own and a URL needs a network: the docs that
 * came with agent-apps (the package ships docs/, see docs/terminal.md, The tutor) are on this
 * disk. The path is a line of its own, wrapped rather than cut, so it can be copied whole.
 */
function docsLines(): Element[] {
  const docs = path.join(PACKAGE_ROOT, 'docs');
  if (!fs.existsSync(path.join(docs, 'concepts.md'))) return [h(Line, { key: 'help', dim: true }, '  agent-apps --help is the reference, offline.')];
  return [h(Line, { key: 'docs', dim: true }, '  The docs came with agent-apps — concepts.md, middleware.md, agents.md, cli.md … in'), h(Text, { key: 'path' }, `  ${docs}${path.sep}`)];
}

function writeFile(screen: Screen, workspace: string, rel: string, text: string): void {
  const file = path.join(workspace, rel);
  const exists = fs.existsSync(file);
  if (!exists) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
  const lines = (exists ? fs.readFileSync(file, 'utf8') : text).replace(/\n+$/, '').split('\n');
  screen.print(
    h(
      Box,
      { flexDirection: 'column' },
      h(Line, { bold: true }, `${exists ? '·' : '+'} ${rel}${exists ? ' (already there: kept as it is)' : ''}`),
      ...lines.map((l, i) => h(Line, { key: i, dim: true }, `  │ ${l}`)),
    ),
  );
}

type Choice = 'go' | 'skip' | 'quit';

function ask(screen: Screen, el: Element): Promise<Choice> {
  return new Promise((resolve) => {
    screen.setMain(h(Keys, { onChoice: resolve }, el));
  });
}

/** Reads Enter / s / q (Ctrl-C: q) while its part has the focus. */
function Keys(props: { onChoice(c: Choice): void; children?: React.ReactNode }): Element {
  const focus = React.useContext(FocusContext);
  useInput(
    (input, key) => {
      if (key.return) props.onChoice('go');
      else if (input === 's' || input === 'S') props.onChoice('skip');
      else if (input === 'q' || input === 'Q' || (key.ctrl && input === 'c')) props.onChoice('quit');
    },
    { isActive: focus === 'main' },
  );
  return h(Box, { flexDirection: 'column' }, props.children);
}

function StepView(props: { step: Step; n: number; total: number }): Element {
  const theme = useTheme();
  const { step } = props;
  const files = Object.keys(step.files);
  return h(
    Box,
    { flexDirection: 'column', marginTop: 1 },
    h(Line, { bold: true, color: theme.accent }, `${props.n}/${props.total}  ${step.title}`),
    h(Text, null, step.text.join(' ')),
    files.length ? h(Line, { dim: true }, `writes ${files.join(', ')}`) : null,
    h(Line, { dim: true }, `the same as: ${step.command}`),
    h(KeyHints, { keys: [['Enter', 'do it'], ['s', 'skip'], ['q', 'leave (progress is kept)']] }),
  );
}

function RetryView(): Element {
  return h(KeyHints, { keys: [['Enter', 'try again'], ['s', 'skip this step'], ['q', 'leave']] });
}

function KeyHints(props: { keys: [string, string][] }): Element {
  const theme = useTheme();
  return h(Text, { wrap: 'truncate-end' }, ...props.keys.flatMap(([k, v], i) => [h(Text, { key: `k${i}`, color: theme.key, bold: true }, k), h(Text, { key: `v${i}` }, ` ${v}   `)]));
}

function ResultView(props: { step: Step; result: Outcome }): Element {
  const theme = useTheme();
  const { result } = props;
  return h(
    Box,
    { flexDirection: 'column' },
    h(Line, { color: result.ok ? theme.ok : theme.error }, `${result.ok ? '✓' : '✗'} ${props.step.command.split('   then   ').pop()}  →  ${result.shown}`),
    result.why ? h(Line, { color: theme.error }, `  ${result.why}`) : null,
  );
}

function TreeView(props: { events: LogEvent[] }): Element {
  const theme = useTheme();
  return h(
    Box,
    { flexDirection: 'column' },
    ...treeLines(buildTree(props.events)).map((l, i) =>
      h(
        Text,
        { key: i, wrap: 'truncate-end' },
        '  '.repeat(l.depth),
        h(Text, { color: l.node.kind === 'pipeline' ? theme.accent : l.node.kind === 'break' ? theme.warn : undefined }, `${l.node.kind === 'pipeline' ? '▸' : l.node.kind === 'break' ? '⏸' : '·'} ${l.node.label}`),
        h(Text, { dimColor: true }, l.ms !== undefined ? ` ${l.ms.toFixed(3)} ms` : ''),
      ),
    ),
  );
}
