#!/usr/bin/env bash
# Schemathesis (property-based testing of the served OpenAPI document) against a fresh lnk: a new SQLite data
# directory, a server on a loopback port, a bootstrapped key, then `schemathesis run` with every check.
#
# Usage: scripts/schemathesis.sh [extra schemathesis run arguments]
#   SCHEMATHESIS  the schemathesis 4 executable (default: schemathesis on PATH). To get one:
#                   python3 -m venv /tmp/st && /tmp/st/bin/pip install 'schemathesis>=4,<5'
#                   SCHEMATHESIS=/tmp/st/bin/schemathesis scripts/schemathesis.sh
#   ST_EXAMPLES   examples per operation (default 30); ST_WORKERS: concurrent workers (default 2)
#   ST_PORT       the server's port inside the namespace (default 8080)
#   ST_REPORT     a directory for Schemathesis's JUnit reports (default: none)
#   ST_SERVER_LOG a file to copy the server's log to (default: none)
#
# Everything runs in a network namespace of its own with only a loopback interface: webhook creation accepts
# public URLs and lnk would dial them (test pings, deliveries), and nothing here may reach another machine.
# The script re-runs itself inside `unshare -n` (with -r when not root: a user namespace maps us to root).
#
# No --url is passed on purpose: the document's servers decide where each call goes. /v1 operations go to
# servers[0] (LNK_BASE_URL/v1), and the few routes outside /v1 (/healthz, /readyz, /metrics,
# /.well-known/lnk/{token}, /internal/tls/ask) carry the origin as their own path-level server, which
# Schemathesis honours only when --url does not override every server. So the run also checks that the
# document sends each call to the place the server answers it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)

if [ -z "${LNK_ST_IN_NAMESPACE:-}" ]; then
  st=${SCHEMATHESIS:-$(command -v schemathesis || true)}
  if [ -z "$st" ] || [ ! -x "$st" ]; then
    echo "schemathesis not found: set SCHEMATHESIS to a schemathesis 4 executable (see the top of $0)" >&2
    exit 2
  fi
  flags=-n
  [ "$(id -u)" = 0 ] || flags=-rn
  LNK_ST_IN_NAMESPACE=1 SCHEMATHESIS=$st exec unshare $flags -- "$0" "$@"
fi

ip link set lo up
port=${ST_PORT:-8080}
base="http://127.0.0.1:$port"
data=$(mktemp -d "${TMPDIR:-/tmp}/lnk-schemathesis-XXXXXX")
log="$data/server.log"
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    # A graceful stop takes up to LNK_SHUTDOWN_TIMEOUT_SECONDS; wait for it, bounded.
    for _ in $(seq 1 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$server" 2>/dev/null || true
  fi
  rm -rf "$data"
}
trap cleanup EXIT

cd "$root"
LNK_DATA_DIR=$data LNK_LOG_LEVEL=${LNK_LOG_LEVEL:-warn} bun run src/main.ts serve --port "$port" --host 127.0.0.1 --base-url "$base" >"$log" 2>&1 &
server=$!

# Ready within 30 s, or give up showing the server's log.
for i in $(seq 1 150); do
  if curl -fsS -o /dev/null "$base/readyz" 2>/dev/null; then break; fi
  if ! kill -0 "$server" 2>/dev/null || [ "$i" = 150 ]; then
    echo "lnk did not become ready on $base:" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 0.2
done

# A key's id and secret from the admin commands' JSON; its rate raised to the most a key may have, because a
# run sends far more than the default 600 a minute and a 429 would count as refusing a valid request.
key_of() { bun -e 'const j = JSON.parse(await Bun.stdin.text()); const k = j.apiKey ?? j; console.log(k.id, k.key)'; }
fast() { (cd "$root" && bun run src/main.ts admin update-key "$1" --rate-limit 100000 --data-dir "$data" >/dev/null); }
read -r key_id key < <(bun run src/main.ts admin bootstrap --email schemathesis@example.com --workspace Schemathesis --json --data-dir "$data" | key_of)
fast "$key_id"

# Two passes. The key Schemathesis calls with is one of the keys it lists, and the key actions (PATCH,
# pause, revoke, rotate on /api-keys/{id}) change it: narrowed permissions, a schedule, a pause or a revocation
# would turn every later call into 401/403 and test nothing. So the first pass leaves them out, and the
# second runs the API key routes alone, with a key of their own.
report() { [ -n "${ST_REPORT:-}" ] && echo --report junit --report-dir "$(realpath -m "$ST_REPORT")/$1"; true; }
keys='^/api-keys/\{id\}'

# From the temporary directory: Schemathesis and Hypothesis keep their caches (.schemathesis, .hypothesis)
# in the working directory, and they must not land in the checkout.
cd "$data"
status=0
run() {
  "$SCHEMATHESIS" run "$base/v1/openapi.json" -H "Authorization: Bearer $1" \
    --checks all --workers "${ST_WORKERS:-2}" --max-examples "${ST_EXAMPLES:-30}" "${@:2}" || status=1
}
echo "== pass 1 of 2: every operation but the actions on one API key"
run "$key" --exclude-path-regex "$keys" $(report everything-else) "$@"
echo "== pass 2 of 2: the API key routes"
read -r key2_id key2 < <(cd "$root" && bun run src/main.ts admin create-key --workspace schemathesis --name 'Key routes' --json --data-dir "$data" | key_of)
fast "$key2_id"
run "$key2" --include-path-regex '^/api-keys' $(report api-keys) "$@"
[ -z "${ST_SERVER_LOG:-}" ] || cp "$log" "$ST_SERVER_LOG"
exit "$status"
