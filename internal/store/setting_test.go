package store_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

func TestPublicURLs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.PublicURLs(ctx); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("before any server started: %v, want ErrNotFound", err)
		}
		at := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
		first := store.PublicURLs{Base: "http://127.0.0.1:8080", IdP: "http://127.0.0.1:8080/idp", Analytics: "http://127.0.0.1:8080/analytics", RecordedAt: at}
		if err := s.SetPublicURLs(ctx, first); err != nil {
			t.Fatal(err)
		}
		// A later start replaces what the earlier one recorded.
		second := store.PublicURLs{Base: "https://api.example.com", IdP: "https://login.example.com", Analytics: "https://api.example.com/analytics", RecordedAt: at.Add(time.Hour)}
		if err := s.SetPublicURLs(ctx, second); err != nil {
			t.Fatal(err)
		}
		got, err := s.PublicURLs(ctx)
		if err != nil || got != second {
			t.Fatalf("got %+v %v, want %+v", got, err, second)
		}
	})
}

// A data directory whose name has characters that mean something in a
// file: URI ('#', '?', '%') holds its own database, not one at a truncated
// path beside it.
func TestSQLiteDataDirWithURICharacters(t *testing.T) {
	parent := t.TempDir()
	ctx := context.Background()
	for _, name := range []string{"a#b", "a?b", "a%23b", "a"} {
		dir := filepath.Join(parent, name)
		s, err := store.Open(ctx, store.Options{DataDir: dir})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.Migrate(ctx, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
		if err := s.SetPublicURLs(ctx, store.PublicURLs{Base: "http://" + name, IdP: "http://" + name + "/idp", RecordedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := os.Stat(filepath.Join(dir, "kadens.db")); err != nil {
			t.Fatalf("%s: no database in its own directory: %v", name, err)
		}
	}
	for _, name := range []string{"a#b", "a?b", "a%23b", "a"} {
		s, err := store.Open(ctx, store.Options{DataDir: filepath.Join(parent, name)})
		if err != nil {
			t.Fatal(err)
		}
		u, err := s.PublicURLs(ctx)
		s.Close()
		if err != nil || u.Base != "http://"+name {
			t.Fatalf("%s holds %q (%v): databases mixed up", name, u.Base, err)
		}
	}
}

// A fresh database's migrations are one summary line at info; the line per
// migration is debug.
func TestMigrateLogsOneSummaryLine(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, store.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var info, debug strings.Builder
	log := slog.New(slog.NewTextHandler(&info, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := s.Migrate(ctx, log); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(info.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `msg="migrations applied"`) || !strings.Contains(lines[0], "count=") {
		t.Fatalf("info output of a fresh migration:\n%s", info.String())
	}
	// Nothing pending: nothing logged, not even at debug.
	if err := s.Migrate(ctx, slog.New(slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug}))); err != nil {
		t.Fatal(err)
	}
	if debug.Len() != 0 {
		t.Fatalf("an up-to-date database logged:\n%s", debug.String())
	}
}
