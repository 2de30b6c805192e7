import { readFileSync } from 'node:fs';

// Read, not required: a require would start Node's CommonJS loader on every start, for one JSON file.
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
