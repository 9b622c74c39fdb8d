package store

import (
	"errors"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// IsDiskFull reports whether err says the storage is full, so the API can
// say so (507) instead of answering an unexplained 500: SQLite's
// SQLITE_FULL (the disk, or the database's max_page_count), PostgreSQL's
// disk_full (SQLSTATE 53100), or ENOSPC from a file Kadens writes (a
// spooled request body, say). The transaction that met it rolled back.
func IsDiskFull(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "53100"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code()&0xff == sqlite3.SQLITE_FULL
	}
	return errors.Is(err, syscall.ENOSPC)
}
