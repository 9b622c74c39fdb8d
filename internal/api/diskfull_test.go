package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

// A full disk answers 507 with a message (documented in /openapi.json,
// which the response is checked against), not a bare 500, and once there
// is room again the same server accepts writes. The disk is made full for
// real on SQLite: the store's only writer connection may grow the database
// by a few pages (PRAGMA max_page_count). PostgreSQL's disk_full is mapped
// the same way (TestWriteErrorDiskFull: a shared test server cannot be
// filled).
func TestDiskFullAnswers507(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t, store.SQLite, nil)
	ctx := context.Background()
	var pages int
	if err := e.Store.DB().QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.DB().ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages+4)); err != nil {
		t.Fatal(err)
	}
	var r *apitest.Response
	for i := 0; i < 500; i++ {
		r = e.Do("POST", "/subscriber", map[string]any{"name": fmt.Sprintf("Subscriber %d %s", i, strings.Repeat("ø", 100))})
		if r.Status != 201 {
			break
		}
	}
	var body struct{ Code, Message, RequestID string }
	r.JSON(t, &body)
	if r.Status != 507 || body.Code != "insufficient_storage" || !strings.Contains(body.Message, "storage is full") || body.RequestID == "" {
		t.Fatalf("writing past the disk's end: %d %s, want 507 saying the storage is full", r.Status, r.Body)
	}
	if _, err := e.Store.DB().ExecContext(ctx, `PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if r := e.Do("POST", "/subscriber", map[string]any{"name": "After the cleanup"}); r.Status != 201 {
		t.Fatalf("with room again: %d %s", r.Status, r.Body)
	}
}
