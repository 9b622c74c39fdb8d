#!/usr/bin/env bash
# loginshot.sh — a screenshot of Kadens' subscriber login page, taken by
# headless Chromium at a phone's viewport, to look at the page as a reader
# would (orgname, language, mobile layout).
#
#   scripts/loginshot.sh LOGIN_PAGE_URL OUT.png [WIDTHxHEIGHT]
#
# LOGIN_PAGE_URL is the page /authorize redirects to ({idp_url}/login?id=…):
# start a login in a browser or with curl -si '{idp_url}/authorize?
# response_type=code&client_id=…&redirect_uri=…&scope=openid&state=x&
# orgname=Avisa&language=nb' and take its Location. The default size is
# 390x844 (a common phone). internal/idp's TestLoginPageScreenshot runs this
# script and checks the PNG whenever Chromium is installed; .ci/run installs
# it and requires the test to run (see docs/LOGIN.md).
set -euo pipefail
url=${1:?usage: loginshot.sh LOGIN_PAGE_URL OUT.png [WIDTHxHEIGHT]}
out=${2:?usage: loginshot.sh LOGIN_PAGE_URL OUT.png [WIDTHxHEIGHT]}
size=${3:-390x844}
browser=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$browser" ]; then
  echo "loginshot: no chromium found (apt-get install -y chromium, or set CHROMIUM)" >&2
  exit 3
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$profile" --window-size="${size/x/,}" --screenshot="$out" "$url" >/dev/null 2>&1
test -s "$out"
echo "$out"
