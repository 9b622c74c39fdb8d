package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

func TestPublicURLs(t *testing.T) {
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
