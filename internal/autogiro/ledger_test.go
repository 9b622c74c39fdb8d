package autogiro_test

import (
	"github.com/kadens/kadens/internal/ledger"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestLedgerChecksRefundCharges: the ledger check knows the charges of
// paid-back debits through the wing's registration (ledger.RegisterItemSource),
// not through SQL of the store's own: a charge a transaction names back with
// its amount is clean, one that no transaction names is reported, as is one
// for another amount.
func TestLedgerChecksRefundCharges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		now := at("2026-11-20T08:00:00Z")
		e := newEnv(t, st, now)
		m := e.mandate(1001, "3300", "1212121212", "191212121212", now)
		named := e.payment(m, autogiro.AutogiroDebit, 14900, "2026-12-01", "INV-1", now)
		other := e.payment(m, autogiro.AutogiroDebit, 9900, "2026-12-01", "INV-2", now)
		good, orphan, wrong := store.NewID(), store.NewID(), store.NewID()
		err := st.InTx(e.ctx, func(tx *store.Tx) error {
			acc, err := tx.EnsureAccount(e.ctx, e.subscriber(1001), "SEK", now)
			if err != nil {
				return err
			}
			item := func(id string, amount int64, source string) store.NewItem {
				return store.NewItem{ID: id, AccountID: acc, Kind: billing.ItemCharge, Description: "Autogiro refund", Amount: amount,
					BookedAt: now, CreatedAt: now, Source: store.ItemSource{Kind: autogiro.ItemSourceRefund, ID: source}}
			}
			return tx.InsertItems(e.ctx, []store.NewItem{item(good, 14900, named), item(orphan, 500, store.NewID()), item(wrong, 100, other)})
		})
		if err != nil {
			t.Fatal(err)
		}
		for id, item := range map[string]string{named: good, other: wrong} {
			if _, err := st.DB().Exec(`UPDATE autogiro_transactions SET refund_item_id = $3 WHERE tenant_id = $1 AND id = $2`,
				e.tenant, id, item); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := ledger.Check(e.ctx, st, ledger.Options{TenantID: e.tenant})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, p := range rep.Problems {
			if p.Rule == ledger.RuleItemSource {
				got[p.ID] = p.Detail
			}
		}
		if _, ok := got[good]; ok || len(got) != 2 || !strings.Contains(got[orphan], "but 0 such documents name it") ||
			!strings.Contains(got[wrong], "is for 99.00") {
			t.Fatalf("item-source problems: %v", got)
		}
	})
}
