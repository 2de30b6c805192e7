// `model.record` for the ACP providers: the run's cassette, written with agent-strands' own writer
// (the standard format, docs/agents.md) after every turn — atomically, so a run that dies midway still
// leaves the turns it had.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CassetteEntry } from 'agent-apps/agent';
import { stringifyCassette } from '../strands/cassette.ts';

export function writeCassette(file: string, entries: CassetteEntry[]): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, stringifyCassette({ turns: entries }));
  renameSync(tmp, file);
}
