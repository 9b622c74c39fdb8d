package avtalegiro_test

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/store"
)

// TestSettlementBatch: the payments of one OCR file are settled in one
// batch transaction — two invoices paid, one payment of no invoice kept as
// a problem, with no effect on the others. A payment recorded before its
// mark (as after a crash between them) is found by its reference and not
// recorded twice, the file again settles nothing, and the ledger holds.
func TestSettlementBatch(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := newCycle(t, e)
		for range 2 {
			order := create(t, c.tn, "/order", map[string]any{"organizationId": c.org, "templatePackageId": c.pkg, "subscriberId": c.subscriber})
			c.tn.Do("POST", "/order/"+order+"/complete", nil)
		}
		invs := c.invoices()
		if len(invs) != 2 {
			t.Fatalf("%d invoices", len(invs))
		}
		d := ocrgiro.DateOf(c.now)
		pay := func(n int, kid string) ocrgiro.Payment {
			return ocrgiro.Payment{Type: 10, Number: n, NetsDate: d, Centre: "13", DayCode: "04", PartialSettlement: "1", Serial: "00001",
				Amount: invs[0].Gross.Minor, KID: kid, FormNumber: "0", ArchiveRef: "000000000", BankDate: d, PayerAccount: "98765432103"}
		}
		var buf bytes.Buffer
		if err := ocrgiro.Write(&buf, &ocrgiro.Transmission{Start: ocrgiro.Start{Sender: ocrgiro.NetsID, Number: "0000078", Recipient: "12345678"},
			Assignments: []ocrgiro.Assignment{{Start: ocrgiro.AssignmentStart{Service: 9, Type: 0, AgreementID: "001234567", Number: "0000078",
				Account: "12345678903"}, Payments: []ocrgiro.Payment{pay(1, invs[0].KID), pay(2, "000999900000012"), pay(3, invs[1].KID)},
				End: ocrgiro.AssignmentEnd{Date1: d, Date2: d, Date3: d}}}, End: ocrgiro.End{Date: d}}); err != nil {
			t.Fatal(err)
		}
		body := map[string]any{"content": base64.StdEncoding.EncodeToString(buf.Bytes())}
		var res struct{ Payments, Settled, Problems int }
		r := c.tn.Do("POST", "/avtalegiro/import", body)
		r.JSON(t, &res)
		if r.Status != 200 || res.Payments != 3 || res.Settled != 2 || res.Problems != 1 {
			t.Fatalf("import: %d %s", r.Status, r.Body)
		}
		for _, inv := range invs {
			if full, _ := e.Store.Invoice(c.ctx, inv.ID); full.Status != "Paid" {
				t.Fatalf("invoice %s: %s", inv.ID, full.Status)
			}
		}
		payments := func() int {
			var n int
			if err := e.Store.DB().QueryRow(`SELECT COUNT(*) FROM payments WHERE tenant_id = $1 AND provider = $2`, c.tn.ID, avtalegiro.Provider).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := payments(); n != 2 {
			t.Fatalf("%d payments", n)
		}
		// A crash between a payment and its mark: the mark is gone.
		if _, err := e.Store.DB().Exec(`UPDATE avtalegiro_payments SET payment_id = NULL, problem = NULL WHERE tenant_id = $1`, c.tn.ID); err != nil {
			t.Fatal(err)
		}
		again, err := avtalegiro.SettlePayments(c.ctx, e.Store, c.tn.ID, c.now)
		if err != nil || again.Settled != 2 || again.Problems != 1 {
			t.Fatalf("settling again: %+v %v", again, err)
		}
		if n := payments(); n != 2 {
			t.Fatalf("%d payments after settling again", n)
		}
		r = c.tn.Do("POST", "/avtalegiro/import", body)
		r.JSON(t, &res)
		if res.Settled != 0 || res.Problems != 0 || payments() != 2 {
			t.Fatalf("the file again: %s", r.Body)
		}
		rep, err := e.Store.CheckLedger(c.ctx, store.LedgerCheck{TenantID: c.tn.ID})
		if err != nil || !rep.Clean() {
			t.Fatalf("ledger: %+v %v", rep.Problems, err)
		}
	})
}
