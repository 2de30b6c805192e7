/**
 * The bus as the event skills see it (docs/events.md, docs/scale.md): one interface, two backends — the in-memory
 * `EventBus` of this process (the default) and JetStream (`events: { backend: nats }`, see
 * nats-bus.ts). Every method is asynchronous because the second one talks to a server; the
 * in-memory one answers at once.
 *
 * What the backends share is the contract the suite test/nats-bus-contract.test.ts runs on both:
 * named queues are consumer groups, `wait` drains or blocks, `ack: false` keeps events pending
 * until `ack` (nack: back at the front, in order), `replay` fills a new queue or handler from the
 * retained events, subscribing again is a no-op.
 */
import type { Event } from '../core/types.ts';
import type { AckInput, AckResult, EmitInput, EventBus, SubscribeInput, SubscribeResult, UnsubscribeInput, WaitInput } from './bus.ts';

export interface EmitResult {
  event: Event;
  /** Settles when the handlers this emit started in this process have settled (never rejects). */
  dispatched: Promise<void>;
}

export interface RequeueInput {
  topic: string;
  queue?: string;
  events: readonly Event[];
  ack?: boolean;
}

export interface Bus {
  readonly backend: 'memory' | 'nats';
  emit(input: EmitInput): Promise<EmitResult>;
  subscribe(input: SubscribeInput): Promise<SubscribeResult>;
  unsubscribe(input: UnsubscribeInput): Promise<{ removed: number }>;
  wait(input: WaitInput): Promise<Event[]>;
  ack(input: AckInput): Promise<AckResult>;
  /**
   * For `event-wait`: the events `wait` returned go back to their queue if `signal` aborts before
   * the caller has them (docs/security.md) — at once, throwing AbortError, if it already has.
   */
  requeueOnAbort(input: RequeueInput, signal: AbortSignal): void;
  /** The events this process took with `ack: false` and has not acked yet, in delivery order. */
  pending(topic: string, queue?: string): Event[];
  /** How many events each topic retains for `replay` (the `event` middleware's bufferSize). */
  setBufferSize(size: number): Promise<void>;
  /** Stops taking events; what this process holds un-acked goes back. */
  close(): Promise<void>;
}

/** The in-memory bus behind the interface: each call is the synchronous EventBus call. */
export class MemoryBus implements Bus {
  readonly backend = 'memory' as const;
  readonly local: EventBus;

  constructor(local: EventBus) {
    this.local = local;
  }

  async emit(input: EmitInput): Promise<EmitResult> {
    return this.local.emit(input);
  }

  async subscribe(input: SubscribeInput): Promise<SubscribeResult> {
    return this.local.subscribe(input);
  }

  async unsubscribe(input: UnsubscribeInput): Promise<{ removed: number }> {
    return this.local.unsubscribe(input);
  }

  wait(input: WaitInput): Promise<Event[]> {
    try {
      return this.local.wait(input);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async ack(input: AckInput): Promise<AckResult> {
    return this.local.ack(input);
  }

  requeueOnAbort(input: RequeueInput, signal: AbortSignal): void {
    this.local.requeueOnAbort(input, signal);
  }

  pending(topic: string, queue?: string): Event[] {
    return this.local.pending(topic, queue);
  }

  async setBufferSize(size: number): Promise<void> {
    this.local.state.bufferSize = size;
  }

  async close(): Promise<void> {
    // runtime.close() clears the local bus itself, after the shutdown handlers had their time.
  }
}
