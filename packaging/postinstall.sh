#!/bin/sh
# The state directory exists before the first start, so operator commands
# (run as the kadens user) work at once; systemd learns of the unit. The
# service is not started: its settings come first.
set -e
install -d -o kadens -g kadens -m 0700 /var/lib/kadens
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null || true
fi
if [ "$1" = "configure" ] && [ -z "$2" ]; then
  echo "kadens: edit /etc/kadens/kadens.env, then: systemctl enable --now kadens"
fi
