#!/usr/bin/env bash
# npm run test:container: the container image and compose file, tested (docs/containers.md). Not part of `npm test`.
#
#  1. installs what it needs with apt when missing (podman, runc, mmdebstrap; podman-compose 1.0.6 from
#     bookworm-backports on Debian 12);
#  2. makes the Debian base image from Debian's packages (mmdebstrap), once, and the Postgres image on it;
#  3. builds the service's image (Containerfile), then again from its cache: the cold (or cached) and the warm time;
#  4. starts an Anvil with this release's contracts on the host (containers/chain.ts), then compose.yaml with the
#     host-network override (containers/compose.host.yaml): Postgres, indexer, processors and API in containers;
#  5. waits for /api/health, creates a merchant and its API key with the image's CLI, creates a payment, lists it,
#     pays it on Anvil and waits until it is completed (containers/check.ts);
#  6. stops the service's containers with SIGTERM and checks that each exits 0 by itself;
#  7. prints the image's size and the build times; removes the containers, their volume and Anvil, even on failure.
#
# Options: --cold  rebuild the base and build the image without its cache (the cold build time).
# The images stay (localhost/chainpay, localhost/chainpay-postgres, localhost/chainpay-base:trixie): the next run's
# builds are warm. Runs as root (apt, podman's root storage).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
COLD=0
for arg in "$@"; do
  case "$arg" in
    --cold) COLD=1 ;;
    *)
      echo "usage: scripts/test-container.sh [--cold]" >&2
      exit 2
      ;;
  esac
done

export CONTAINERS_CONF=$ROOT/containers/containers.conf
IMAGE=localhost/chainpay:latest
PG_IMAGE=localhost/chainpay-postgres:latest
BASE=localhost/chainpay-base:trixie
PROJECT=chainpay-test
T0=$(date +%s)

log() { printf '[test:container %s] %s\n' "$(date +%T)" "$*"; }
fail() {
  log "FAILED: $*"
  exit 1
}
seconds() { echo $(($(date +%s) - $1)); }

# 1. Tools. -------------------------------------------------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then fail "run as root (apt installs, podman's root storage)"; fi
missing=()
for tool in podman runc mmdebstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
compose_ok() {
  command -v podman-compose >/dev/null &&
    dpkg --compare-versions "$(podman-compose version 2>/dev/null | sed -n 's/^podman-compose version //p' | head -1)" ge 1.0.6
}
if [ "${#missing[@]}" -gt 0 ] || ! compose_ok; then
  log "installing ${missing[*]} podman-compose (apt)"
  export DEBIAN_FRONTEND=noninteractive
  # podman-compose 1.0.6 (the version known to work here; Debian 12 has 1.0.3): from bookworm-backports on Debian 12.
  release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  compose_target=()
  if [ "$release" = bookworm ]; then
    if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
      printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        >/etc/apt/sources.list.d/bookworm-backports.sources
    fi
    compose_target=(-t bookworm-backports)
  fi
  apt-get update -qq
  if [ "${#missing[@]}" -gt 0 ]; then
    apt-get install -y -qq --no-install-recommends "${missing[@]}" uidmap debian-archive-keyring >/dev/null
  fi
  apt-get install -y -qq --no-install-recommends "${compose_target[@]}" podman-compose >/dev/null
  compose_ok || fail "podman-compose 1.0.6 or later is needed"
fi
log "$(podman --version), $(runc --version | head -1), $(podman-compose version 2>/dev/null | sed -n 's/^podman-compose version //p' | head -1 | sed 's/^/podman-compose /')"

WORK=$(mktemp -d /tmp/chainpay-container-test.XXXXXX)
CHAIN_PID=
STARTED=0
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
export POSTGRES_PASSWORD POSTGRES_PORT CHAINPAY_PORT PONDER_PORT CHAINPAY_ENV_FILE=$WORK/chainpay.env
POSTGRES_PASSWORD=$(node -e 'console.log(require("crypto").randomBytes(24).toString("hex"))')
POSTGRES_PORT=$(free_port)
CHAINPAY_PORT=$(free_port)
PONDER_PORT=$(free_port)
compose() { podman-compose --project-name "$PROJECT" -f compose.yaml -f containers/compose.host.yaml "$@"; }
SERVICES=(indexer processors api)
container() { echo "${PROJECT}_$1_1"; }

cleanup() {
  code=$?
  set +e
  if [ "$code" != 0 ] && [ "$STARTED" = 1 ]; then
    for s in postgres "${SERVICES[@]}"; do
      echo "----- $(container "$s") (last 60 lines)"
      podman logs --tail 60 "$(container "$s")" 2>&1
    done
  fi
  if [ "$code" != 0 ] && [ -s "$WORK/chain.log" ]; then
    echo "----- containers/chain.ts"
    cat "$WORK/chain.log"
  fi
  log "tearing down"
  if [ "$STARTED" = 1 ]; then
    compose down -v -t 10 >/dev/null 2>&1
    for s in postgres "${SERVICES[@]}"; do podman rm -f "$(container "$s")" >/dev/null 2>&1; done
    podman volume rm -f "${PROJECT}_pgdata" >/dev/null 2>&1
  fi
  if [ -n "$CHAIN_PID" ]; then
    kill "$CHAIN_PID" 2>/dev/null
    wait "$CHAIN_PID" 2>/dev/null
  fi
  rm -rf "$WORK"
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 2. Base and Postgres images. ------------------------------------------------------------------------------------
BASE_S=cached
if [ "$COLD" = 1 ]; then
  for image in "$IMAGE" "$PG_IMAGE" "$BASE"; do podman rmi -f "$image" >/dev/null 2>&1 || true; done
  podman image prune -f >/dev/null 2>&1 || true
fi
if ! podman image exists "$BASE"; then
  log "making $BASE (mmdebstrap minbase trixie)"
  t=$(date +%s)
  # Debian's packages only; documentation, manuals and translations left out, as in Debian's slim images.
  mmdebstrap --quiet --variant=minbase --include=ca-certificates,tini \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    trixie - | podman import --quiet --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null
  BASE_S=$(seconds "$t")
  log "base made in ${BASE_S} s"
fi
CA_SECRET=()
if [ -s /etc/ssl/certs/ca-certificates.crt ]; then CA_SECRET=(--secret id=ca,src=/etc/ssl/certs/ca-certificates.crt); fi
build() { podman build --network host --layers "${CA_SECRET[@]}" "$@"; }

log "building $PG_IMAGE"
t=$(date +%s)
build --quiet -t "$PG_IMAGE" containers/postgres >/dev/null
PG_S=$(seconds "$t")

# 3. The service's image: the first build (cold with --cold or on a new machine), then a warm one. ------------------
log "building $IMAGE ($([ "$COLD" = 1 ] && echo "cold: no cache" || echo "with the cache there is"))"
t=$(date +%s)
if [ "$COLD" = 1 ]; then build --no-cache -t "$IMAGE" . >"$WORK/build.log" 2>&1 || {
  tail -40 "$WORK/build.log"
  fail "build"
}; else build -t "$IMAGE" . >"$WORK/build.log" 2>&1 || {
  tail -40 "$WORK/build.log"
  fail "build"
}; fi
FIRST_S=$(seconds "$t")
log "built in ${FIRST_S} s"
t=$(date +%s)
build --quiet -t "$IMAGE" . >/dev/null
WARM_S=$(seconds "$t")
log "warm build in ${WARM_S} s"

# 4. Chain on the host, the service in containers. -----------------------------------------------------------------
log "starting Anvil and deploying the contracts (containers/chain.ts)"
node --import tsx containers/chain.ts "$CHAINPAY_ENV_FILE" >"$WORK/chain.log" 2>&1 &
CHAIN_PID=$!
for _ in $(seq 1 120); do
  [ -f "$CHAINPAY_ENV_FILE" ] && break
  kill -0 "$CHAIN_PID" 2>/dev/null || fail "containers/chain.ts exited"
  sleep 0.5
done
[ -f "$CHAINPAY_ENV_FILE" ] || fail "no chain after 60 s"
log "$(cat "$WORK/chain.log")"

log "starting Postgres (127.0.0.1:$POSTGRES_PORT)"
STARTED=1
compose up -d postgres >"$WORK/compose.log" 2>&1 || {
  cat "$WORK/compose.log"
  fail "compose up postgres"
}
for _ in $(seq 1 60); do
  podman exec "$(container postgres)" /usr/lib/postgresql/17/bin/pg_isready -q -h 127.0.0.1 -p "$POSTGRES_PORT" && break
  sleep 1
done
podman exec "$(container postgres)" /usr/lib/postgresql/17/bin/pg_isready -q -h 127.0.0.1 -p "$POSTGRES_PORT" || fail "Postgres is not ready"

log "starting ${SERVICES[*]} (API 127.0.0.1:$CHAINPAY_PORT)"
t=$(date +%s)
compose up -d "${SERVICES[@]}" >>"$WORK/compose.log" 2>&1 || {
  cat "$WORK/compose.log"
  fail "compose up"
}
API=http://127.0.0.1:$CHAINPAY_PORT/api
health=
for _ in $(seq 1 180); do
  health=$(curl -s -o "$WORK/health.json" -w '%{http_code}' "$API/health" || true)
  [ "$health" = 200 ] && break
  sleep 1
done
[ "$health" = 200 ] || {
  cat "$WORK/health.json" 2>/dev/null
  echo
  fail "/api/health answers ${health:-nothing} after 180 s"
}
log "healthy $(seconds "$t") s after the start"

# 5. A merchant and its key (the image's CLI), then the payment through the API. ----------------------------------
# A field of the JSON on stdin; none: exit 1.
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];if(v===undefined)process.exit(1);console.log(v)})' "$1"; }
MERCHANT=$(podman exec "$(container api)" chainpay cli merchant create --name "Container test" | json id)
[ -n "$MERCHANT" ] || fail "merchant create"
API_KEY=$(podman exec "$(container api)" chainpay cli apikey create --merchant "$MERCHANT" | json apiKey)
[ -n "$API_KEY" ] || fail "apikey create"
log "merchant $MERCHANT with an API key"
CHAINPAY_API_URL=$API CHAINPAY_API_KEY=$API_KEY node --import tsx containers/check.ts "$CHAINPAY_ENV_FILE" || fail "the payment"

# 6. SIGTERM: each role stops in order by itself and exits 0. ------------------------------------------------------
for s in "${SERVICES[@]}"; do
  t=$(date +%s)
  podman stop -t 40 "$(container "$s")" >/dev/null
  code=$(podman inspect -f '{{.State.ExitCode}}' "$(container "$s")")
  [ "$code" = 0 ] || fail "$s exited with $code after SIGTERM"
  podman logs --tail 5 "$(container "$s")" 2>&1 | grep -q '"msg":"stopped"' || fail "$s did not log its orderly stop"
  log "$s stopped on SIGTERM in $(seconds "$t") s, exit 0"
done

# 7. Figures. -------------------------------------------------------------------------------------------------------
size() { podman image inspect -f '{{.Size}}' "$1" | awk '{printf "%.0f MB", $1 / 1e6}'; }
log "image $IMAGE: $(size "$IMAGE") (base $(size "$BASE"), Postgres image $(size "$PG_IMAGE"))"
log "build: base ${BASE_S}$([ "$BASE_S" = cached ] || echo " s"), Postgres image ${PG_S} s, service image $([ "$COLD" = 1 ] && echo cold || echo first) ${FIRST_S} s, warm ${WARM_S} s"
log "passed in $(seconds "$T0") s"
