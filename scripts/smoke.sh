#!/usr/bin/env bash
# Smoke test of a built lnk executable, run the way an operator would: the binary copied alone into an
# empty directory, a bootstrap from the CLI, then `lnk serve` on a free loopback port, probed over HTTP,
# and stopped with SIGTERM.
#
# Usage: bash scripts/smoke.sh [path/to/lnk]        (default dist/lnk)
# Output: one `ok - …` / `not ok - …` line per check, then `SMOKE <passed> <failed>` on its own line.
# Exit status: 0 when every check passed, 1 otherwise. Needs bash and either bun or node (for fetch and
# JSON); nothing else (no curl, no jq). Set LNK_SMOKE_KEEP=1 to keep the temporary directory.
set -uo pipefail

binary=${1:-dist/lnk}

passed=0
failed=0
ok() {
  passed=$((passed + 1))
  echo "ok - $*"
}
not_ok() {
  failed=$((failed + 1))
  echo "not ok - $*"
}
# check DESCRIPTION COMMAND...: ok when the command succeeds; its stdout (if any) explains a failure.
check() {
  local what=$1 why
  shift
  if why=$("$@" 2>&1); then ok "$what"; else not_ok "$what${why:+ ($why)}"; fi
}

keep=${LNK_SMOKE_KEEP:-}
# The settings of whoever runs this must not leak into the run.
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^LNK_' || true)

js_runtime=$(command -v bun || command -v node || true)
if [[ -z $js_runtime ]]; then
  not_ok "bun or node is on PATH (needed for HTTP and JSON checks)"
  echo "SMOKE $passed $failed"
  exit 1
fi
js() { "$js_runtime" -e "$1"; }

if [[ ! -f $binary || ! -x $binary ]]; then
  not_ok "binary $binary exists and is executable"
  echo "SMOKE $passed $failed"
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lnk-smoke.XXXXXX")
cp "$binary" "$work/lnk"
cd "$work" || exit 1
data="$work/data"
server_pid=

cleanup() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null
    for _ in $(seq 1 30); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  cd / || true
  if [[ $keep == 1 ]]; then echo "# kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# http_get URL OUTFILE [KEY]: prints the status code (000 when no answer), writes the body to OUTFILE.
http_get() {
  URL=$1 OUT=$2 KEY=${3:-} js '
    const fs = require("fs")
    const headers = process.env.KEY ? { authorization: "Bearer " + process.env.KEY } : {}
    fetch(process.env.URL, { headers, signal: AbortSignal.timeout(5000) }).then(
      async (r) => { fs.writeFileSync(process.env.OUT, await r.text()); console.log(String(r.status)) },
      (e) => { fs.writeFileSync(process.env.OUT, String(e)); console.log("000") },
    )'
}

# json_check FILE EXPR: succeeds when EXPR (JavaScript, the parsed body is `j`) is truthy; otherwise
# prints the start of the body so the failure line says what came back.
json_check() {
  FILE=$1 EXPR=$2 js '
    const text = require("fs").readFileSync(process.env.FILE, "utf8")
    let j
    try { j = JSON.parse(text) } catch { console.log("not JSON: " + text.slice(0, 200)); process.exit(1) }
    let pass = false
    try { pass = Boolean(new Function("j", "return (" + process.env.EXPR + ")")(j)) } catch {}
    if (!pass) { console.log("body: " + text.slice(0, 300)); process.exit(1) }'
}

# snippet FILE...: the start of the files on one line, for failure messages.
snippet() { cat "$@" 2>/dev/null | head -c 300 | tr '\n\r\t' '   '; }

# status_is EXPECTED ACTUAL BODYFILE
status_is() {
  if [[ $2 == "$1" ]]; then return 0; fi
  echo "status $2, body: $(snippet "$3")"
  return 1
}

# --- CLI --------------------------------------------------------------------------------------------
code=0
./lnk --help >help.out 2>&1 || code=$?
if [[ $code == 0 ]] && grep -q 'Usage: lnk' help.out; then ok "lnk --help exits 0"; else not_ok "lnk --help exits 0 (exit $code)"; fi

code=0
./lnk admin bogus >bogus.out 2>&1 || code=$?
if [[ $code == 2 ]]; then ok "lnk admin bogus exits 2 (usage)"; else not_ok "lnk admin bogus exits 2 (exit $code)"; fi

key=
code=0
LNK_DATA_DIR="$data" ./lnk admin bootstrap --email smoke@example.com --workspace Smoke --json >bootstrap.json 2>bootstrap.err || code=$?
if [[ $code == 0 ]]; then
  key=$(FILE=bootstrap.json js '
    try { const k = JSON.parse(require("fs").readFileSync(process.env.FILE, "utf8")).apiKey.key; if (typeof k === "string") console.log(k) } catch {}')
fi
if [[ $key == lnk_live_* ]]; then
  ok "lnk admin bootstrap --json prints a live key"
else
  not_ok "lnk admin bootstrap --json prints a live key (exit $code: $(snippet bootstrap.json bootstrap.err))"
fi

# --- serve ------------------------------------------------------------------------------------------
port=$(js '
  const net = require("net")
  const s = net.createServer()
  s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
if [[ ! $port =~ ^[0-9]+$ ]]; then
  not_ok "found a free loopback port ($port)"
  port=1
fi
base="http://127.0.0.1:$port"

# Webhook targets on loopback are refused unless the operator opts in; the smoke receiver is one.
LNK_DATA_DIR="$data" LNK_HOST=127.0.0.1 LNK_PORT="$port" LNK_BASE_URL="$base" LNK_WEBHOOK_ALLOW_HTTP=true LNK_WEBHOOK_ALLOWED_CIDRS=127.0.0.0/8 \
  ./lnk serve >server.log 2>&1 &
server_pid=$!

ready=0
deadline=$((SECONDS + 20))
while ((SECONDS < deadline)); do
  kill -0 "$server_pid" 2>/dev/null || break
  if [[ $(http_get "$base/readyz" readyz.out) == 200 ]]; then
    ready=1
    break
  fi
  sleep 0.2
done
if [[ $ready == 1 ]]; then
  ok "lnk serve answers GET /readyz 200 (port $port)"
elif ! kill -0 "$server_pid" 2>/dev/null; then
  not_ok "lnk serve answers GET /readyz 200 (the server exited early)"
else
  not_ok "lnk serve answers GET /readyz 200 within 20 s"
fi

status=$(http_get "$base/healthz" healthz.out)
check "GET /healthz is 200" status_is 200 "$status" healthz.out

status=$(http_get "$base/v1/me" me.out "$key")
if status_is 200 "$status" me.out >/dev/null; then
  check "GET /v1/me with the key is 200, success, workspace slug smoke" \
    json_check me.out 'j.success === true && j.data && j.data.workspace && j.data.workspace.slug === "smoke"'
else
  not_ok "GET /v1/me with the key is 200, success, workspace slug smoke (status $status: $(snippet me.out))"
fi

status=$(http_get "$base/v1/me" anon.out)
if status_is 401 "$status" anon.out >/dev/null; then
  check "GET /v1/me without a key is 401 unauthorized" \
    json_check anon.out 'j.success === false && j.error && j.error.code === "unauthorized"'
else
  not_ok "GET /v1/me without a key is 401 unauthorized (status $status: $(snippet anon.out))"
fi

status=$(http_get "$base/v1/openapi.json" openapi.out)
if status_is 200 "$status" openapi.out >/dev/null; then
  check "GET /v1/openapi.json is an OpenAPI 3 document with paths" \
    json_check openapi.out 'typeof j.openapi === "string" && j.openapi.startsWith("3.") && j.paths && Object.keys(j.paths).length > 0'
else
  not_ok "GET /v1/openapi.json is an OpenAPI 3 document with paths (status $status: $(snippet openapi.out))"
fi

status=$(http_get "$base/v1/docs/scalar.js" scalar.out)
check "GET /v1/docs/scalar.js is served from inside the binary" status_is 200 "$status" /dev/null

# The console: its page names a hashed script that the binary serves itself.
status=$(http_get "$base/console" console.out)
if status_is 200 "$status" console.out >/dev/null; then
  script=$(FILE=console.out js 'const m = require("fs").readFileSync(process.env.FILE, "utf8").match(/src="(\/console\/assets\/app-[0-9a-f]{16}\.js)"/); console.log(m ? m[1] : "")')
  if [[ -n $script ]]; then
    status=$(http_get "$base$script" console-js.out)
    check "GET /console and its script are served from inside the binary" status_is 200 "$status" console-js.out
  else
    not_ok "GET /console names its script ($(snippet console.out))"
  fi
else
  not_ok "GET /console is 200 (status $status: $(snippet console.out))"
fi

# A short link: create it, follow it three times as a browser would, and read its click count back.
link_out=$(URL="$base/v1/links" KEY="$key" js '
  fetch(process.env.URL, { method: "POST", headers: { authorization: "Bearer " + process.env.KEY, "content-type": "application/json" },
    body: JSON.stringify({ destinationUrl: "https://example.com/landing?from=smoke", utmSource: "smoke" }), signal: AbortSignal.timeout(5000) })
    .then(async (r) => { const j = await r.json(); console.log(r.status === 201 ? j.data.id + " " + j.data.slug : "error " + r.status + " " + JSON.stringify(j).slice(0, 200)) },
          (e) => console.log("error " + e))')
link_id=${link_out%% *}
slug=${link_out##* }
if [[ $link_out == error* ]]; then
  not_ok "POST /v1/links creates a link ($link_out)"
else
  ok "POST /v1/links creates a link ($slug)"
  visits=$(URL="$base/$slug" js '
    const ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
    const one = () => fetch(process.env.URL, { redirect: "manual", headers: { "user-agent": ua }, signal: AbortSignal.timeout(5000) }).then((r) => r.status + " " + r.headers.get("location"))
    Promise.all([one(), one(), one()]).then((all) => console.log(all.join("|")), (e) => console.log("error " + e))')
  expected="302 https://example.com/landing?from=smoke&utm_source=smoke"
  if [[ $visits == "$expected|$expected|$expected" ]]; then ok "GET /$slug redirects (302 to the destination with its UTM field)"; else not_ok "GET /$slug redirects ($visits)"; fi
  sleep 1 # clicks are written every 250 ms
  status=$(http_get "$base/v1/links/$link_id" link.out "$key")
  check "the three visits are counted (totalClicks 3, uniqueClicks 1)" json_check link.out 'j.success && j.data.totalClicks === 3 && j.data.uniqueClicks === 1'
  status=$(http_get "$base/v1/analytics/overview?linkId=$link_id" overview.out "$key")
  check "GET /v1/analytics/overview counts them from the rollups (3 clicks, 1 visitor)" \
    json_check overview.out 'j.success && j.data.totals.clicks === 3 && j.data.totals.uniqueVisitors === 1 && j.data.top.browsers[0].value === "Chrome"'
fi

# Top links by unique visitors over 40 links, visited by one to three browsers each: enough links that
# half of them are measured on the uniques thread, which must run inside the binary.
top_out=$(BASE="$base" KEY="$key" js '
  const h = { authorization: "Bearer " + process.env.KEY, "content-type": "application/json" }
  const ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
  const t = { signal: AbortSignal.timeout(5000) }
  ;(async () => {
    for (let i = 0; i < 40; i++) {
      const j = await (await fetch(process.env.BASE + "/v1/links", { method: "POST", headers: h, body: JSON.stringify({ destinationUrl: "https://example.com/top/" + i }), ...t })).json()
      for (let v = 0; v <= i % 3; v++) {
        await fetch(process.env.BASE + "/" + j.data.slug, { redirect: "manual", headers: { "user-agent": ua + " Smoke/" + v }, ...t })
      }
    }
    await new Promise((r) => setTimeout(r, 1000)) // clicks are written every 250 ms
    const top = await (await fetch(process.env.BASE + "/v1/analytics/top-links?sort=uniqueClicks&limit=100", { headers: h, ...t })).json()
    const mine = top.data.links.filter((l) => l.destinationUrl.startsWith("https://example.com/top/"))
    const wrong = mine.filter((l) => l.uniqueClicks !== 1 + (Number(l.destinationUrl.split("/").pop()) % 3))
    console.log(mine.length + " " + wrong.length)
  })().catch((e) => console.log("error " + e))')
if [[ $top_out == "40 0" ]]; then
  ok "GET /v1/analytics/top-links by uniqueClicks measures 40 links (1-3 visitors each, all right)"
else
  not_ok "GET /v1/analytics/top-links by uniqueClicks measures 40 links ($top_out)"
fi

# A custom domain: added with the DNS records to create; not served (so Caddy's TLS ask is refused) until verified.
domain_out=$(URL="$base/v1/domains" KEY="$key" js '
  fetch(process.env.URL, { method: "POST", headers: { authorization: "Bearer " + process.env.KEY, "content-type": "application/json" },
    body: JSON.stringify({ domain: "Go.Smoke.Example" }), signal: AbortSignal.timeout(5000) })
    .then(async (r) => { const j = await r.json(); console.log(r.status === 201 ? j.data.domain + " " + j.data.verificationStatus + " " + j.data.records[0].name : "error " + r.status + " " + JSON.stringify(j).slice(0, 200)) },
          (e) => console.log("error " + e))')
if [[ $domain_out == "go.smoke.example pending _lnk-challenge.go.smoke.example" ]]; then ok "POST /v1/domains adds a pending domain with its TXT record"; else not_ok "POST /v1/domains adds a pending domain ($domain_out)"; fi
status=$(http_get "$base/internal/tls/ask?domain=go.smoke.example" ask.out)
check "GET /internal/tls/ask refuses a domain that is not served (404)" status_is 404 "$status" ask.out

# A webhook endpoint pointing at a receiver on loopback, and a test ping through the binary's sender.
hook_port=$(js '
  const net = require("net")
  const s = net.createServer()
  s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
PORT=$hook_port OUT="$work/hook.json" "$js_runtime" -e '
  const fs = require("fs")
  require("http").createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => { fs.writeFileSync(process.env.OUT, JSON.stringify({ headers: req.headers, body })); res.writeHead(204).end() })
  }).listen(Number(process.env.PORT), "127.0.0.1")
  setTimeout(() => process.exit(0), 30000)' >/dev/null 2>&1 &
hook_pid=$!
sleep 0.3
ping_out=$(URL="$base/v1/webhooks" KEY="$key" HOOK="http://127.0.0.1:$hook_port/hook" js '
  const h = { authorization: "Bearer " + process.env.KEY, "content-type": "application/json" }
  fetch(process.env.URL, { method: "POST", headers: h, body: JSON.stringify({ url: process.env.HOOK, events: ["link.created"] }), signal: AbortSignal.timeout(5000) })
    .then((r) => r.json())
    .then((j) => fetch(process.env.URL + "/" + j.data.id + "/test", { method: "POST", headers: h, signal: AbortSignal.timeout(20000) }))
    .then((r) => r.json())
    .then((j) => console.log(j.success ? j.data.status + " " + j.data.responseStatus : "error " + JSON.stringify(j).slice(0, 200)), (e) => console.log("error " + e))')
if [[ $ping_out == "success 204" ]] && json_check hook.json 'j.headers["webhook-signature"].startsWith("v1,") && j.headers["x-service-signature"].includes("v1=") && JSON.parse(j.body).type === "webhook.test"' >/dev/null; then
  ok "POST /v1/webhooks/{id}/test delivers a signed webhook.test to a loopback receiver"
else
  not_ok "POST /v1/webhooks/{id}/test delivers a signed webhook.test to a loopback receiver ($ping_out: $(snippet hook.json))"
fi
kill "$hook_pid" 2>/dev/null

# An automation subscription (REST hook): subscribe, see the link made above as the real sample, unsubscribe twice.
zap_out=$(URL="$base/v1/zapier" KEY="$key" HOOK="http://127.0.0.1:$hook_port/zap" js '
  const h = { authorization: "Bearer " + process.env.KEY, "content-type": "application/json" }
  const call = (path, init = {}) => fetch(process.env.URL + path, { headers: h, signal: AbortSignal.timeout(5000), ...init })
  ;(async () => {
    const sub = await (await call("/subscriptions", { method: "POST", body: JSON.stringify({ event: "link.created", hookUrl: process.env.HOOK }) })).json()
    const samples = await (await call("/samples?event=link.created&flat=1")).json()
    const first = await call("/subscriptions/" + sub.data.id, { method: "DELETE" })
    const again = await call("/subscriptions/" + sub.data.id, { method: "DELETE" })
    const left = await (await call("/subscriptions")).json()
    console.log([sub.data.id.slice(0, 5), samples.data[0].sample === undefined && typeof samples.data[0].data__slug, first.status, again.status, left.data.length].join(" "))
  })().catch((e) => console.log("error " + e))')
if [[ $zap_out == "hook_ string 204 204 0" ]]; then ok "REST hooks: subscribe, a real sample (flat), unsubscribe twice (204, 204)"; else not_ok "REST hooks: subscribe, sample, unsubscribe ($zap_out)"; fi

# --- graceful stop ----------------------------------------------------------------------------------
if kill -0 "$server_pid" 2>/dev/null; then
  kill -TERM "$server_pid"
  stopped=0
  deadline=$((SECONDS + 15))
  while ((SECONDS < deadline)); do
    if ! kill -0 "$server_pid" 2>/dev/null; then
      stopped=1
      break
    fi
    sleep 0.1
  done
  if [[ $stopped == 1 ]]; then
    code=0
    wait "$server_pid" || code=$?
    server_pid=
    if [[ $code == 0 ]]; then ok "SIGTERM stops lnk serve with exit 0"; else not_ok "SIGTERM stops lnk serve with exit 0 (exit $code)"; fi
  else
    not_ok "SIGTERM stops lnk serve within 15 s"
  fi
else
  code=0
  wait "$server_pid" || code=$?
  server_pid=
  not_ok "SIGTERM stops lnk serve with exit 0 (it had already exited with $code)"
fi

if [[ -n $server_pid ]]; then
  not_ok "WAL checkpointed on shutdown (server still running)"
elif [[ ! -s $data/lnk.db-wal ]]; then
  ok "WAL checkpointed on shutdown (lnk.db-wal empty or gone)"
else
  not_ok "WAL checkpointed on shutdown (lnk.db-wal is $(wc -c <"$data/lnk.db-wal") bytes)"
fi

if grep -q "click writer thread failed" server.log 2>/dev/null; then
  not_ok "the click writer thread ran inside the binary ($(grep -m1 'click writer thread failed' server.log | cut -c1-200))"
else
  ok "the click writer thread ran inside the binary (no fallback to the main thread)"
fi

if grep -Eq "checkpoint (thread )?failed" server.log 2>/dev/null; then
  not_ok "the checkpoint thread ran inside the binary ($(grep -Em1 'checkpoint (thread )?failed' server.log | cut -c1-200))"
else
  ok "the checkpoint thread ran inside the binary"
fi

if grep -q "uniques thread failed" server.log 2>/dev/null; then
  not_ok "the uniques thread ran inside the binary ($(grep -m1 'uniques thread failed' server.log | cut -c1-200))"
elif grep -q "uniques thread started" server.log 2>/dev/null; then
  ok "the uniques thread ran inside the binary"
else
  not_ok "the uniques thread ran inside the binary (it never started)"
fi

if ((failed > 0)); then
  echo "# server log (last 30 lines):"
  tail -n 30 server.log 2>/dev/null | sed 's/^/#   /'
fi
echo "SMOKE $passed $failed"
((failed == 0))
