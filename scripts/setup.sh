#!/usr/bin/env bash
# One command from a fresh clone: Node 24 if needed, dependencies, build, and a first run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node24.sh
echo "node $(node --version)" >&2
# npm ci builds too: it runs the `prepare` script. Build here only if it did not (ignore-scripts set).
before="$(mktemp)"
npm ci --no-audit --no-fund --loglevel=error
[ dist/.build-stamp -nt "$before" ] || npm run build --silent
rm -f "$before"
echo >&2
echo '$ agent-apps --cwd examples/hello run greet --name Ada' >&2
./bin/agent-apps.js --cwd examples/hello run greet --name Ada
echo >&2
echo '$ agent-apps --cwd examples/hello run summarize --text "…"    # an agent skill, replayed offline' >&2
./bin/agent-apps.js --cwd examples/hello run summarize --text "Skills are small tools written as Markdown prompts or TypeScript modules, run through one kernel."
