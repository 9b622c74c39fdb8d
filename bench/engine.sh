#!/usr/bin/env bash
# bench/engine.sh — benchmark of the subscription engine, the harness behind
# the "Subscription engine" section of docs/PERFORMANCE.md.
#
# It builds bench/engine once and runs it for each engine and size: the
# program fills a fresh database with N active monthly subscriptions (starts
# spread over January, 100 per subscriber; with billing, each with its first
# invoice, as order completion issues it; on PostgreSQL followed by ANALYZE,
# as autovacuum would have run) and advances the tenant to late February, so
# every subscription renews exactly once (new period, update of the old one,
# SubscriptionCreated event; with billing also the payment demand, invoice,
# ledger entries and InvoiceIssued event, and afterwards `kadens ledger
# check`'s check of the tenant, which must be clean). It prints one RESULT line; this
# script collects them and checks the targets:
#   - N=100,000 advanced at >= 5,000 renewals/s (<= 20 s), per engine;
#   - cost per renewal flat: us_per_renewal(100k) / us_per_renewal(10k) <= 1.25;
#   - peak RSS of the process during the advance <= 300 MB.
#
# Usage:  bash bench/engine.sh
# Environment (all optional):
#   SIZES="10000 100000"       subscription counts (flatness needs both)
#   ENGINES="sqlite postgres"  postgres only runs when psql reaches it
#   BILLING=0                  0: the engine alone (renewals and their
#                              SubscriptionCreated events; bench/engine
#                              -billing=false); 1: also billing, as kadens
#                              serve wires it (payment demands, invoices);
#                              "0 1": both, reported as ENGINE and
#                              ENGINE+billing
#   RUNS=1                     runs of each (engine, size); the summary gives
#                              the median and the range
#   POLL=1                     seconds between CPU samples of a run
#   QUIET_WAIT=120             wait up to this many seconds for other work on
#                              the machine to stop before each run (0: don't)
#   RUN_TIMEOUT=900            seconds before one run is killed
#   PGHOST=127.0.0.1 PGPORT=5432 PGUSER=postgres   PostgreSQL to use; each
#                              run gets a fresh database, created and dropped
#   ENGINE_BIN=PATH            use this bench/engine binary instead of building
#   PROFILE_DIR=DIR            write a CPU profile of each advance to DIR
#                              (bench/engine -cpuprofile); read it with
#                              `go tool pprof -top BINARY DIR/FILE`
#   RESULTS=FILE               also write the runs as TSV to FILE
# Exits non-zero if a run fails. Only 127.0.0.1 is contacted.
set -euo pipefail

SIZES=${SIZES:-"10000 100000"}
ENGINES=${ENGINES:-"sqlite postgres"}
BILLING=${BILLING:-0}
RUNS=${RUNS:-1}
# Seconds between CPU samples during a run. Each sample forks ps, awk and
# grep; at 0.2 s that took a fifth of a CPU and slowed the run it measured.
POLL=${POLL:-1}
QUIET_WAIT=${QUIET_WAIT:-120}
RUN_TIMEOUT=${RUN_TIMEOUT:-900}
PGHOST=${PGHOST:-127.0.0.1}
PGPORT=${PGPORT:-5432}
PGUSER=${PGUSER:-postgres}
PROFILE_DIR=${PROFILE_DIR:-}
RESULTS=${RESULTS:-}

log() { printf '[engine %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kadens-engine-bench.XXXXXX")
PGDB=""
RUNPID=""
cleanup() {
  local rc=$?
  set +e
  if [[ -n "$RUNPID" ]] && kill -0 "$RUNPID" 2>/dev/null; then
    kill -TERM "$RUNPID" 2>/dev/null
    wait "$RUNPID" 2>/dev/null
  fi
  if [[ -n "$PGDB" ]]; then
    log "dropping database $PGDB"
    psql_admin -c "DROP DATABASE IF EXISTS \"$PGDB\" WITH (FORCE)" >/dev/null 2>&1
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
  export PATH="/usr/local/go/bin:$PATH"
fi

# ---------------------------------------------------------------- helpers
CLK_TCK=$(getconf CLK_TCK)
# machine_ticks: "busy idle steal" jiffies summed over all CPUs (/proc/stat).
machine_ticks() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8, $5 + $6, $9}' /proc/stat; }
# proc_ticks PID: user+system CPU jiffies of a process (empty if gone).
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || true; }
# pg_sample DB: "pid jiffies class" for each PostgreSQL server process; class
# is "ours" for the backends of database DB and for the shared processes
# (postmaster, WAL writer, checkpointer, ...), "other" for backends of other
# databases (other people's tests).
pg_sample() {
  ps -C postgres -o pid=,args= 2>/dev/null | awk -v db="$1" '{
    pid = $1; line = $0; sub(/^ *[0-9]+ +/, "", line)
    cls = "ours"
    if (line ~ /^postgres: / && line !~ /checkpointer|background writer|walwriter|autovacuum launcher|logical replication|archiver|stats/) {
      if (db == "" || index(line " ", " " db " ") == 0) cls = "other"
    }
    f = "/proc/" pid "/stat"
    if ((getline l < f) > 0) { split(l, a, " "); print pid, a[14] + a[15], cls }
    close(f)
  }'
}

# wait_quiet NAME: wait (up to QUIET_WAIT s) for a 2-second window in which
# the machine is at least 90% idle (the same rule as bench/api.sh).
wait_quiet() {
  local name=$1 deadline=$((SECONDS + QUIET_WAIT)) a b busy
  ((QUIET_WAIT > 0)) || return 0
  while :; do
    a=$(machine_ticks)
    sleep 2
    b=$(machine_ticks)
    busy=$(awk -v a="$a" -v b="$b" 'BEGIN {
      split(a, x, " "); split(b, y, " ")
      t = (y[1] - x[1]) + (y[2] - x[2]) + (y[3] - x[3]); if (t <= 0) t = 1
      printf "%.0f", 100 * ((y[1] - x[1]) + (y[3] - x[3])) / t }')
    ((busy <= 10)) && return 0
    if ((SECONDS >= deadline)); then
      log "$name: WARNING: the machine is still ${busy}% busy with other work after ${QUIET_WAIT}s; measuring anyway"
      return 0
    fi
    log "$name: machine ${busy}% busy with other work; waiting for it to calm down"
  done
}

psql_admin() {
  local db
  for db in postgres test; do
    if psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d "$db" -X -Atq -v ON_ERROR_STOP=1 "$@" 2>/dev/null; then
      return 0
    fi
  done
  return 1
}
pg_available() {
  command -v psql >/dev/null || return 1
  [[ $(PGCONNECT_TIMEOUT=3 psql_admin -c 'SELECT 1' || true) == 1 ]]
}

# ---------------------------------------------------------------- build
if [[ -n "${ENGINE_BIN:-}" ]]; then
  BIN=$ENGINE_BIN
  log "using $BIN"
else
  command -v go >/dev/null || die "go is not installed"
  REV=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
  log "building bench/engine (work tree at $REV)"
  (cd "$ROOT" && go build -o "$WORK/engine" ./bench/engine)
  BIN="$WORK/engine"
fi
CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
log "machine: $(nproc) CPUs ($CPU_MODEL), $(awk '/^MemTotal/ {printf "%.1f", $2/1048576}' /proc/meminfo) GiB RAM; $(go version 2>/dev/null | cut -d' ' -f3 || true)"
[[ -z "$PROFILE_DIR" ]] || mkdir -p "$PROFILE_DIR"

# ---------------------------------------------------------------- one run
# Results, one line per run: engine n run seconds rps us rss other_pct db_pct
ROWS=()
FAILED=0

# run_one ENGINE N RUN BILLING: one bench/engine run; appends to ROWS.
run_one() {
  local engine=$1 n=$2 run=$3 billing=$4 args=(-n "$n")
  local label=$engine
  if [[ "$billing" == 1 ]]; then
    label="$engine+billing"
    args+=(-billing=true)
  else
    args+=(-billing=false)
  fi
  local name="$label n=$n run $run" out="$WORK/$label-$n-$run.out" prof=""
  if [[ "$engine" == postgres ]]; then
    PGDB="kadens_engine_bench_$$_${n}_$run"
    psql_admin -c "CREATE DATABASE \"$PGDB\"" >/dev/null || die "could not create database $PGDB"
    args+=(-database-url "postgres://$PGUSER@$PGHOST:$PGPORT/$PGDB?sslmode=disable")
  fi
  if [[ -n "$PROFILE_DIR" ]]; then
    prof="$PROFILE_DIR/$label-$n-$run.cpu.pprof"
    args+=(-cpuprofile "$prof")
  fi
  wait_quiet "$name"
  log "$name: filling $n subscriptions"
  "$BIN" "${args[@]}" >"$out" 2>&1 &
  RUNPID=$!
  # CPU accounting covers the advance only: from the first poll after
  # "filled in" to the first poll after RESULT (POLL granularity). Every
  # process is sampled on each poll, so processes that exit (PostgreSQL
  # backends of other tests, the benchmark itself) keep their last value.
  local deadline=$((SECONDS + RUN_TIMEOUT)) state=fill m0="" m1="" b0=0 bl=0 t pid c rc=0 timed_out=0
  local -A pg0=() pgl=() pgc=()
  while kill -0 "$RUNPID" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      log "$name: still running after ${RUN_TIMEOUT}s; stopping it"
      timed_out=1
      kill -TERM "$RUNPID" 2>/dev/null || true
      break
    fi
    case $state in
    fill)
      if grep -q '^filled in' "$out"; then
        m0=$(machine_ticks)
        t=$(proc_ticks "$RUNPID")
        b0=${t:-0} bl=${t:-0}
        while read -r pid t c; do pg0[$pid]=$t pgl[$pid]=$t pgc[$pid]=$c; done < <(pg_sample "$PGDB")
        state=advance
        log "$name: $(grep '^filled in' "$out"); advancing one month"
      fi
      ;;
    advance)
      t=$(proc_ticks "$RUNPID")
      [[ -z "$t" ]] || bl=$t
      while read -r pid t c; do
        [[ -n "${pg0[$pid]:-}" ]] || pg0[$pid]=0
        pgl[$pid]=$t pgc[$pid]=$c
      done < <(pg_sample "$PGDB")
      if grep -q '^RESULT ' "$out"; then
        m1=$(machine_ticks)
        state=done
      fi
      ;;
    esac
    sleep "$POLL"
  done
  wait "$RUNPID" || rc=$?
  RUNPID=""
  ((timed_out == 0)) || rc=124
  if [[ "$engine" == postgres ]]; then
    psql_admin -c "DROP DATABASE IF EXISTS \"$PGDB\" WITH (FORCE)" >/dev/null || true
  fi
  local d=0
  for pid in "${!pgl[@]}"; do
    if [[ "${pgc[$pid]}" == ours ]]; then d=$((d + pgl[$pid] - pg0[$pid])); fi
  done
  PGDB=""
  local line
  line=$(grep '^RESULT ' "$out" || true)
  if ((rc != 0)) || [[ -z "$line" ]]; then
    tail -n 5 "$out" >&2 || true
    log "$name: FAILED (exit status $rc$( ((rc == 124)) && echo ", timed out after ${RUN_TIMEOUT}s"))"
    FAILED=1
    return 0
  fi
  [[ -n "$m0" ]] || m0=$(machine_ticks)
  [[ -n "$m1" ]] || m1=$(machine_ticks)
  val() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$line"; }
  # Where the machine's CPU went during the advance: this benchmark process,
  # PostgreSQL, everything else (other work on the machine, and steal).
  local shares
  shares=$(awk -v a="$m0" -v b="$m1" -v p="$((bl - b0))" -v d="$d" -v pg="$([[ $engine == postgres ]] && echo 1 || echo 0)" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    busy = y[1] - x[1]; idle = y[2] - x[2]; steal = y[3] - x[3]; total = busy + idle + steal
    if (total <= 0) total = 1
    if (!pg) d = 0
    o = busy - p - d; if (o < 0) o = 0
    printf "%.0f %.0f %.0f %.0f", 100 * p / total, 100 * d / total, 100 * (o + steal) / total, 100 * idle / total
  }')
  local bench_pct db_pct other_pct idle_pct
  read -r bench_pct db_pct other_pct idle_pct <<<"$shares"
  ROWS+=("$label $n $run $(val seconds) $(val renewals_per_s) $(val us_per_renewal) $(val peak_rss_mib) $other_pct $db_pct $bench_pct $idle_pct")
  log "$name: $(val renewals) renewals in $(val seconds) s = $(val renewals_per_s)/s, $(val us_per_renewal) us/renewal, peak RSS $(val peak_rss_mib) MiB"
  log "$name: CPU during the advance (% of $(nproc) CPUs): bench/engine ${bench_pct}%$([[ $engine == postgres ]] && echo ", postgresql ${db_pct}%"), other ${other_pct}%, idle ${idle_pct}%"
  if ((other_pct > 10)); then
    log "$name: WARNING: ${other_pct}% of the machine's CPU went to other processes (or steal) during the advance; rerun on a quiet machine"
  fi
  local ledger
  ledger=$(grep '^LEDGER ' "$out" || true)
  [[ -z "$ledger" ]] || log "$name: ledger check (clean): ${ledger#LEDGER }"
  [[ -z "$prof" ]] || log "$name: CPU profile in $prof (go tool pprof -top $BIN $prof)"
}

# ---------------------------------------------------------------- run
RUN_ENGINES=()
for engine in $ENGINES; do
  case "$engine" in
  sqlite) RUN_ENGINES+=(sqlite) ;;
  postgres)
    if pg_available; then
      RUN_ENGINES+=(postgres)
    else
      log "postgres: psql does not reach $PGUSER@$PGHOST:$PGPORT; skipped"
    fi
    ;;
  *) die "unknown engine $engine (want sqlite or postgres)" ;;
  esac
done
# Runs are interleaved (run 1 of everything, then run 2, ...) so that a
# noisy period on the machine does not land on one configuration only.
for b in $BILLING; do
  [[ "$b" == 0 || "$b" == 1 ]] || die "BILLING must be 0, 1 or \"0 1\", not '$BILLING'"
done
LABELS=()
for engine in "${RUN_ENGINES[@]}"; do
  for b in $BILLING; do
    if [[ "$b" == 1 ]]; then LABELS+=("$engine+billing"); else LABELS+=("$engine"); fi
  done
done
for run in $(seq 1 "$RUNS"); do
  for engine in "${RUN_ENGINES[@]}"; do
    for b in $BILLING; do
      for n in $SIZES; do
        run_one "$engine" "$n" "$run" "$b"
      done
    done
  done
done

# ---------------------------------------------------------------- summary
# quiet_rows ENGINE N: the runs of (ENGINE, N) in which other processes took
# at most 10% of the machine's CPU — or all of its runs if none was quiet.
quiet_rows() {
  printf '%s\n' "${ROWS[@]}" | awk -v e="$1" -v n="$2" '$1 == e && $2 == n {all[++k] = $0; if ($8 <= 10) q[++j] = $0}
    END { if (j) for (i = 1; i <= j; i++) print q[i]; else for (i = 1; i <= k; i++) print all[i] }'
}
# stat ENGINE N FIELD: "median min max" of a column over quiet_rows.
stat() {
  quiet_rows "$1" "$2" | awk -v f="$3" '{v[++k] = $f}
    END {
      if (!k) { print "- - -"; exit }
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      med = (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
      print med, v[1], v[k]
    }'
}
verdict() { if [[ $1 == 1 ]]; then echo met; else echo MISSED; fi; }

echo
echo "subscription engine: advance N active monthly subscriptions by one month; $(nproc) CPUs ($CPU_MODEL), $(go version 2>/dev/null | cut -d' ' -f3 || true)"
printf '%-16s %7s %4s %9s %12s %13s %13s %7s %7s\n' engine N run seconds renewals/s us/renewal peak-RSS other pg-cpu
for row in "${ROWS[@]}"; do
  read -r e n r s rps us rss o d _ _ <<<"$row"
  printf '%-16s %7s %4s %9s %12s %13s %9s MiB %6s%% %6s\n' "$e" "$n" "$r" "$s" "$rps" "$us" "$rss" "$o" \
    "$([[ $e == postgres* ]] && echo "$d%" || echo -)"
done
echo "(peak-RSS: VmHWM of the bench process during the advance; other: share of the machine's CPU taken by other processes or steal during the advance; pg-cpu: PostgreSQL's share)"
echo "(medians and ranges below use the quiet runs, other <= 10%, when a configuration has any)"

sizes=($SIZES)
small=${sizes[0]}
large=${sizes[${#sizes[@]}-1]}
for engine in "${LABELS[@]}"; do
  read -r s_med s_min s_max <<<"$(stat "$engine" "$large" 4)"
  read -r r_med r_min r_max <<<"$(stat "$engine" "$large" 5)"
  read -r ul_med ul_min ul_max <<<"$(stat "$engine" "$large" 6)"
  read -r us_med us_min us_max <<<"$(stat "$engine" "$small" 6)"
  [[ "$r_med" != - ]] || { echo "$engine: no successful run at N=$large"; continue; }
  rss_max=$(printf '%s\n' "${ROWS[@]}" | awk -v e="$engine" '$1 == e && $7 > m {m = $7} END {print m + 0}')
  nq=$(quiet_rows "$engine" "$large" | awk '$8 <= 10' | wc -l)
  na=$(quiet_rows "$engine" "$large" | wc -l)
  if ((nq > 0)); then runs="$nq quiet runs"; else runs="$na runs, NONE quiet"; fi
  echo "$engine N=$large: $r_med renewals/s (median; $r_min–$r_max over $runs), $s_med s;" \
    "us/renewal N=$small $us_med ($us_min–$us_max), N=$large $ul_med ($ul_min–$ul_max); peak RSS max ${rss_max} MiB"
  if [[ "$us_med" != - && "$small" != "$large" ]]; then
    ratio=$(awk -v a="$ul_med" -v b="$us_med" 'BEGIN {printf "%.2f", a / b}')
    flat="flatness us/renewal($large)/us/renewal($small) = $ratio (<= 1.25: $(verdict "$(awk -v r="$ratio" 'BEGIN {print (r <= 1.25)}')"))"
  else
    flat="flatness: needs two sizes"
  fi
  echo "targets ($engine): >= 5000 renewals/s at N=$large: $(verdict "$(awk -v r="$r_med" 'BEGIN {print (r >= 5000)}')");" \
    "<= 20 s: $(verdict "$(awk -v s="$s_med" 'BEGIN {print (s <= 20)}')"); $flat;" \
    "peak RSS <= 300 MB: $(verdict "$(awk -v m="$rss_max" 'BEGIN {print (m * 1048576 <= 300e6)}')")"
done
if [[ -n "$RESULTS" ]]; then
  {
    printf 'engine\tn\trun\tseconds\trenewals_per_s\tus_per_renewal\tpeak_rss_mib\tother_cpu_pct\tpostgres_cpu_pct\tbench_cpu_pct\tidle_pct\n'
    printf '%s\n' "${ROWS[@]}" | tr ' ' '\t'
  } >"$RESULTS"
fi
((FAILED == 0)) || die "some runs failed"
log "done"
