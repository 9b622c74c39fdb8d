package avtalegiro_test

import (
	"bytes"
	"encoding/base64"
	"github.com/kadens/kadens/internal/ledger"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestSettlementBatch: the payments of one OCR file are settled in one
// batch transaction — two invoices paid, one payment of no invoice kept as
// a problem, with no effect on the others. A payment recorded before its
// mark (as after a crash between them) is found by its reference and not
// recorded twice, the file again settles nothing, and the ledger holds.
func TestSettlementBatch(t *testing.T) {
	apitest.EachWith(t, loopbackBank, func(t *testing.T, e *apitest.Env) {
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
		rep, err := ledger.Check(c.ctx, e.Store, ledger.Options{TenantID: c.tn.ID})
		if err != nil || !rep.Clean() {
			t.Fatalf("ledger: %+v %v", rep.Problems, err)
		}
	})
}

// TestSettlementBatchSameKey: payments with the same KID and amount pay
// the mandate's sent claims one each, earliest due first, within one
// batch; a payment left over is a problem (no invoice has the KID).
func TestSettlementBatchSameKey(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			st, ctx, account, mandate := benchTenant(t, eng)
			tenant, _ := tenancy.From(ctx)
			var ids []string
			for _, due := range []string{"2027-03-15", "2027-02-15"} {
				c, _, err := avtalegiro.CreateClaim(ctx, st, avtalegiro.NewAvtaleGiroClaim{MandateID: mandate, TransactionID: store.NewID(),
					KID: mandateKID, Amount: 29900, DueDate: due, ShortName: "Kari"}, benchNow)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, c.ID)
			}
			if _, ok, err := avtalegiro.Export(ctx, st, account, benchNow); err != nil || !ok {
				t.Fatalf("export: %v %v", ok, err)
			}
			if _, err := avtalegiro.ImportFile(ctx, st, bytes.NewReader(ocrFile(t, 9, 3)), benchNow); err != nil {
				t.Fatal(err)
			}
			res, err := avtalegiro.SettlePayments(ctx, st, tenant, benchNow)
			if err != nil || res.Settled != 2 || res.Problems != 1 {
				t.Fatalf("settle: %+v %v", res, err)
			}
			for _, id := range ids {
				if c, err := avtalegiro.Claim(ctx, st, id); err != nil || c.Status != avtalegiro.ClaimPaid {
					t.Fatalf("claim due %s: %+v %v", c.DueDate, c.Status, err)
				}
			}
			rows, err := st.DB().Query(`SELECT problem FROM avtalegiro_payments ORDER BY line`)
			if err != nil {
				t.Fatal(err)
			}
			var problems []string
			for rows.Next() {
				var p string
				if err := rows.Scan(&p); err != nil {
					t.Fatal(err)
				}
				problems = append(problems, p)
			}
			rows.Close()
			if len(problems) != 3 || problems[0] != "settled without an invoice" || problems[1] != problems[0] ||
				!strings.Contains(problems[2], "no invoice has KID") {
				t.Fatalf("problems %q", problems)
			}
		})
	}
}
