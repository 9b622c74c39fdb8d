#!/usr/bin/env bash
# Moves a generated tenant of 10,000 subscribers with running subscriptions
# (docs/MIGRATION.md): dry run, import, rerun, then the first renewals billed
# and checked one by one against the catalog. It is TestImportTenant at the
# issue's size, without the race detector; the test logs the times (rows/s)
# that docs/PERFORMANCE.md records.
#   bench/import.sh                      # SQLite
#   KADENS_TEST_POSTGRES_URL=postgres://... bench/import.sh   # SQLite and PostgreSQL
set -euo pipefail
cd "$(dirname "$0")/.."
KADENS_IMPORT_SUBSCRIBERS="${KADENS_IMPORT_SUBSCRIBERS:-10000}" \
	go test -count=1 -timeout 30m -run 'TestImportTenant$' -v ./internal/tenantimport | grep -E 'import_test|PASS|FAIL|ok'
