// Emits dist/ with tsc (tsconfig.build.json) and stamps it, so bin/agent-apps.js knows whether
// the build is current. Built-in skills stay TypeScript in skills/ and run by type stripping.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
fs.writeFileSync(path.join(root, 'dist', '.build-stamp'), new Date().toISOString() + '\n');
console.log('built dist/');
