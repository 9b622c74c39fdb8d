#!/usr/bin/env bash
# Runs the README's quick-start command exactly as written (taken from the
# README between the quickstart markers), then the curl lines it prints, and
# checks that the demo organization comes back.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=$(sed -n '/<!-- quickstart-serve -->/,/<!-- \/quickstart-serve -->/p' README.md | grep -v '^<!--' | grep -v '^```' | grep -v '^\s*$')
[ -n "$cmd" ] || { echo "README has no quickstart-serve block"; exit 1; }
work=$(mktemp -d)
trap 'kill $(cat "$work/pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work" ./kadens-data' EXIT
rm -rf ./kadens-data
echo "running: $cmd"
( bash -c "$cmd" >"$work/out" 2>"$work/err" & echo $! >"$work/pid" )
for _ in $(seq 1 120); do grep -q 'API reference' "$work/out" 2>/dev/null && break; sleep 1; done
grep -q 'API reference' "$work/out" || { echo "serve did not become ready:"; cat "$work/out" "$work/err"; exit 1; }
snippet=$(grep -E '^\s+(TOKEN=|curl )' "$work/out" | head -2)
echo "running the printed commands"
result=$(bash -c "$snippet")
echo "$result"
echo "$result" | grep -q '"name":"Nordavis AS"' || { echo "the demo curl did not list the demo organization"; exit 1; }
# The merchant console: log in with the printed e-mail and password and
# see the demo's subscribers.
line=$(grep 'Merchant console:' "$work/out")
email=$(echo "$line" | sed -E 's/.*e-mail ([^,]+),.*/\1/')
pw=$(echo "$line" | sed -E 's/.*password ([^)]+)\).*/\1/')
jar="$work/cookies"
code=$(curl -s -o /dev/null -w '%{http_code}' -c "$jar" -d tenant=demo --data-urlencode "email=$email" --data-urlencode "password=$pw" \
  http://127.0.0.1:8080/console/login)
[ "$code" = 303 ] || { echo "console login with the printed credentials: $code"; exit 1; }
curl -s -b "$jar" 'http://127.0.0.1:8080/console/search?q=a&format=json' | grep -q '"hits":\[{' ||
  { echo "the console's search found none of the demo subscribers"; exit 1; }
echo "the merchant console logs in and searches"
# Min side: the printed subscriber logs in through the identity provider's
# login page (Min side's redirect, the form, the callback) and sees the
# overview.
line=$(grep 'Min side' "$work/out")
email=$(echo "$line" | sed -E 's/.*e-mail ([^,]+),.*/\1/')
pw=$(echo "$line" | sed -E 's/.*password ([^)]+)\).*/\1/')
myjar="$work/my-cookies"
form=$(curl -s -L -c "$myjar" -b "$myjar" 'http://127.0.0.1:8080/my/login?tenant=demo')
id=$(echo "$form" | sed -nE 's/.*name="id" value="([^"]+)".*/\1/p' | head -1)
csrf=$(echo "$form" | sed -nE 's/.*name="csrf" value="([^"]+)".*/\1/p' | head -1)
[ -n "$id" ] && [ -n "$csrf" ] || { echo "Min side did not lead to the login page"; exit 1; }
curl -s -L -c "$myjar" -b "$myjar" --data-urlencode "id=$id" --data-urlencode "csrf=$csrf" --data-urlencode "email=$email" \
  --data-urlencode "password=$pw" http://127.0.0.1:8080/idp/login | grep -q 'Mine abonnementer\|My subscriptions' ||
  { echo "Min side's overview did not answer after the login"; exit 1; }
echo "Min side logs a subscriber in and shows the overview"
pkill -TERM -P "$(cat "$work/pid")" 2>/dev/null || true
echo "README quick start works"
