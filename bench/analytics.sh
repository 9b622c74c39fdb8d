#!/usr/bin/env bash
# bench/analytics.sh — the analytics API's performance targets (issue 19;
# numbers in docs/PERFORMANCE.md, "Analytics").
#
# It builds kadens, bench/analyticsdata and bench/analyticsload, fills a
# tenant (1,000,000 subscribers, 12,000,000 subscription periods,
# 3,000,000 invoices and payments at SCALE=1), starts `kadens serve`, gets
# an administrative token and runs bench/analyticsload against /analytics.
#
# Usage:  bash bench/analytics.sh
# Environment (all optional):
#   ENGINE=postgres     postgres or sqlite
#   SCALE=1             fraction of the full data set (0.01 for a quick run)
#   PGHOST=127.0.0.1 PGPORT=5432 PGUSER=postgres   PostgreSQL to use; a
#                       database kadens_analytics_bench_$$ is created and
#                       dropped at the end
#   DATABASE_URL=… TENANT=…   reuse a database bench/analyticsdata filled
#                       before (the tenant's id); nothing is created or dropped
#   DATA_DIR=DIR        the data directory: the SQLite database, and on both engines
#                       master.key, which encrypts the signing keys stored in the
#                       database — reusing a PostgreSQL database needs the same
#                       DATA_DIR (default: a temporary one)
#   ONLY=filter,expand,count,apply,paging   targets to run
#   N=200               requests per latency target
#   PAGING_SET=Subscribers   the entity set paged through
#   KADENS_BIN=PATH     benchmark this kadens binary instead of building one
# Every process started is stopped.
set -Eeuo pipefail

ENGINE=${ENGINE:-postgres}
SCALE=${SCALE:-1}
PGHOST=${PGHOST:-127.0.0.1}
PGPORT=${PGPORT:-5432}
PGUSER=${PGUSER:-postgres}
ONLY=${ONLY:-filter,expand,count,apply,paging}
N=${N:-200}
PAGING_SET=${PAGING_SET:-Subscribers}

log() { printf '[analytics %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kadens-analytics.XXXXXX")
PID=""
PGDB=""
cleanup() {
  local rc=$?
  set +e
  if [[ -n "$PID" ]] && kill -0 "$PID" 2>/dev/null; then
    kill -TERM "$PID"; wait "$PID" 2>/dev/null
  fi
  if [[ -n "$PGDB" ]]; then
    log "dropping database $PGDB"
    psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d postgres -c "DROP DATABASE IF EXISTS \"$PGDB\" WITH (FORCE)" >/dev/null 2>&1
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
for t in curl jq; do command -v "$t" >/dev/null || die "$t is not installed"; done

CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
log "machine: $(nproc) CPUs ($CPU_MODEL), $(awk '/^MemTotal/ {printf "%.1f", $2/1048576}' /proc/meminfo) GiB RAM; load $(cut -d' ' -f1-3 /proc/loadavg)"
log "building kadens, bench/analyticsdata, bench/analyticsload"
if [[ -n "${KADENS_BIN:-}" ]]; then cp "$KADENS_BIN" "$WORK/kadens"; else (cd "$ROOT" && go build -o "$WORK/kadens" ./cmd/kadens); fi
(cd "$ROOT" && go build -o "$WORK/analyticsdata" ./bench/analyticsdata && go build -o "$WORK/analyticsload" ./bench/analyticsload)

store=()
case "$ENGINE" in
postgres)
  if [[ -z "${DATABASE_URL:-}" ]]; then
    PGDB="kadens_analytics_bench_$$"
    createdb -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" "$PGDB"
    DATABASE_URL="postgres://$PGUSER@$PGHOST:$PGPORT/$PGDB?sslmode=disable"
  fi
  store=(--database-url "$DATABASE_URL" --data-dir "${DATA_DIR:-$WORK/data}")
  ;;
sqlite)
  store=(--data-dir "${DATA_DIR:-$WORK/data}")
  ;;
*) die "ENGINE must be postgres or sqlite" ;;
esac
"$WORK/kadens" migrate "${store[@]}" >/dev/null 2>&1

if [[ -z "${TENANT:-}" ]]; then
  TENANT=$("$WORK/kadens" tenant create --name "analytics-bench-$$" --json "${store[@]}" | jq -r .id)
  log "generating SCALE=$SCALE into tenant $TENANT"
  gen=(-tenant "$TENANT" -scale "$SCALE")
  if [[ "$ENGINE" == postgres ]]; then gen+=(-database-url "$DATABASE_URL"); else gen+=(-data-dir "${DATA_DIR:-$WORK/data}"); fi
  start=$(date +%s)
  "$WORK/analyticsdata" "${gen[@]}" >/dev/null
  log "generated in $(($(date +%s) - start)) s"
fi
SUBSCRIBERS=$(awk -v s="$SCALE" 'BEGIN { printf "%d", s * 1000000 }')

port=$((20000 + RANDOM % 40000))
base="http://127.0.0.1:$port"
"$WORK/kadens" serve "${store[@]}" --listen "127.0.0.1:$port" --log-level warn >"$WORK/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do curl -sf "$base/readyz" >/dev/null && break; sleep 0.2; done
curl -sf "$base/readyz" >/dev/null || { cat "$WORK/server.log" >&2; die "server did not get ready"; }
client=$("$WORK/kadens" client create --tenant "$TENANT" --json "${store[@]}" --listen "127.0.0.1:$port")
token=$(curl -s -u "$(jq -r .clientId <<<"$client"):$(jq -r .clientSecret <<<"$client")" -d grant_type=client_credentials \
  "$(jq -r .tokenUrl <<<"$client")" | jq -r .access_token)
[[ -n "$token" && "$token" != null ]] || die "no access token"
log "server pid $PID, idle VmRSS $(awk '/VmRSS/ {print $2/1024 " MB"}' /proc/$PID/status)"
"$WORK/analyticsload" -url "$base/analytics" -token "$token" -tenant "$TENANT" -pid "$PID" -n "$N" \
  -subscribers "$SUBSCRIBERS" -only "$ONLY" -paging-set "$PAGING_SET"
