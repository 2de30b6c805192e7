// The contract between `agent-apps serve` and its gateways (docs/serve.md): a gateway turns what
// arrives on a transport (an HTTP route, a signed webhook, a WebSocket frame, a mail) into a
// `dispatch` — which emits `gateway-message` and runs the route's skill as an untrusted caller
// (src/policy/untrusted.ts) with `nonlocals.gateway = { name, type, reply }` — and answers on the
// transport. The serve surface owns the shared HTTP listener, the drain and the runtime.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { JsonObject } from '../../core/types.ts';
import type { Runtime } from '../../runtime.ts';
import type { Claims } from '../../events/claims.ts';
import type { ApprovalBroker } from '../../policy/remote-approval.ts';

/** What the web gateway puts on `nonlocals.request` (the raw `res` for streaming). */
export interface RequestInfo {
  method: string;
  path: string;
  params: Record<string, string>;
  query: Record<string, string | string[]>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  ip: string;
  res?: ServerResponse;
}

/** One inbound message, as a gateway hands it to the serve surface. */
export interface InboundMessage {
  /** The route's skill (a bare name; the policy checks it with the route's skill as the allow-list). */
  skill: string;
  /** The skill's args, as the transport gave them (data only: `$`-keys are refused by the policy). */
  args: JsonObject;
  /** The transport's fields, for the `gateway-message` event's `data`. */
  data: JsonObject;
  /** Answers on the transport (`nonlocals.gateway.reply`): a text or an object. */
  reply?: (value: unknown) => void | Promise<void>;
  /** The web gateway's request (`nonlocals.request`). */
  request?: RequestInfo;
  /** Aborted when the sender goes away (the connection closed) or the serve process stops. */
  signal?: AbortSignal;
  /** Extra skills the sender may name (a websocket route with `skills: [a, b]`): the allow-list. */
  allow?: string;
  /** Where it came from, for its run's approval gates (GateRun.origin): a Slack message's thread. */
  origin?: Readonly<Record<string, string>>;
  /** The sender's W3C traceparent (an HTTP `traceparent` header): the message's span goes under it (docs/ci.md, "Tracing"). */
  traceparent?: string;
}

export interface GatewayContext {
  runtime: Runtime;
  /** The gateway's name (its key under `gateways:`). */
  name: string;
  /** Its type: web, webhook, websocket, email, slack. */
  type: string;
  /** Its entry under `gateways:`, interpolated. */
  config: JsonObject;
  /** Where it was configured, for E_CONFIG messages: the main's file and `gateways.NAME`. */
  place: { file?: string; key: string };
  /** Whether the shared listener is on a loopback address (`verify: none` is allowed only there). */
  loopback: boolean;
  /** One line on the serve process's stderr. */
  log(level: 'info' | 'warn' | 'error', text: string): void;
  /** Runs a message through the pipeline as an untrusted caller; resolves with the skill's result. */
  dispatch(message: InboundMessage): Promise<unknown>;
  /**
   * Counts work of the gateway's that goes on after its HTTP answer and outside a dispatch (the
   * slack gateway posts a run's result once it returns), so that the drain waits for it too.
   * Absent (a test's context): the work is not counted.
   */
  track?<T>(work: Promise<T>): Promise<T>;
  /**
   * Who handles what (a webhook's delivery id): shared by every serve of a NATS namespace, else
   * this process's (src/events/claims.ts). Absent: the gateway keeps its own.
   */
  claims?: Claims;
  /**
   * Remote approvals (docs/serve.md), when the main configures `approvals:`: a gateway that can
   * carry them (email, slack, web) registers its channel under its name (`register(name, …)`) and
   * passes each verified answer to `answer()`. Absent when no `approvals:` is configured.
   */
  approvals?: ApprovalBroker;
  /**
   * `approvals.via`: the gateway the main's approvals go through. The one it names must be able to
   * carry them (email: an outbound relay) and says so as an E_CONFIG naming its own key.
   */
  approvalsVia?: string;
}

/** A gateway's hooks on the shared HTTP listener, or a listener of its own. */
export interface Gateway {
  /** Answers an HTTP request that is this gateway's (returns true), or leaves it (false). */
  http?(req: IncomingMessage, res: ServerResponse, url: URL): boolean | Promise<boolean>;
  /** Takes a WebSocket upgrade that is this gateway's (returns true). */
  upgrade?(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Starts a listener of its own (email's SMTP); resolves with the lines to print ("… on 127.0.0.1:2525"). */
  start?(): Promise<string[]>;
  /** Stops taking messages (the drain); what runs goes on. */
  close(): Promise<void>;
}

export type GatewayFactory = (ctx: GatewayContext) => Gateway | Promise<Gateway>;
