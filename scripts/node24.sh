# Source me: puts Node >= 24 on PATH — the system's if it is new enough, otherwise node@24
# installed from the npm registry into .node24/ in this checkout (docs/ci.md).
_aa_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Node (and so npm) trusts only the certificates it carries, not the system's: behind a TLS proxy
# whose certificate the system trusts (a company's, a sandbox's) every registry request fails and
# is retried for minutes. The system's bundle, where there is one, is added (docs/ci.md, "From a
# fresh shell"); a NODE_EXTRA_CA_CERTS already set is left as it is.
if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r /etc/ssl/certs/ca-certificates.crt ]; then
  export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
fi
_aa_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$_aa_major" -lt 24 ]; then
  if [ ! -x "$_aa_root/.node24/node_modules/.bin/node" ]; then
    echo "Node $(node --version 2>/dev/null || echo '(none)') is older than 24: installing node@24 from the npm registry into .node24/" >&2
    npm install --prefix "$_aa_root/.node24" --no-audit --no-fund --loglevel=error node@24 >&2
  fi
  # npm's global prefix follows the node binary it runs on (the folder above its bin/), which for
  # this Node is .node24/node_modules/node: `npm link` and `npm install -g` put their commands in
  # its bin/, so that folder goes on PATH too, or `agent-apps` would be linked where no shell looks.
  export PATH="$_aa_root/.node24/node_modules/node/bin:$_aa_root/.node24/node_modules/.bin:$PATH"
fi
unset _aa_major
