#!/bin/sh
# Stops the service before its binary goes (not on upgrade: the new
# package's postinstall leaves it to the operator to restart).
set -e
if [ "$1" = "remove" ] && [ -d /run/systemd/system ]; then
  systemctl stop kadens.service >/dev/null 2>&1 || true
  systemctl disable kadens.service >/dev/null 2>&1 || true
fi
