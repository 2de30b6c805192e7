#!/usr/bin/env bash
# A local cluster for `run --remote` (docs/scale.md): one nats-server with JetStream and two workers of
# the workspace you run it in. Ctrl-C stops all three (the workers drain first).
#   scripts/cluster.sh [PORT]      then, in another shell in the same workspace:
#   AGENT_APPS_EVENTS=nats://127.0.0.1:4222 agent-apps run greet --name Ada --remote
set -euo pipefail
PORT="${1:-4222}"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
STORE="${AGENT_APPS_NATS_STORE:-$PWD/.agent-apps/nats}"
command -v nats-server >/dev/null || { echo "nats-server is not installed: apt-get install nats-server" >&2; exit 2; }
mkdir -p "$STORE"
nats-server -js -a 127.0.0.1 -p "$PORT" -sd "$STORE" >"$STORE/server.log" 2>&1 &
SERVER=$!
export AGENT_APPS_EVENTS="nats://127.0.0.1:$PORT"
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
node "$HERE/bin/agent-apps.js" worker &
W1=$!
node "$HERE/bin/agent-apps.js" worker &
W2=$!
stop() {
  kill -TERM "$W1" "$W2" 2>/dev/null || true
  wait "$W1" "$W2" 2>/dev/null || true
  kill -TERM "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
}
trap stop INT TERM EXIT
echo "cluster: nats-server on $AGENT_APPS_EVENTS (store $STORE), workers $W1 and $W2 — Ctrl-C stops" >&2
wait "$W1" "$W2"
