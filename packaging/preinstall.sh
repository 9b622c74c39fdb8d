#!/bin/sh
# Creates the system user the service runs as (and who owns its state and
# reads its settings), before the files are unpacked.
set -e
if ! getent group kadens >/dev/null; then
  addgroup --system --quiet kadens
fi
if ! getent passwd kadens >/dev/null; then
  adduser --system --quiet --ingroup kadens --home /var/lib/kadens --no-create-home \
    --shell /usr/sbin/nologin --gecos "Kadens service" kadens
fi
