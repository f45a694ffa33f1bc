#!/usr/bin/env bash
# CI's image step (issue 34): builds the real Dockerfile with podman and runs the image through a link's life,
# the way docs/docker.md tells operators to run it, on a Debian machine with no Docker engine and no registry.
#
#   bash scripts/image/ci.sh        (as root; .ci/run calls it after the smoke step)
#
# Parts, each timed:
#   tools    podman, runc, debootstrap… from apt, only those missing
#   bases    local stand-ins for the Dockerfile's two FROM images, named as the Dockerfile names them:
#            debian:<suite>-slim = a debootstrap (minbase) root filesystem of that suite, and oven/bun:<version>
#            = the same plus that Bun (npm's @oven/bun-linux-<arch>, checked against bun.lock) at
#            /usr/local/bin/bun. Both are cached under $LNK_CI_CACHE (/var/cache/lnk-ci), keyed by suite,
#            architecture and Bun version, so only the first run on a machine debootstraps.
#   build    podman build --isolation chroot of ./Dockerfile, docker format (OCI images drop HEALTHCHECK)
#   runs     the image as the Dockerfile says (SQLite in a fresh named volume, then on PostgreSQL), then as
#            deploy/compose.yml, deploy/compose.yml + deploy/compose.tls.yml and deploy/compose.postgres.yml
#            configure it (their command, environment, ports, volumes and stop grace period; compose itself is
#            not run). Each run: ready, bootstrap with the image's `lnk admin bootstrap --json`, a link made
#            with curl and followed (not behind Caddy, where lnk listens on loopback only), /readyz, the image's
#            HEALTHCHECK, SIGTERM → exit 0 in time.
# Output: `ok - …` / `not ok - …` per check, the time of each part, then `IMAGE <passed> <failed>` on a line of
# its own. Exit status 0 only when every check passed. A part that cannot run here is a failed check that says
# why (never a silent pass).
#
# Knobs: LNK_CI_CACHE (cache directory), LNK_CI_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# LNK_CI_CA_BUNDLE (CA bundle given to the Bun stand-in for bun install, default the machine's
# /etc/ssl/certs/ca-certificates.crt when present; "none" for Bun's own roots only).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
repo=$PWD
exec </dev/null
export DEBIAN_FRONTEND=noninteractive
# The settings of whoever runs this must not leak into compose's variable substitution or the runs.
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^LNK_' | grep -v '^LNK_CI_' || true)

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
# check DESCRIPTION COMMAND...: ok when the command succeeds; its output (if any) explains a failure.
check() {
  local what=$1 why
  shift
  if why=$("$@" 2>&1); then ok "$what"; else not_ok "$what${why:+ ($(head -c 400 <<<"$why" | tr '\n' ' '))}"; fi
}

timings=()
part_name=
part_started=0
part() {
  part_done
  part_name=$1
  part_started=$SECONDS
  echo
  echo "== image: $1"
}
part_done() {
  if [[ -n $part_name ]]; then
    timings+=("$(printf '%4ss  %s' $((SECONDS - part_started)) "$part_name")")
    echo "   ($((SECONDS - part_started))s)"
  fi
  part_name=
}
summary() {
  part_done
  echo
  echo "== image: times"
  printf '   %s\n' "${timings[@]}"
  printf '   %4ss  total\n' "$SECONDS"
  echo "IMAGE $passed $failed"
}
# fatal DESCRIPTION: a failed check after which nothing else can run.
fatal() {
  not_ok "$1"
  summary
  exit 1
}

if ((EUID != 0)); then fatal "runs as root (podman's chroot builds and debootstrap need it; this is uid $EUID)"; fi

cache=${LNK_CI_CACHE:-/var/cache/lnk-ci}
mirror=${LNK_CI_DEBIAN_MIRROR:-http://deb.debian.org/debian}
run_label="lnk-ci.run=$$"
work=$(mktemp -d "${TMPDIR:-/tmp}/lnk-image.XXXXXX")
cluster_dir=
caddy_pid=

cleanup() {
  local ids
  ids=$(podman ps -aq --filter "label=$run_label" 2>/dev/null)
  [[ -n $ids ]] && podman rm -f -v -t 2 $ids >/dev/null 2>&1
  ids=$(podman volume ls -q --filter "label=$run_label" 2>/dev/null)
  [[ -n $ids ]] && podman volume rm -f $ids >/dev/null 2>&1
  [[ -n $caddy_pid ]] && kill "$caddy_pid" 2>/dev/null
  [[ -n $cluster_dir ]] && bun test/setup/cluster.ts stop "$cluster_dir" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Containers and volumes a killed earlier run left behind (its shell is gone).
for label in $( (podman ps -a --format '{{index .Labels "lnk-ci.run"}}'; podman volume ls --format '{{index .Labels "lnk-ci.run"}}') 2>/dev/null | sort -u); do
  if [[ $label =~ ^[0-9]+$ ]] && ! kill -0 "$label" 2>/dev/null; then
    podman ps -aq --filter "label=lnk-ci.run=$label" | xargs -r podman rm -f -v >/dev/null 2>&1
    podman volume ls -q --filter "label=lnk-ci.run=$label" | xargs -r podman volume rm -f >/dev/null 2>&1
  fi
done

# --- tools -----------------------------------------------------------------------------------------------
part "tools (apt-get: podman, runc, debootstrap, uidmap, fuse-overlayfs, slirp4netns, curl, postgresql)"
packages=(podman runc debootstrap uidmap fuse-overlayfs slirp4netns containernetworking-plugins curl ca-certificates openssl postgresql util-linux)
missing=()
for p in "${packages[@]}"; do
  [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  if ! { apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "${missing[@]}"; } >"$work/apt.log" 2>&1; then
    tail -n 20 "$work/apt.log"
    fatal "apt-get installs ${missing[*]}"
  fi
fi
for tool in podman debootstrap npm curl psql nsenter openssl; do
  command -v "$tool" >/dev/null 2>&1 || fatal "$tool is on PATH"
done
ok "tools present: $(podman --version), debootstrap $(dpkg-query -W -f='${Version}' debootstrap), npm $(npm --version)"

# --- base images ------------------------------------------------------------------------------------------
part "base images (stand-ins for the Dockerfile's FROM images)"
# The two FROM lines name the images; package.json's bun devDependency names the Bun they must carry.
bun_ref=$(awk 'toupper($1) == "FROM" && $2 ~ /^oven\/bun:/ { print $2; exit }' Dockerfile)
debian_ref=$(awk 'toupper($1) == "FROM" && $2 ~ /^debian:/ { print $2; exit }' Dockerfile)
[[ -n $bun_ref && -n $debian_ref ]] || fatal "the Dockerfile builds FROM oven/bun:<version> and runs FROM debian:<suite>-slim (found '${bun_ref}' and '${debian_ref}')"
bun_version=${bun_ref#oven/bun:}
wanted_bun=$(bun -e 'console.log(require("./package.json").devDependencies.bun ?? "")')
check "the Dockerfile builds with the Bun package.json pins ($bun_ref, devDependencies.bun $wanted_bun)" test "$bun_version" = "$wanted_bun"
debian_tag=${debian_ref#debian:}
suite=${debian_tag%-slim}
arch=$(dpkg --print-architecture)
case $arch in
  amd64) bun_arch=x64 ;;
  arm64) bun_arch=aarch64 ;;
  *) fatal "a Bun build exists for this architecture ($arch)" ;;
esac
debian_image=docker.io/library/debian:$debian_tag
bun_image=docker.io/oven/bun:$bun_version
mkdir -p "$cache/rootfs" "$cache/bun"

# debian:<suite>-slim ← debootstrap --variant=minbase, as a tar kept in the cache.
rootfs_tar=$cache/rootfs/$suite-$arch-minbase.tar
if [[ -s $rootfs_tar ]]; then
  echo "cached: $rootfs_tar"
else
  echo "debootstrap --variant=minbase $suite ($arch) from $mirror"
  rootfs=$work/rootfs
  if debootstrap --variant=minbase --arch="$arch" "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1; then
    # What the slim images leave out: downloaded packages and package lists.
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log
    tar --numeric-owner --xattrs -C "$rootfs" -cf "$rootfs_tar.tmp" . && mv "$rootfs_tar.tmp" "$rootfs_tar"
    rm -rf "$rootfs"
  else
    tail -n 20 "$work/debootstrap.log"
  fi
fi
[[ -s $rootfs_tar ]] || fatal "debootstrap made a $suite root filesystem (log above)"

# The Bun binary from npm, its tarball checked against the integrity bun.lock records for it.
bun_bin=$cache/bun/$bun_version-linux-$bun_arch/bun
if [[ -x $bun_bin ]]; then
  echo "cached: $bun_bin"
else
  pkg="@oven/bun-linux-$bun_arch"
  echo "npm pack $pkg@$bun_version"
  mkdir -p "$work/bun-pack" "$(dirname "$bun_bin")"
  if (cd "$work/bun-pack" && npm pack --silent "$pkg@$bun_version" >/dev/null 2>"$work/npm.log"); then
    tarball=$(ls "$work"/bun-pack/*.tgz)
    expected=$(grep -F "\"$pkg\": [\"$pkg@$bun_version\"" bun.lock | grep -oE 'sha512-[A-Za-z0-9+/=]+' | head -n1)
    actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
    if [[ -n $expected && $actual == "$expected" ]]; then
      tar -xzf "$tarball" -C "$work/bun-pack" package/bin/bun && install -m 0755 "$work/bun-pack/package/bin/bun" "$bun_bin.tmp" && mv "$bun_bin.tmp" "$bun_bin"
    else
      echo "the tarball of $pkg@$bun_version is $actual; bun.lock says ${expected:-nothing}"
    fi
  else
    cat "$work/npm.log"
  fi
fi
[[ -x $bun_bin ]] || fatal "Bun $bun_version for linux-$bun_arch fetched from npm and matching bun.lock (see above)"
check "the cached Bun is version $bun_version" test "$("$bun_bin" --version 2>&1)" = "$bun_version"

# The probe doubles as the check that podman can start containers here. This machine's default OCI runtime
# (crun) refuses cgroup v1/v2 hybrid hosts and podman's default ulimits may exceed the hard limits root has;
# runc with limits within them is the fallback.
if [[ ! -s $rootfs_tar.id ]] || ! podman image exists "$debian_image" || [[ $(podman image inspect --format '{{.Id}}' "$debian_image") != "$(cat "$rootfs_tar.id")" ]]; then
  echo "podman import $rootfs_tar as $debian_image"
  podman import --change 'CMD ["bash"]' --change "LABEL lnk-ci.base=$suite-$arch-minbase" "$rootfs_tar" "$debian_image" >"$work/import.log" 2>&1 || { cat "$work/import.log"; fatal "podman import of the $suite root filesystem"; }
  podman image inspect --format '{{.Id}}' "$debian_image" >"$rootfs_tar.id"
fi

ca_bundle=${LNK_CI_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[[ $ca_bundle == none || ! -s $ca_bundle ]] && ca_bundle=
bun_key="$(cat "$rootfs_tar.id") bun-$bun_version $(sha256sum "$bun_bin" | cut -c1-16) ca-$( [[ -n $ca_bundle ]] && sha256sum "$ca_bundle" | cut -c1-16)"
if ! podman image exists "$bun_image" || [[ $(podman image inspect --format '{{index .Labels "lnk-ci.base"}}' "$bun_image") != "$bun_key" ]]; then
  echo "podman build $bun_image (FROM $debian_image, Bun at /usr/local/bin/bun)"
  ctx=$work/bun-image
  mkdir -p "$ctx"
  cp "$bun_bin" "$ctx/bun"
  {
    echo "FROM $debian_image"
    # As the published image: bun and bunx on PATH, a bun user, WORKDIR /home/bun/app; it runs as root.
    echo 'COPY bun /usr/local/bin/bun'
    echo 'RUN ln -s bun /usr/local/bin/bunx && groupadd --gid 1000 bun && useradd --uid 1000 --gid bun --shell /bin/sh --create-home bun && mkdir -p /home/bun/app'
    # The machine's CA bundle, for `bun install` behind an egress proxy that re-signs TLS (Bun otherwise trusts
    # only its own roots). Only the build stage sees it: the runtime stage starts from debian.
    if [[ -n $ca_bundle ]]; then
      cp "$ca_bundle" "$ctx/ca-certificates.crt"
      echo 'COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt'
      echo 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'
    fi
    echo 'WORKDIR /home/bun/app'
    echo 'CMD ["/usr/local/bin/bun"]'
    echo "LABEL lnk-ci.base=\"$bun_key\""
  } >"$ctx/Containerfile"
  podman build --isolation chroot --pull=never -t "$bun_image" "$ctx" >"$work/bun-image.log" 2>&1 || { tail -n 20 "$work/bun-image.log"; fatal "podman build of the $bun_image stand-in"; }
fi
check "$debian_image and $bun_image are in local storage" bash -c 'podman image exists "$1" && podman image exists "$2"' _ "$debian_image" "$bun_image"

# --- build ------------------------------------------------------------------------------------------------
part "build (podman build --isolation chroot -f Dockerfile)"
image=localhost/lnk:ci
build_started=$SECONDS
if podman build --isolation chroot --format docker --pull=never -t "$image" -f Dockerfile . >"$work/build.log" 2>&1; then
  ok "podman build of ./Dockerfile ($((SECONDS - build_started))s, $(podman image inspect --format '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
  grep -E '^build: |packages installed' "$work/build.log" | sed 's/^/   /'
  # Space: the build stage tagged too (from the layer cache, a second), so that pruning the untagged images of
  # earlier runs keeps the dependency layer for the next build. Only images made from the stand-ins carry the
  # lnk-ci.base label, so nothing else on the machine is pruned.
  podman build --isolation chroot --format docker --pull=never --target build -t "$image-build" -f Dockerfile . >>"$work/build.log" 2>&1 &&
    podman image prune -f --filter label=lnk-ci.base >/dev/null 2>&1
else
  sed 's/^/   /' "$work/build.log" | tail -n 40
  fatal "podman build of ./Dockerfile (the log's end above)"
fi

# The image's configuration, as docker would read it.
config() { podman image inspect --format "$1" "$image"; }
check "the image runs /usr/local/bin/lnk serve" test "$(config '{{json .Config.Entrypoint}} {{json .Config.Cmd}}')" = '["/usr/local/bin/lnk"] ["serve"]'
check "the image runs as user lnk with /data as a volume and LNK_DATA_DIR" \
  test "$(config '{{.Config.User}} {{json .Config.Volumes}}') $(config '{{json .Config.Env}}' | grep -o '"LNK_DATA_DIR=/data"')" = 'lnk {"/data":{}} "LNK_DATA_DIR=/data"'
healthcheck=$(podman image inspect --format '{{json .HealthCheck}}' "$image" 2>/dev/null)
[[ $healthcheck == null || -z $healthcheck ]] && healthcheck=$(config '{{json .Config.Healthcheck}}' 2>/dev/null)
check "the image keeps its HEALTHCHECK (GET /readyz)" grep -q readyz <<<"$healthcheck"

# --- running it -------------------------------------------------------------------------------------------
part "runs (podman run; SQLite, PostgreSQL, the compose files' settings)"
run_opts=()
if ! podman run --rm --label "$run_label" --pull=never "$debian_image" true >/dev/null 2>"$work/probe.err"; then
  run_opts=(--runtime runc --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
  echo "podman run with the default runtime fails here ($(grep -m1 -o 'Error: .*' "$work/probe.err")); using: ${run_opts[*]}"
  podman run --rm --label "$run_label" --pull=never "${run_opts[@]}" "$debian_image" true >/dev/null 2>"$work/probe.err" ||
    fatal "podman run starts a container here (not with runc either: $(head -c 300 "$work/probe.err"))"
fi
image_pass=$(podman run --rm --label "$run_label" "${run_opts[@]}" --entrypoint cat "$image" /etc/passwd 2>&1 | grep '^lnk:' | cut -d: -f4,3)
check "the image's user lnk is uid 10001, group 10001 ($image_pass)" test "$image_pass" = 10001:10001

free_port() {
  bun -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })'
}
known_settings=$(podman run --rm --label "$run_label" "${run_opts[@]}" "$image" serve --help 2>/dev/null | grep -oE '\bLNK_[A-Z0-9_]+' | sort -u)
[[ -n $known_settings ]] || not_ok "lnk serve --help in the image lists its settings"

user_agent="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

# wait_ready NAME URL: waits (up to 30 s) for 200 from URL, or for the container to stop.
wait_ready() {
  local deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    [[ $(podman inspect --format '{{.State.Running}}' "$1" 2>/dev/null) == true ]] || return 1
    [[ $(curl -s -o /dev/null -m 2 -w '%{http_code}' "$2") == 200 ]] && return 0
    sleep 0.3
  done
  return 1
}

# started NAME URL LABEL: ok when ready, otherwise a failure with the container's last words.
started() {
  if wait_ready "$1" "$2"; then
    ok "$3: ready (GET /readyz 200)"
    return 0
  fi
  not_ok "$3: ready within 30 s ($(podman inspect --format 'running={{.State.Running}} exit={{.State.ExitCode}}' "$1" 2>&1); log: $(podman logs "$1" 2>&1 | tail -n 5 | tr '\n' ' ' | head -c 500))"
  return 1
}

# bootstrap NAME LABEL: `lnk admin bootstrap --json` inside the container; prints the key.
bootstrap() {
  local out key
  out=$(podman exec "$1" lnk admin bootstrap --email ci@example.com --workspace "CI $1" --json 2>&1)
  key=$(bun -e 'try { const k = JSON.parse(process.argv[1]).apiKey.key; if (typeof k === "string") console.log(k) } catch {}' "$out")
  if [[ $key == lnk_live_* ]]; then
    ok "$2: lnk admin bootstrap --json (in the container) prints a live key" >&2
    echo "$key"
  else
    not_ok "$2: lnk admin bootstrap --json prints a live key ($(head -c 300 <<<"$out"))" >&2
  fi
}

# link_life LABEL KEY CREATE_BASE FOLLOW_BASE: a link made with curl through the API on one node, followed on
# another (or the same); prints the slug.
link_life() {
  local label=$1 key=$2 create=$3 follow=$4 dest body code slug short got
  dest="https://example.com/ci/$RANDOM?from=image"
  body=$(curl -s -m 10 -w '\n%{http_code}' -X POST "$create/v1/links" -H "authorization: Bearer $key" -H 'content-type: application/json' \
    --data "{\"destinationUrl\":\"$dest\"}")
  code=${body##*$'\n'}
  read -r slug short < <(bun -e 'try { const j = JSON.parse(process.argv[1]); if (j.success) console.log(j.data.slug, j.data.shortUrl) } catch {}' "${body%$'\n'*}")
  if [[ $code != 201 || -z $slug ]]; then
    not_ok "$label: POST /v1/links with curl is 201 (status $code: $(head -c 300 <<<"${body%$'\n'*}"))" >&2
    return
  fi
  ok "$label: POST /v1/links with curl is 201 (slug $slug)" >&2
  # A visitor follows the short URL the API gave (its host is a short domain); curl connects it to the node.
  got=$(follow "$short" "$follow" '%{http_code} %header{location}')
  check "$label: GET $short redirects to the destination" test "$got" = "302 $dest" >&2
  echo "$short"
}

# follow SHORT_URL BASE FORMAT: GET the short URL as a browser, connected to the node at BASE.
follow() {
  curl -s -m 10 -o /dev/null -A "$user_agent" --connect-to "::${2#http://}" -w "$3" "$1"
}

# probes LABEL NAME [BASE]: /readyz (when the node is published at BASE) and the image's HEALTHCHECK.
probes() {
  [[ -n ${3:-} ]] && check "$1: GET /readyz is 200" test "$(curl -s -o /dev/null -m 5 -w '%{http_code}' "$3/readyz")" = 200
  local out code=0
  # (podman logs that it has no systemd to schedule health checks with; running one by hand needs none.)
  out=$(podman healthcheck run "$2" 2>&1) || code=$?
  out=$(grep -v 'unable to get systemd connection' <<<"$out" | tr -s '\n' ' ')
  out=${out# }
  out=${out% }
  if ((code == 0)); then
    ok "$1: the image's HEALTHCHECK passes (podman healthcheck run: ${out:-healthy})"
  else
    not_ok "$1: the image's HEALTHCHECK passes (exit $code: $out)"
  fi
}

# stop LABEL NAME GRACE: SIGTERM (podman stop, SIGKILL after GRACE seconds), exit 0 before the grace ran out.
stop() {
  local started=$SECONDS code
  podman stop -t "$3" "$2" >/dev/null 2>&1
  code=$(podman inspect --format '{{.State.ExitCode}}' "$2" 2>&1)
  if [[ $code == 0 ]] && ((SECONDS - started < $3)); then
    ok "$1: SIGTERM stops it with exit 0 in $((SECONDS - started))s (grace $3 s)"
  else
    not_ok "$1: SIGTERM stops it with exit 0 within $3 s (exit $code after $((SECONDS - started))s; log: $(podman logs "$2" 2>&1 | tail -n 3 | tr '\n' ' ' | head -c 300))"
  fi
}

# run_node NAME PORT ARGS...: podman run -d, labelled for cleanup, container port 8080 published on 127.0.0.1.
run_node() {
  local name=$1 port=$2
  shift 2
  podman run -d --name "$name" --label "$run_label" "${run_opts[@]}" "$@" >"$work/$name.run" 2>&1 || {
    not_ok "podman run $name ($(head -c 300 "$work/$name.run"))"
    return 1
  }
}

# settings_known LABEL ENTRIES...: every LNK_ variable a compose file sets is one lnk reads.
settings_known() {
  local label=$1 unknown=() entry
  shift
  for entry in "$@"; do
    [[ ${entry%%=*} == LNK_* ]] || continue
    grep -qx "${entry%%=*}" <<<"$known_settings" || unknown+=("${entry%%=*}")
  done
  check "$label: every LNK_ variable it sets is a setting of lnk serve${unknown:+ (unknown: ${unknown[*]})}" test ${#unknown[@]} = 0
}

# compose_field FILE SERVICE FIELD [OVERRIDE]: NUL-separated entries into the array `field`. The variables
# compose would substitute are the entries of `compose_vars` (KEY=VALUE), and nothing else.
compose_vars=()
compose_field() {
  field=()
  local out=$work/compose.out
  if ! env -i PATH="$PATH" HOME="$HOME" "${compose_vars[@]}" bun scripts/image/compose.ts "$@" >"$out" 2>"$out.err"; then
    not_ok "${1#"$repo"/} ${2}: $(cat "$out.err")"
    return 1
  fi
  mapfile -d '' -t field <"$out"
}

# -- 1. as the Dockerfile says, SQLite in a fresh named volume
label="image (SQLite, named volume)"
name=lnk-ci-$$-sqlite
volume=lnk-ci-$$-data
podman volume create --label "$run_label" "$volume" >/dev/null
port=$(free_port)
base=http://127.0.0.1:$port
if run_node "$name" "$port" -p "127.0.0.1:$port:8080" -v "$volume:/data" "$image" && started "$name" "$base/readyz" "$label"; then
  pid=$(podman inspect --format '{{.State.Pid}}' "$name")
  check "$label: the entrypoint runs as uid 10001" test "$(stat -c %u "/proc/$pid")" = 10001
  check "$label: the new volume is lnk's (uid 10001, 0750) and holds lnk.db" \
    test "$(podman exec "$name" stat -c '%u %a' /data) $(podman exec "$name" ls /data | grep -x lnk.db)" = "10001 750 lnk.db"
  key=$(bootstrap "$name" "$label")
  slug=$([[ -n $key ]] && link_life "$label" "$key" "$base" "$base")
  probes "$label" "$name" "$base"
  # The probe is not vacuous: the same command, pointed at a port where nothing listens, fails.
  mapfile -d '' -t probe < <(bun -e 'const t = JSON.parse(process.argv[1]).Test; if (t[0] === "CMD") process.stdout.write(t.slice(1).map((a) => a + "\0").join(""))' "$healthcheck")
  if ((${#probe[@]})); then
    check "$label: the HEALTHCHECK command, run by hand, passes, and fails when pointed at a port with no lnk (LNK_PORT=1)" \
      bash -c 'podman exec "$@" && ! podman exec -e LNK_PORT=1 "$@" 2>/dev/null' _ "$name" "${probe[@]}"
  else
    not_ok "$label: the image's HEALTHCHECK is a CMD array ($healthcheck)"
  fi
  stop "$label" "$name" 20
  # Upgrading = a new container on the same volume: the link is still there.
  if [[ -n $slug ]]; then
    podman rm "$name" >/dev/null 2>&1
    if run_node "$name" "$port" -p "127.0.0.1:$port:8080" -v "$volume:/data" "$image" && wait_ready "$name" "$base/readyz"; then
        check "$label: a new container on the same volume still redirects $slug" test "$(follow "$slug" "$base" '%{http_code}')" = 302
      stop "$label, second container" "$name" 20
    else
      not_ok "$label: a new container on the same volume starts"
    fi
  fi
fi

# -- PostgreSQL: a cluster of this run on 127.0.0.1, reached from the containers through slirp4netns's
# 10.0.2.2 (the host's loopback).
if cluster=$(bun test/setup/cluster.ts start $$ 2>"$work/cluster.err"); then
  read -r cluster_url cluster_dir <<<"$cluster"
  cluster_port=$(bun -e 'console.log(new URL(process.argv[1]).port)' "$cluster_url")
  echo "PostgreSQL cluster at $cluster_url ($cluster_dir)"
else
  not_ok "a PostgreSQL cluster starts (bun test/setup/cluster.ts: $(head -c 300 "$work/cluster.err"))"
fi
pg_net=(--network slirp4netns:allow_host_loopback=true)

# -- 2. as the Dockerfile says, on PostgreSQL
if [[ -n $cluster_dir ]]; then
  label="image (PostgreSQL)"
  name=lnk-ci-$$-pg
  psql -q -v ON_ERROR_STOP=1 "$cluster_url" -c 'CREATE DATABASE lnk_image' >/dev/null 2>"$work/psql.err" || not_ok "CREATE DATABASE lnk_image ($(cat "$work/psql.err"))"
  port=$(free_port)
  base=http://127.0.0.1:$port
  if run_node "$name" "$port" "${pg_net[@]}" -p "127.0.0.1:$port:8080" -e "LNK_DATABASE_URL=postgres://lnk@10.0.2.2:$cluster_port/lnk_image" "$image" &&
    started "$name" "$base/readyz" "$label"; then
    key=$(bootstrap "$name" "$label")
    slug=$([[ -n $key ]] && link_life "$label" "$key" "$base" "$base")
    [[ -n $slug ]] && check "$label: the link is a row in PostgreSQL" \
      test "$(psql -qtA "${cluster_url%/*}/lnk_image" -c "SELECT count(*) FROM links WHERE slug = '${slug##*/}'" 2>&1)" = 1
    probes "$label" "$name" "$base"
    stop "$label" "$name" 20
  fi
fi

# -- 3. deploy/compose.yml: its lnk service's command, environment, ports, volume and grace period
compose=$repo/deploy/compose.yml
label="deploy/compose.yml lnk"
if compose_field "$compose" lnk environment; then
  env_entries=("${field[@]}")
  env_args=()
  for e in "${env_entries[@]}"; do env_args+=(-e "$e"); done
  settings_known "$label" "${env_entries[@]}"
  compose_field "$compose" lnk command && command=("${field[@]}")
  compose_field "$compose" lnk ports && ports=("${field[@]}")
  compose_field "$compose" lnk volumes && volumes=("${field[@]}")
  compose_field "$compose" lnk build && context=${field[*]}
  compose_field "$compose" lnk stop-grace && grace=${field[*]}
  check "$label: builds this repository's Dockerfile (build: $context)" test "$context/Dockerfile" -ef "$repo/Dockerfile"
  listen=$(printf '%s\n' "${env_entries[@]}" | grep -oP '^LNK_PORT=\K.*' || echo 8080)
  check "$label: publishes the port lnk listens on ($listen; ports: ${ports[*]})" test "${ports[0]:-}" = "$listen"
  data_volume=
  vol_args=()
  for v in "${volumes[@]}"; do
    if [[ ${v#*:} == /data ]]; then data_volume=${v%%:*}; fi
    # The named volumes become volumes of this run; compose would prefix them with the project name.
    vol_args+=(-v "lnk-ci-$$-${v%%:*}:${v#*:}")
    podman volume create --label "$run_label" "lnk-ci-$$-${v%%:*}" >/dev/null
  done
  check "$label: a named volume at /data, the image's LNK_DATA_DIR (volumes: ${volumes[*]})" test -n "$data_volume"
  check "$label: stop_grace_period (${grace:-unset}) leaves lnk its 10 s drain" test "${grace%.*}" -gt 10
  name=lnk-ci-$$-compose
  port=$(free_port)
  base=http://127.0.0.1:$port
  if run_node "$name" "$port" -p "127.0.0.1:$port:${ports[0]:-8080}" "${vol_args[@]}" "${env_args[@]}" "$image" "${command[@]}" &&
    started "$name" "$base/readyz" "$label"; then
    key=$(bootstrap "$name" "$label")
    [[ -n $key ]] && link_life "$label" "$key" "$base" "$base" >/dev/null
    probes "$label" "$name" "$base"
    stop "$label" "$name" "${grace%.*}"
  fi
fi

# -- 4. deploy/compose.yml + deploy/compose.tls.yml: Caddy in lnk's network namespace, deploy/Caddyfile as
# shipped. This machine's caddy runs inside the container's network namespace, which is what
# network_mode: service:lnk gives the caddy service; the hostnames are the ones its header's example sets.
tls=$repo/deploy/compose.tls.yml
label="deploy/compose.yml + compose.tls.yml lnk"
compose_vars=(LNK_BASE_URL=https://lnk.ci.example LNK_SHORT_DOMAINS=go.ci.example)
if compose_field "$compose" lnk environment "$tls"; then
  env_entries=("${field[@]}")
  env_args=()
  for e in "${env_entries[@]}"; do env_args+=(-e "$e"); done
  settings_known "$label" "${env_entries[@]}"
  compose_field "$compose" lnk command "$tls" && command=("${field[@]}")
  compose_field "$compose" lnk ports "$tls" && ports=("${field[@]}")
  check "$label: publishes 80 and 443 on lnk, whose namespace Caddy uses (ports: ${ports[*]})" \
    bash -c 'printf "%s\n" "$@" | grep -qx 80 && printf "%s\n" "$@" | grep -qx 443' _ "${ports[@]}"
  compose_field "$tls" caddy network-mode && caddy_mode=${field[*]}
  check "$label: caddy shares lnk's network namespace (network_mode: $caddy_mode)" test "$caddy_mode" = service:lnk
  compose_field "$tls" caddy volumes && caddy_volumes=("${field[@]}")
  caddyfile=$(printf '%s\n' "${caddy_volumes[@]}" | grep ':/etc/caddy/Caddyfile' | cut -d: -f1)
  check "$label: caddy runs deploy/Caddyfile (${caddyfile#"$repo"/})" test "$caddyfile" -ef "$repo/deploy/Caddyfile"
  name=lnk-ci-$$-tls
  podman volume create --label "$run_label" "$name-data" >/dev/null
  if ! command -v caddy >/dev/null; then
    not_ok "$label: caddy is installed (the system packages step of .ci/run installs it)"
  elif run_node "$name" 0 -v "$name-data:/data" "${env_args[@]}" "$image" "${command[@]}"; then
    pid=$(podman inspect --format '{{.State.Pid}}' "$name")
    in_ns() { nsenter -t "$pid" -n "$@"; }
    ready=0
    for _ in $(seq 1 100); do
      [[ $(podman inspect --format '{{.State.Running}}' "$name" 2>/dev/null) == true ]] || break
      [[ $(in_ns curl -s -o /dev/null -m 2 -w '%{http_code}' http://127.0.0.1:8080/readyz) == 200 ]] && { ready=1; break; }
      sleep 0.3
    done
    if ((ready)); then
      ok "$label: ready on its loopback"
      mkdir -p "$work/caddy"
      (cd "$work/caddy" && exec nsenter -t "$pid" -n env HOME="$work/caddy" XDG_DATA_HOME="$work/caddy/data" XDG_CONFIG_HOME="$work/caddy/config" \
        caddy run --adapter caddyfile --config "$caddyfile" >"$work/caddy.log" 2>&1) &
      caddy_pid=$!
      caddy_up=0
      for _ in $(seq 1 50); do
        [[ $(in_ns curl -s -o /dev/null -m 2 -w '%{http_code}' -H 'Host: go.ci.example' http://127.0.0.1:80/x) == 308 ]] && { caddy_up=1; break; }
        sleep 0.2
      done
      if ((caddy_up)); then
        ok "$label: Caddy with deploy/Caddyfile runs in lnk's network namespace (http://go.ci.example/x answers 308 to https)"
        direct=$(in_ns curl -s -m 5 -w ' %{http_code}' -H 'Host: go.ci.example' http://127.0.0.1:8080/.well-known/lnk/ci-token)
        check "$label: through Caddy, http://go.ci.example/.well-known/lnk/… gets lnk's own answer ($direct)" \
          test "$(in_ns curl -s -m 5 -w ' %{http_code}' -H 'Host: go.ci.example' http://127.0.0.1:80/.well-known/lnk/ci-token)" = "$direct"
      else
        not_ok "$label: Caddy with deploy/Caddyfile runs in lnk's network namespace ($(tail -n 3 "$work/caddy.log" | tr '\n' ' ' | head -c 300))"
      fi
      kill "$caddy_pid" 2>/dev/null && wait "$caddy_pid" 2>/dev/null
      caddy_pid=
      # Caddy's on-demand TLS asks over the shared loopback before it obtains a certificate.
      asks=$(for d in lnk.ci.example go.ci.example other.ci.example; do in_ns curl -s -o /dev/null -m 5 -w '%{http_code} ' "http://127.0.0.1:8080/internal/tls/ask?domain=$d"; done)
      check "$label: lnk answers Caddy's TLS ask on the shared loopback: 200 for its API host and short domain, 404 for another (${asks% })" \
        test "$asks" = "200 200 404 "
      addr=$(in_ns hostname -I | awk '{ print $1 }')
      check "$label: lnk listens on loopback only (LNK_HOST=127.0.0.1: nothing answers at the namespace's $addr:8080)" \
        test "$(in_ns curl -s -o /dev/null -m 2 -w '%{http_code}' "http://$addr:8080/readyz")" = 000
      bootstrap "$name" "$label" >/dev/null
      probes "$label" "$name"
      stop "$label" "$name" 20
    else
      not_ok "$label: ready on its loopback within 30 s ($(podman logs "$name" 2>&1 | tail -n 3 | tr '\n' ' '))"
    fi
  fi
fi

# -- 5. deploy/compose.postgres.yml: two of its nodes on the CI cluster, as its db service would be set up.
compose=$repo/deploy/compose.postgres.yml
label="deploy/compose.postgres.yml"
compose_vars=("LNK_DB_PASSWORD=ci-$RANDOM$RANDOM")
if [[ -n $cluster_dir ]] && compose_field "$compose" db environment; then
  db_user=$(printf '%s\n' "${field[@]}" | grep -oP '^POSTGRES_USER=\K.*')
  db_password=$(printf '%s\n' "${field[@]}" | grep -oP '^POSTGRES_PASSWORD=\K.*')
  db_name=$(printf '%s\n' "${field[@]}" | grep -oP '^POSTGRES_DB=\K.*')
  # The db service's role and database, made on the CI cluster as the postgres image would make them.
  psql -q -v ON_ERROR_STOP=1 -v user="$db_user" -v password="$db_password" -v db="$db_name" "$cluster_url" >/dev/null 2>"$work/psql.err" <<'SQL' || not_ok "$label: the db service's role and database on the CI cluster ($(cat "$work/psql.err"))"
SELECT format('CREATE ROLE %I LOGIN', :'user') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'user') \gexec
ALTER ROLE :"user" PASSWORD :'password';
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'user') WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \gexec
SQL
  compose_field "$compose" lb upstreams && upstreams=("${field[@]}")
  compose_field "$compose" lnk1 subnets && subnets=("${field[@]}")
  nodes=()
  for node in lnk1 lnk2; do
    compose_field "$compose" "$node" environment || continue
    env_entries=("${field[@]}")
    settings_known "$label $node" "${env_entries[@]}"
    url=$(printf '%s\n' "${env_entries[@]}" | grep -oP '^LNK_DATABASE_URL=\K.*')
    parts=$(bun -e 'const u = new URL(process.argv[1]); console.log([u.hostname, u.port || "5432", decodeURIComponent(u.username), decodeURIComponent(u.password), u.pathname.slice(1)].join(" "))' "$url" 2>/dev/null)
    check "$label $node: LNK_DATABASE_URL names the db service, its user, password and database (db 5432 $db_user <password> $db_name)" \
      test "$parts" = "db 5432 $db_user $db_password $db_name"
    allowed=$(printf '%s\n' "${env_entries[@]}" | grep -oP '^LNK_TLS_ASK_ALLOWED_CIDRS=\K.*')
    check "$label $node: LNK_TLS_ASK_ALLOWED_CIDRS ($allowed) allows the compose network (${subnets[*]:-no subnet pinned}), where lb (Caddy) is" \
      bash -c '[[ $# -gt 1 ]] || exit 1; a=",$1,"; shift; for s; do [[ $a == *",$s,"* ]] || exit 1; done' _ "$allowed" "${subnets[@]}"
    listen=$(printf '%s\n' "${env_entries[@]}" | grep -oP '^LNK_PORT=\K.*' || echo 8080)
    check "$label: lb proxies to $node on the port it listens on ($listen)" bash -c 'printf "%s\n" "${@:2}" | grep -qx "$1"' _ "$node:$listen" "${upstreams[@]}"
    env_args=()
    for e in "${env_entries[@]}"; do
      # The one change: the database is the CI cluster (the host's loopback is 10.0.2.2 from the container).
      [[ $e == LNK_DATABASE_URL=* ]] && e="LNK_DATABASE_URL=postgres://$db_user:$db_password@10.0.2.2:$cluster_port/$db_name"
      env_args+=(-e "$e")
    done
    compose_field "$compose" "$node" command && command=("${field[@]}")
    compose_field "$compose" "$node" stop-grace && grace=${field[*]}
    port=$(free_port)
    # Both nodes start at once: they migrate the empty database together (one takes the advisory lock).
    run_node "lnk-ci-$$-$node" "$port" "${pg_net[@]}" -p "127.0.0.1:$port:$listen" "${env_args[@]}" "$image" "${command[@]}" &&
      nodes+=("$node $port ${grace%.*}")
  done
  bases=()
  for entry in "${nodes[@]}"; do
    read -r node port grace <<<"$entry"
    started "lnk-ci-$$-$node" "http://127.0.0.1:$port/readyz" "$label $node" && bases+=("http://127.0.0.1:$port")
  done
  if ((${#bases[@]} == 2)); then
    key=$(bootstrap "lnk-ci-$$-lnk1" "$label lnk1")
    [[ -n $key ]] && link_life "$label (made on lnk1, followed on lnk2)" "$key" "${bases[0]}" "${bases[1]}" >/dev/null
  fi
  for entry in "${nodes[@]}"; do
    read -r node port grace <<<"$entry"
    probes "$label $node" "lnk-ci-$$-$node" "http://127.0.0.1:$port"
    stop "$label $node" "lnk-ci-$$-$node" "${grace:-10}"
  done
fi

if [[ -n $cluster_dir ]]; then
  bun test/setup/cluster.ts stop "$cluster_dir" >/dev/null 2>&1 || echo "warning: the cluster in $cluster_dir did not stop cleanly"
  cluster_dir=
fi

summary
((failed == 0))
