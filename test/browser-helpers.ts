// A real headless browser for the tests of what serve shows a person (docs/serve.md, "The web
// view"): Debian's `chromium`, driven by playwright-core over the DevTools protocol — no browser
// download, the system's binary by path. .ci/run installs chromium when it is missing; without it
// the browser suites skip, saying why (as the NATS suites do without nats-server).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import type { Owner } from './serve-helpers.ts';

function findChromium(): string | undefined {
  const given = process.env.AGENT_APPS_TEST_CHROMIUM;
  if (given) return fs.existsSync(given) ? given : undefined;
  for (const name of ['chromium', 'chromium-browser']) {
    const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    const found = r.status === 0 ? r.stdout.trim() : '';
    if (found) return found;
  }
  return undefined;
}

/** The chromium binary the browser tests use: AGENT_APPS_TEST_CHROMIUM, else `chromium` on PATH. */
export const chromiumPath: string | undefined = findChromium();

/** Why the browser tests skip here, or undefined when chromium is installed (CI installs it). */
export const browserSkip: string | undefined = chromiumPath ? undefined : 'chromium is not installed (apt-get install chromium; .ci/run installs it) — the web view tests need a real browser';

/** Headless chromium, closed when `t` ends. As root (CI) its sandbox cannot start: --no-sandbox. */
export async function launchBrowser(t: Owner): Promise<Browser> {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const browser = await chromium.launch({ executablePath: chromiumPath!, headless: true, args: [...(root ? ['--no-sandbox'] : []), '--disable-dev-shm-usage'] });
  t.after(() => browser.close());
  return browser;
}
