package tenantimport

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// Import records are read back by kind and source id, in chunks past the
// engines' parameter bound, and only the tenant's own.
func TestImportRecords(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		tenant := func(name string) context.Context {
			ten, err := s.CreateTenant(context.Background(), name, false, at)
			if err != nil {
				t.Fatal(err)
			}
			return tenancy.With(context.Background(), ten.ID)
		}
		acme, other := tenant("acme"), tenant("other")
		const n = store.MaxChunk + 44
		var recs []ImportRecord
		var ids []string
		for i := range n {
			id := fmt.Sprintf("src-%d", i)
			ids = append(ids, id)
			recs = append(recs, ImportRecord{Kind: KindSubscription, SourceID: id, KadensID: store.NewID(), Fingerprint: "fp", ImportedAt: at})
		}
		if err := s.InTx(acme, func(tx *store.Tx) error {
			if err := lockImport(acme, tx); err != nil {
				return err
			}
			return insertImportRecords(acme, tx, recs)
		}); err != nil {
			t.Fatal(err)
		}
		read := func(ctx context.Context, kind string, ids []string) map[string]ImportRecord {
			t.Helper()
			var got map[string]ImportRecord
			if err := s.InTx(ctx, func(tx *store.Tx) error {
				var err error
				got, err = ImportRecords(ctx, tx, kind, ids)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return got
		}
		got := read(acme, KindSubscription, append(ids, "unknown"))
		if len(got) != n {
			t.Fatalf("%d records, want %d", len(got), n)
		}
		for i, id := range ids {
			if r := got[id]; r.KadensID != recs[i].KadensID || r.Kind != KindSubscription || r.Fingerprint != "fp" || !r.ImportedAt.Equal(at) {
				t.Fatalf("record %s: %+v", id, r)
			}
		}
		if got := read(acme, KindPaymentAgreement, ids); len(got) != 0 {
			t.Fatalf("%d agreement records, want none", len(got))
		}
		if got := read(other, KindSubscription, ids); len(got) != 0 {
			t.Fatalf("another tenant reads %d records", len(got))
		}
	})
}
