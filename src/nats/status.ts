// `agent-apps worker --status` (docs/scale.md): per work queue, the requests pending and running,
// the workers seen in the last 30 s (their heartbeats), and its dead letters.
import type { Nats } from './nats.ts';
import { isNotFound } from './nats.ts';
import type { WorkerBeat } from './work-queue.ts';

export const SEEN_MS = 30_000;

export interface QueueStatus {
  queue: string;
  /** Requests not yet delivered to any worker. */
  pending: number;
  /** Delivered and not yet acked: running (or held by a worker that died, until the ack wait). */
  running: number;
  workers: WorkerBeat[];
  /** This queue's dead letters (agent-apps.<ns>.dead.<queue>). */
  dead: number;
}

export interface WorkStatus {
  url: string;
  namespace: string;
  queues: QueueStatus[];
  /** All dead letters, those from before per-queue subjects (agent-apps.<ns>.dead) included. */
  dead: number;
  deadSubject: string;
}

export async function workStatus(nats: Nats): Promise<WorkStatus> {
  const { jsm, names, config } = nats;
  const queues = new Map<string, QueueStatus>();
  const queue = (name: string): QueueStatus => {
    let q = queues.get(name);
    if (!q) queues.set(name, (q = { queue: name, pending: 0, running: 0, workers: [], dead: 0 }));
    return q;
  };
  try {
    for await (const c of await jsm.consumers.list(names.stream('invoke'))) {
      if (!c.name.startsWith('worker_')) continue;
      const q = queue(c.name.slice('worker_'.length));
      q.pending = c.num_pending;
      q.running = c.num_ack_pending;
    }
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    const stream = names.stream('workers');
    const info = await jsm.streams.info(stream, { subjects_filter: `${names.prefix}.workers.>` });
    const now = Date.now();
    for (const subject of Object.keys(info.state.subjects ?? {})) {
      const msg = await jsm.streams.getMessage(stream, { last_by_subj: subject });
      if (!msg) continue;
      const beat = msg.json<WorkerBeat>();
      if (beat.stopped || now - beat.ts > SEEN_MS) continue;
      queue(beat.queue).workers.push(beat);
    }
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  let dead = 0;
  try {
    const info = await jsm.streams.info(names.stream('dead'), { subjects_filter: `${names.dead}.>` });
    dead = info.state.messages;
    for (const [subject, n] of Object.entries(info.state.subjects ?? {})) queue(subject.slice(names.dead.length + 1)).dead = n;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const list = [...queues.values()].sort((a, b) => a.queue.localeCompare(b.queue));
  for (const q of list) q.workers.sort((a, b) => a.id.localeCompare(b.id));
  return { url: config.url ?? '', namespace: config.namespace, queues: list, dead, deadSubject: names.dead };
}
