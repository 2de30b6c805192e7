// `agent-apps serve` (docs/serve.md): the workspace's gateways, schedules and event routes in one
// long-running process. The surface (src/surfaces/serve/) is imported only when the command runs.
import type { Command } from 'commander';
import { globalsOf } from '../shared/runtime-options.ts';
import type { CliIO } from '../shared/io.ts';

export function registerServe(program: Command, io: CliIO): void {
  program
    .command('serve')
    .description('run the workspace’s gateways (web, webhook, websocket, email, slack), schedules and event routes until SIGTERM / SIGINT')
    .option('--http <[host:]port>', 'the shared HTTP listener (default 127.0.0.1:8808); GET /healthz answers there')
    .option('--token-file <path>', 'read the bearer token clients must send from this file (default: AGENT_APPS_SERVE_TOKEN); a token is required off loopback')
    .option('--token <token>', 'the bearer token itself — visible to other local users in the process list: prefer --token-file or AGENT_APPS_SERVE_TOKEN')
    .option('--drain-ms <n>', 'on a signal, how long running requests may finish before they are aborted (default 10000)')
    .option('--max-ms <n>', 'time limit of one request; past it the run is aborted with E_TIMEOUT (default 600000)')
    .addHelpText(
      'after',
      `
Gateways are configured under \`gateways:\` in the workspace's main (skills/main.md), e.g.

  gateways:
    api:
      type: web
      routes:
        - { method: GET, path: /orders/:id, skill: order-get }
        - { method: POST, path: /orders, skill: order-create }
    github:
      type: webhook                 # POST /hooks/github, verified before anything runs
      verify: github                # github | slack | hmac-sha256 | none (loopback only)
      secretEnv: GITHUB_WEBHOOK_SECRET
      skill: on-push
    live:
      type: websocket               # /ws/live: text frames in, JSON frames out
      skill: chat
    team:
      type: slack                   # POST /slack/team/events and /slack/team/interactivity
      signingSecretEnv: SLACK_SIGNING_SECRET
      tokenEnv: SLACK_BOT_TOKEN     # replies go in the message's thread
      channels: [C0123]
      skill: helper
  approvals: { via: team, approvers: [U0BOSS] }   # approval gates as Slack buttons to U0BOSS

Every inbound message emits \`gateway-message\` on the event bus, then runs its route's skill as an
untrusted caller (docs/security.md): args are data only ($-keys refused), refs by bare name, and
the route's skill is the only one a sender may reach. A web route's args are its query, JSON body
and path params; error codes map to statuses (E_VALIDATION 400, E_DENIED / E_ALLOWED_TOOLS /
E_UNTRUSTED_REF 403, E_TIMEOUT 504, others 500; unknown route 404). With
\`Accept: text/event-stream\` the run's log events stream as SSE before a final \`result\` event.

Schedules (schedule-create, or a skill's own \`schedule:\` key) fire only while serve runs; each
fire is a run that \`agent-apps runs\` lists with TRIGGER \`schedule NAME\`. With
\`events: { backend: nats }\` the schedules live in NATS KV and several serve processes share the
work: each fire and each webhook delivery is handled by one of them (docs/serve.md).

Examples:
  $ agent-apps serve                                       127.0.0.1:8808
  $ agent-apps serve --http 127.0.0.1:0                    any free port (printed on stderr)
  $ agent-apps serve --http 0.0.0.0:8808 --token-file ~/.config/agent-apps/serve-token
  $ AGENT_APPS_SERVE_TOKEN=s3cret agent-apps serve --http 0.0.0.0:8808
  $ curl -s http://127.0.0.1:8808/orders/42?full=1
  $ curl -N -H 'Accept: text/event-stream' http://127.0.0.1:8808/orders/42
  $ agent-apps run schedule-create --name nightly --cron '0 3 * * *' --timezone Europe/Berlin --ref report
  $ agent-apps run schedule-list
  $ agent-apps runs                                        fires show TRIGGER 'schedule nightly'

Exit codes: 0 after SIGTERM (once drained), 130 SIGINT, 2 usage or configuration error (a port
in use, a non-loopback --http without a token).`,
    )
    .action(async (opts: { http?: string; token?: string; tokenFile?: string; drainMs?: string; maxMs?: string }, cmd: Command) => {
      const { serve: run } = await import('../serve/serve.ts');
      (program as Command & { exitCodeOverride?: number }).exitCodeOverride = await run(opts, globalsOf(cmd), io);
    });
}
