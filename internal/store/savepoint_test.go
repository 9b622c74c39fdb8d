package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestSavepoint: an item of a batch that fails is undone alone; what the
// batch wrote before and after it commits.
func TestSavepoint(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		ten, err := st.CreateTenant(context.Background(), "savepoint", true, now)
		if err != nil {
			t.Fatal(err)
		}
		ctx := tenancy.With(context.Background(), ten.ID)
		refused := errors.New("refused")
		err = st.InTx(ctx, func(tx *store.Tx) error {
			for i, subject := range []string{"/a", "/b", "/c"} {
				err := tx.Savepoint(ctx, func() error {
					if err := tx.AddEvent(ctx, "Test", subject, map[string]string{}, now); err != nil {
						return err
					}
					if i == 1 {
						return refused
					}
					return nil
				})
				if (i == 1) != errors.Is(err, refused) {
					t.Fatalf("item %d: %v", i, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		evs, _, err := st.ListEvents(ctx, store.EventFilter{}, store.Page{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range evs {
			got = append(got, ev.Subject)
		}
		if len(got) != 2 || got[0] == "/b" || got[1] == "/b" {
			t.Fatalf("events %v, want /a and /c", got)
		}
	})
}
