package idp

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

var keyT0 = time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)

// One key is active per algorithm: of two first keys only one is stored,
// and a rotation retires the active key in the same transaction.
func TestOneActiveSigningKey(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		k := func(id string, at time.Time) StoredKey {
			return StoredKey{ID: id, Algorithm: "ES256", PrivateJWE: "x", PublicJWK: "{}", CreatedAt: at}
		}
		if ok, err := addKey(ctx, s, k("k1", keyT0), false); err != nil || !ok {
			t.Fatalf("first key: %v %v", ok, err)
		}
		if ok, err := addKey(ctx, s, k("k2", keyT0), false); err != nil || ok {
			t.Fatalf("second first key must lose: added=%v err=%v", ok, err)
		}
		if ok, err := addKey(ctx, s, k("k3", keyT0.Add(time.Hour)), true); err != nil || !ok {
			t.Fatalf("rotation: %v %v", ok, err)
		}
		keys, err := storedKeys(ctx, s)
		if err != nil || len(keys) != 2 || keys[0].ID != "k3" || keys[0].RetiredAt != nil || keys[1].RetiredAt == nil ||
			!keys[1].RetiredAt.Equal(keyT0.Add(time.Hour)) {
			t.Fatalf("after rotation: %+v %v", keys, err)
		}
		if n, err := deleteKeysRetiredBefore(ctx, s, keyT0.Add(time.Hour)); err != nil || n != 0 {
			t.Fatalf("prune at the retirement: %d %v, want none", n, err)
		}
		if n, err := deleteKeysRetiredBefore(ctx, s, keyT0.Add(2*time.Hour)); err != nil || n != 1 {
			t.Fatalf("prune: %d %v", n, err)
		}
		if keys, err := storedKeys(ctx, s); err != nil || len(keys) != 1 || keys[0].ID != "k3" {
			t.Fatalf("after the prune: %+v %v", keys, err)
		}
	})
}

// A rotation deletes the keys retired longer ago than any token lives, and
// keeps those retired since, whose tokens a server with the longest
// lifetime may still honour.
func TestRotateDeletesExpiredKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		keys := NewKeys(s, make([]byte, 32), time.Hour, slog.New(slog.DiscardHandler))
		if err := keys.Load(ctx); err != nil {
			t.Fatal(err)
		}
		first := keys.ActiveKID()
		second, err := keys.Rotate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The first key retired two hours ago: past this process's own
		// lifetime, within the longest a server sharing the database may
		// have; another retired past that one.
		if _, err := s.DB().ExecContext(ctx, `UPDATE signing_keys SET retired_at = $1 WHERE id = $2`,
			dbTime(s, time.Now().Add(-2*time.Hour)), first); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().ExecContext(ctx, `INSERT INTO signing_keys (id, algorithm, private_jwe, public_jwk, created_at, retired_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, "old", string(SigningAlgorithm), "x", "{}",
			dbTime(s, time.Now().Add(-48*time.Hour)), dbTime(s, time.Now().Add(-keptRetired-time.Minute))); err != nil {
			t.Fatal(err)
		}
		third, err := keys.Rotate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := storedKeys(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, k := range stored {
			ids = append(ids, k.ID)
		}
		if !slices.Equal(ids, []string{third, second, first}) {
			t.Fatalf("stored keys %v, want the active %s and the retired %s and %s, not old", ids, third, second, first)
		}
	})
}

// An API client is stored once per id and read back with its scopes; an
// unknown id is store.ErrNotFound.
func TestAPIClients(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ten, err := s.CreateTenant(ctx, "acme", false, keyT0)
		if err != nil {
			t.Fatal(err)
		}
		c := APIClient{ID: "kc_one", TenantID: ten.ID, Name: "bridge", SecretHash: "hash", Scopes: []string{ScopeAPI, "extra"}, CreatedAt: keyT0}
		if err := createAPIClient(ctx, s, c); err != nil {
			t.Fatal(err)
		}
		if err := createAPIClient(ctx, s, c); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("the same id again: %v, want ErrConflict", err)
		}
		got, err := apiClientByID(ctx, s, c.ID)
		if err != nil || got.TenantID != ten.ID || got.Name != "bridge" || got.SecretHash != "hash" ||
			!slices.Equal(got.Scopes, c.Scopes) || !got.CreatedAt.Equal(keyT0) || got.RevokedAt != nil {
			t.Fatalf("client: %+v %v", got, err)
		}
		if _, err := apiClientByID(ctx, s, "kc_none"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown client: %v, want ErrNotFound", err)
		}
	})
}
