// What the model is sent, as a cassette keeps it (docs/ci.md): a recorded turn stores the sha256 of
// its request — the system prompt, the tool specs and the messages (so the args, the earlier
// turns and the tool results too) — and the request as readable text, for the diff replay shows
// when the request it is about to answer is not the one recorded (E_CASSETTE_DRIFT).
//
// Both come from one list of sections, so a hash that differs always has a text that differs
// (the hash is over the JSON of the sections, which no section's text can forge). What a replay
// cannot reproduce is left out: tool-use ids (the live server's), reasoning text and cache
// points. The model's own turns are written as the cassette writes them — their text, then the
// code of their `invoke` calls joined — so a replayed conversation renders as the recorded one.
// The skill's folder and the working directory are written `<skill-dir>` and `<cwd>`: a cassette
// recorded in one checkout replays in another.

import { createHash } from 'node:crypto';
import type { Message, StreamOptions } from '@strands-agents/sdk';

export interface RequestSection {
  /** `system`, `tool NAME`, `user` or `assistant`. */
  head: string;
  text: string;
}

export interface RenderedRequest {
  sections: RequestSection[];
  /** The sections as text, one `=== head ===` line before each. */
  text: string;
  /** sha256 (hex) of the sections' JSON. */
  sha256: string;
}

export interface RequestPaths {
  /** The skill's folder (`model.baseDir`). */
  baseDir?: string | undefined;
  /** The working directory (default: process.cwd()). */
  cwd?: string | undefined;
}

/** The request `messages` + `options` as a cassette records it. */
export function renderRequest(messages: readonly Message[], options: StreamOptions | undefined, paths: RequestPaths = {}): RenderedRequest {
  const sections: RequestSection[] = [];
  const system = systemText(options?.systemPrompt);
  if (system) sections.push({ head: 'system', text: system });
  for (const spec of options?.toolSpecs ?? []) {
    const schema = spec.inputSchema === undefined ? '' : `\ninput: ${JSON.stringify(spec.inputSchema)}`;
    sections.push({ head: `tool ${spec.name}`, text: `${spec.description ?? ''}${schema}` });
  }
  for (const m of messages) sections.push({ head: m.role, text: messageText(m) });
  const normal = normalizer(paths);
  for (const s of sections) s.text = normal(s.text);
  const sha256 = createHash('sha256').update(JSON.stringify(sections)).digest('hex');
  return { sections, text: sections.map((s) => `=== ${s.head} ===\n${s.text}\n`).join(''), sha256 };
}

function systemText(sp: StreamOptions['systemPrompt']): string {
  if (typeof sp === 'string') return sp;
  if (!Array.isArray(sp)) return '';
  return sp.map((b) => (b.type === 'textBlock' ? b.text : '')).join('');
}

function messageText(m: Message): string {
  let text = '';
  const codes: string[] = [];
  const rest: string[] = [];
  for (const block of m.content) {
    switch (block.type) {
      case 'textBlock':
        text += block.text;
        break;
      case 'toolUseBlock': {
        const code = (block.input as { code?: unknown } | null)?.code;
        if (block.name === 'invoke' && typeof code === 'string') codes.push(code);
        else rest.push(`[tool ${block.name}]\n${json(block.input)}`);
        break;
      }
      case 'toolResultBlock': {
        const content = block.content.map((c) => (c.type === 'textBlock' ? c.text : c.type === 'jsonBlock' ? json(c.json) : `[${c.type}]`)).join('\n');
        rest.push(`[tool result: ${block.status}]\n${content}`);
        break;
      }
      case 'reasoningBlock':
      case 'cachePointBlock':
        break;
      default:
        rest.push(`[${block.type}]`);
    }
  }
  const parts: string[] = [];
  if (text) parts.push(text);
  if (codes.length) parts.push(`[invoke]\n${codes.join('\n')}`);
  parts.push(...rest);
  return parts.join('\n');
}

function normalizer(paths: RequestPaths): (s: string) => string {
  const pairs: [string, string][] = [];
  const cwd = paths.cwd ?? process.cwd();
  if (paths.baseDir && paths.baseDir.length > 1) pairs.push([paths.baseDir, '<skill-dir>']);
  if (cwd.length > 1 && cwd !== paths.baseDir) pairs.push([cwd, '<cwd>']);
  pairs.sort((a, b) => b[0].length - a[0].length);
  return (s) => pairs.reduce((acc, [from, to]) => acc.split(from).join(to), s);
}

function json(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/**
 * What a cassette turn stores of its request: its hash, and its text — whole (`text`), or only
 * what it adds to the previous turn's request (`more`) when it starts with that, which it does
 * unless the conversation was trimmed (model.contextEdit).
 */
export interface RecordedRequest {
  sha256: string;
  text?: string;
  more?: string;
}

export function recordRequest(now: RenderedRequest, previousText: string | undefined): RecordedRequest {
  if (previousText !== undefined && now.text.startsWith(previousText)) return { sha256: now.sha256, more: now.text.slice(previousText.length) };
  return { sha256: now.sha256, text: now.text };
}
