// A real `nats-server -js` for tests (SPEC §19): on 127.0.0.1, a free port, a temporary store;
// stopped (and its store removed) by `stop()`. `restart()` stops it and starts it again on the
// same port and store, as an operator restarting the server would.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Why the NATS tests skip here, or undefined when `nats-server` is installed (CI installs it). */
export const natsSkip: string | undefined = spawnSync('nats-server', ['--version'], { encoding: 'utf8' }).error
  ? 'nats-server is not installed (apt-get install nats-server; .ci/run installs it)'
  : undefined;

export interface NatsServer {
  url: string;
  port: number;
  storeDir: string;
  /** SIGTERM, wait for the exit; the store stays (for restart). */
  halt(): Promise<void>;
  /** Halt, then start again on the same port and store. */
  restart(): Promise<void>;
  /** Halt and remove the store. */
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = tcpConnect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

/** `extra`: more nats-server options — `--user U --pass P`, `--auth TOKEN`, `--tls …`, `-c FILE`. */
export async function startNats(extra: string[] = []): Promise<NatsServer> {
  const port = await freePort();
  const storeDir = mkdtempSync(path.join(tmpdir(), 'agent-apps-nats-'));
  let child: ChildProcess | undefined;
  let log = '';

  const launch = async (): Promise<void> => {
    log = '';
    const c = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
    c.stderr!.on('data', (d: Buffer) => void (log += d.toString()));
    child = c;
    const until = Date.now() + 15_000;
    while (Date.now() < until) {
      if (c.exitCode !== null) throw new Error(`nats-server exited (${c.exitCode}): ${log.slice(-2000)}`);
      // Ready once it listens and JetStream is up ("Server is ready" comes after both).
      if (/Server is ready/.test(log) && (await portOpen(port))) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    c.kill('SIGKILL');
    throw new Error(`nats-server did not start on port ${port}: ${log.slice(-2000)}`);
  };

  const halt = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };

  await launch();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    halt,
    async restart() {
      await halt();
      await launch();
    },
    async stop() {
      await halt();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
