package autogiro_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestImportBatchesMatchAsOne: the import matches records against the
// database a batch at a time; whatever the batch size, a report answers
// the same and leaves the same states. Two equal debits are taken one per
// record, a third record naming them is unchanged (they were settled by
// this report, in an earlier batch or the same one), a failed debit
// reported again is unchanged, a record naming nothing is a note, and a
// reference returned zero-padded still matches.
func TestImportBatchesMatchAsOne(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		// Sequential inside each engine's (parallel) subtest: the batch
		// size is the package's.
		for _, size := range []int{1, 2, 3, 1000} {
			t.Run(fmt.Sprintf("batch%d", size), func(t *testing.T) {
				defer autogiro.SetBatchRecords(size)()
				d1 := at("2026-11-20T08:00:00Z")
				e := newEnv(t, st, d1)
				m := e.mandate(1001, "3300", "121212-1212", "19121212-1212", d1)
				other := e.mandate(1002, "3300", "121212-1212", "19121212-1212", d1)
				e.export(d1)
				e.importFile(advice("20261123", [3]string{"1001", "04", "32"}, [3]string{"1002", "04", "32"}), d1)
				d2 := at("2026-11-23T08:00:00Z")
				twin1 := e.payment(m, autogiro.AutogiroDebit, 24900, "2026-12-01", "INV-1", d2)
				twin2 := e.payment(m, autogiro.AutogiroDebit, 24900, "2026-12-01", "INV-1", d2)
				failed := e.payment(m, autogiro.AutogiroDebit, 9900, "2026-12-01", "INV-2", d2)
				padded := e.payment(other, autogiro.AutogiroDebit, 24900, "2026-12-01", "77", d2)
				open := e.payment(other, autogiro.AutogiroDebit, 100, "2026-12-01", "INV-3", d2)
				e.export(d2)

				spec := paymentSpecOf("20261201120000000001", [][5]string{
					{"1001", "20261201", "24900", "INV-1", "0"},
					{"1001", "20261201", "24900", "INV-1", "0"},
					{"1001", "20261201", "24900", "INV-1", "0"},
					{"1001", "20261201", "9900", "INV-2", "1"},
					{"1001", "20261201", "9900", "INV-2", "0"},
					{"9999", "20261201", "500", "INV-X", "0"},
					{"1002", "20261201", "24900", "0000000000000077", "0"},
				}, nil)
				res := e.importFile(spec, d2)
				if res.Records != 7 || res.PaymentsCompleted != 3 || res.PaymentsFailed != 1 || res.Unchanged != 2 ||
					len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "line 7:") || !strings.Contains(res.Notes[0], "payer 9999") {
					t.Fatalf("import: %+v", res)
				}
				for id, want := range map[string]string{twin1: autogiro.AutogiroCompleted, twin2: autogiro.AutogiroCompleted,
					failed: autogiro.AutogiroFailed, padded: autogiro.AutogiroCompleted, open: autogiro.AutogiroSent} {
					if tr, err := autogiro.Transaction(e.ctx, st, id); err != nil || tr.Status != want {
						t.Errorf("transaction %s: %s, want %s (%v)", id, tr.Status, want, err)
					}
				}
				if again := e.importFile(spec, d2); !again.AlreadyImported || again.PaymentsCompleted != 3 {
					t.Fatalf("same file again: %+v", again)
				}
				// Another report naming the settled debits finds them no
				// longer open: notes, nothing changed.
				res = e.importFile(strings.Replace(spec, "20261201120000000001", "20261202120000000002", 1), d2)
				if res.PaymentsCompleted != 0 || res.PaymentsFailed != 0 || res.Unchanged != 0 || len(res.Notes) != 7 {
					t.Fatalf("settled debits reported again: %+v", res)
				}
			})
		}
	})
}
