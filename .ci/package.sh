#!/usr/bin/env bash
# CI step: build the Debian package with the release script, install it with
# dpkg, check its systemd unit with `systemd-analyze verify` (no warnings
# allowed), and start the installed binary the way the unit does — its
# ExecStart, its EnvironmentFile, its User, its WorkingDirectory — and check
# it answers. CI's machine runs no systemd (PID 1 is not systemd), so the
# unit cannot be started by systemctl; verify plus this start is the check.
# Removes the package again at the end. Run as root (dpkg, setpriv).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo /root/go)/bin:$PATH"

if dpkg -s kadens >/dev/null 2>&1; then
  echo "package: a kadens package is installed already; this check installs and purges its own (stop)" >&2
  exit 1
fi
arch=$(dpkg --print-architecture)
out=$(mktemp -d)
version="0.0.0+ci$(date -u +%Y%m%d)"
cleanup() {
  local rc=$?
  if [ -n "${pid:-}" ]; then kill "$pid" 2>/dev/null || true; fi
  dpkg --purge kadens >/dev/null 2>&1 || true
  rm -rf "$out" /var/lib/kadens /etc/kadens
  exit $rc
}
trap cleanup EXIT

echo "package: building kadens $version for linux/$arch"
VERSION=$version TARGETS=linux/$arch OUT=$out scripts/release.sh
(cd "$out" && sha256sum -c SHA256SUMS)
deb=$(ls "$out"/kadens_*_"$arch".deb)

echo "package: dpkg -i $(basename "$deb")"
dpkg -i "$deb"
dpkg -s kadens | grep -q "^Version: $version$"
unit=/usr/lib/systemd/system/kadens.service
for f in /usr/bin/kadens "$unit" /etc/kadens/kadens.env; do
  [ -e "$f" ] || { echo "package: $f is not installed" >&2; exit 1; }
done
[ "$(stat -c '%U:%G %a' /etc/kadens/kadens.env)" = "root:kadens 640" ] || {
  echo "package: /etc/kadens/kadens.env is $(stat -c '%U:%G %a' /etc/kadens/kadens.env), want root:kadens 640" >&2; exit 1; }

printed=$(/usr/bin/kadens version)
echo "package: $printed"
case $printed in
  "kadens $version revision "*) ;;
  *) echo "package: kadens version printed \"$printed\", want the version $version" >&2; exit 1 ;;
esac

if ! command -v systemd-analyze >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq systemd >/dev/null
fi
echo "package: systemd-analyze verify $unit"
verify=$(systemd-analyze verify "$unit" 2>&1) || { echo "$verify" >&2; exit 1; }
if [ -n "$verify" ]; then
  echo "package: systemd-analyze verify warned:" >&2; echo "$verify" >&2; exit 1
fi

# Start it as the unit would. The unit's settings, read from the unit file:
key() { sed -n "s/^$1=//p" "$unit" | tail -1; }
user=$(key User) workdir=$(key WorkingDirectory) envfile=$(key EnvironmentFile) execstart=$(key ExecStart)
[ "$user" = kadens ] && [ -d "$workdir" ] && [ -r "$envfile" ] || {
  echo "package: User=$user WorkingDirectory=$workdir EnvironmentFile=$envfile do not fit the installed files" >&2; exit 1; }
# The listen address of the env file, on a free port should CI's 8080 be taken.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo 18080)
echo "package: starting \"$execstart\" as $user in $workdir with $envfile (listen 127.0.0.1:$port)"
log="$out/serve.log"
(
  cd "$workdir"
  set -a; . "$envfile"; set +a
  export KADENS_LISTEN=127.0.0.1:$port
  # As systemd does: the user's ids and groups, no PAM session in between
  # (runuser's would catch the SIGTERM meant for the service).
  # shellcheck disable=SC2086 # ExecStart is a command line
  exec setpriv --reuid="$user" --regid="$user" --init-groups -- $execstart
) >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
  kill -0 "$pid" 2>/dev/null || { echo "package: the service ended:" >&2; cat "$log" >&2; exit 1; }
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { echo "package: the service did not get ready:" >&2; cat "$log" >&2; exit 1; }
curl -fsS "http://127.0.0.1:$port/" | grep -q '<title>Kadens</title>' || { echo "package: / does not answer the page" >&2; exit 1; }
[ "$(stat -c %U /var/lib/kadens/kadens.db)" = kadens ] || { echo "package: the database is not the service user's" >&2; exit 1; }
kill -TERM "$pid"
wait "$pid" || { echo "package: the service did not stop cleanly on SIGTERM:" >&2; cat "$log" >&2; exit 1; }
pid=
echo "package: installed, verified, started as the unit and answered; stopped on SIGTERM"
