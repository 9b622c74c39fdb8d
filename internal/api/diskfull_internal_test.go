package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// PostgreSQL's full disk (SQLSTATE 53100, as the server reports it when
// it cannot extend a file) answers 507 with a message and the request id,
// however deep in the store's wrapping it arrives; another PostgreSQL
// error stays a 500. (SQLite's is provoked for real through a server in
// TestDiskFullAnswers507.)
func TestWriteErrorDiskFull(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code   string
		status int
	}{{"53100", http.StatusInsufficientStorage}, {"53200", http.StatusInternalServerError}, {"XX000", http.StatusInternalServerError}} {
		err := fmt.Errorf("store: issue invoices: %w", fmt.Errorf("insert: %w", &pgconn.PgError{Severity: "ERROR", Code: c.code,
			Message: `could not extend file "base/16384/2619": No space left on device`}))
		rec := httptest.NewRecorder()
		writeError(rec, httptest.NewRequest(http.MethodPost, "/subscriber", nil), err)
		if rec.Code != c.status {
			t.Fatalf("SQLSTATE %s: %d, want %d", c.code, rec.Code, c.status)
		}
		var body ServerError
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Message == "" {
			t.Fatalf("SQLSTATE %s: body %q (%v), want a message", c.code, rec.Body, err)
		}
		if c.status == http.StatusInsufficientStorage && body.Code != "insufficient_storage" {
			t.Fatalf("code %q", body.Code)
		}
	}
}
