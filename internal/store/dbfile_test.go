package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kadens/kadens/internal/store"
)

// The SQLite database file (SQLite only: PostgreSQL has no file of ours).
// Only a missing kadens.db is a fresh install; an empty file, a file that
// is not SQLite or a directory in its place is refused with an error that
// names the file, and left as it is. (SQLite would take the first two for
// a new, empty database: a silent fresh install beside lost data.)
func TestOpenRefusesWhatIsNotADatabase(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		make func(path string) error
		says string
	}{
		{"empty", func(p string) error { return os.WriteFile(p, nil, 0o600) }, "is empty (0 bytes)"},
		{"not sqlite", func(p string) error { return os.WriteFile(p, []byte("id,name\n1,acme\n"), 0o600) }, "is not an SQLite database"},
		{"short", func(p string) error { return os.WriteFile(p, []byte("SQLite"), 0o600) }, "is not an SQLite database"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o700) }, "is not a database file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "kadens.db")
			if err := c.make(path); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Stat(path)
			s, err := store.Open(context.Background(), store.Options{DataDir: dir})
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "fresh install") {
				t.Fatalf("error %q does not name the file, what is wrong (%s) and what to do", err, c.says)
			}
			if after, err := os.Stat(path); err != nil || after.Size() != before.Size() || after.IsDir() != before.IsDir() {
				t.Fatalf("the file was changed: %v", err)
			}
		})
	}
}

// A missing file is a fresh install, also when several processes start on
// the new data directory at once: each opens the one database, which
// begins with SQLite's header, and no temporary file is left.
func TestOpenCreatesMissingDatabase(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			s, err := store.Open(context.Background(), store.Options{DataDir: dir})
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "kadens.db"))
	if err != nil || !strings.HasPrefix(string(b), "SQLite format 3\x00") {
		t.Fatalf("kadens.db: %d bytes, %v", len(b), err)
	}
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if strings.Contains(e.Name(), ".new-") {
			t.Fatalf("left in the data directory: %s", e.Name())
		}
	}
}
