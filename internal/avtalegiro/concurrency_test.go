package avtalegiro_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"github.com/kadens/kadens/internal/ledger"
	"net/http"
	"sync"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
)

// twoSentClaims bills two invoices of 299.00 on one AvtaleGiro mandate and
// sends their claims to the bank: two sent claims with the mandate's KID
// and the same amount, which OCR payments pay earliest due first.
func twoSentClaims(t *testing.T, e *apitest.Env) (*cycle, []avtalegiro.AvtaleGiroClaim) {
	t.Helper()
	c := newCycle(t, e)
	if err := c.bank.Mandates(ocrgiro.Mandate{Registration: ocrgiro.MandateNew, KID: mandateKID, Notice: true}); err != nil {
		t.Fatal(err)
	}
	c.sync()
	var mandates []avtalegiro.AvtaleGiroMandate
	c.tn.Do("GET", "/avtalegiro/mandate?KID="+mandateKID, nil).JSON(t, &mandates)
	if len(mandates) != 1 {
		t.Fatalf("%d mandates", len(mandates))
	}
	agreement := create(t, c.tn, "/paymentagreement", map[string]any{"subscriberId": c.subscriber, "providerType": "AvtaleGiro",
		"providerAgreementReference": mandates[0].ID})
	for _, start := range []string{"2027-02-01T00:00:00+01:00", "2027-02-08T00:00:00+01:00"} {
		order := create(t, c.tn, "/order", map[string]any{"organizationId": c.org, "templatePackageId": c.pkg, "subscriberId": c.subscriber,
			"requestedStart": start, "paymentAgreementId": agreement})
		if r := c.tn.Do("POST", "/order/"+order+"/complete", nil); r.Status != http.StatusOK {
			t.Fatalf("complete: %d %s", r.Status, r.Body)
		}
	}
	c.issueClaims()
	c.sync()
	var claims []avtalegiro.AvtaleGiroClaim
	c.tn.Do("GET", "/avtalegiro/claim?MandateId="+mandates[0].ID, nil).JSON(t, &claims)
	if len(claims) != 2 || claims[0].Status != avtalegiro.ClaimSent || claims[1].Status != avtalegiro.ClaimSent || claims[0].KID != claims[1].KID {
		t.Fatalf("claims %+v", claims)
	}
	return c, claims
}

// ocrPayments is an OCR giro file (transmission serial) of one payment of
// each amount with KID kid.
func ocrPayments(t *testing.T, c *cycle, serial int, kid string, amounts ...int64) map[string]any {
	t.Helper()
	d := ocrgiro.DateOf(c.now)
	var ps []ocrgiro.Payment
	for i, a := range amounts {
		ps = append(ps, ocrgiro.Payment{Type: 15, Number: i + 1, NetsDate: d, Centre: "13", DayCode: "04", PartialSettlement: "1",
			Serial: "00001", Amount: a, KID: kid, FormNumber: "0", ArchiveRef: "000000000", BankDate: d, PayerAccount: "98765432103"})
	}
	number := fmt.Sprintf("%07d", serial)
	var buf bytes.Buffer
	if err := ocrgiro.Write(&buf, &ocrgiro.Transmission{Start: ocrgiro.Start{Sender: ocrgiro.NetsID, Number: number, Recipient: "12345678"},
		Assignments: []ocrgiro.Assignment{{Start: ocrgiro.AssignmentStart{Service: 9, Type: 0, AgreementID: "001234567", Number: number,
			Account: "12345678903"}, Payments: ps, End: ocrgiro.AssignmentEnd{Date1: d, Date2: d, Date3: d}}}, End: ocrgiro.End{Date: d}}); err != nil {
		t.Fatal(err)
	}
	return map[string]any{"content": base64.StdEncoding.EncodeToString(buf.Bytes())}
}

// TestSettlementUnderConcurrency: OCR files imported at once settle like
// one after the other. One file of two payments imported 16 times pays
// each claim once; 16 files of one payment each, for two sent claims with
// the same KID and amount, pay the two claims (and their invoices) once
// each and leave 14 payments as problems — never two payments on one
// claim while the other stays unpaid.
func TestSettlementUnderConcurrency(t *testing.T) {
	t.Parallel()
	const n = 16
	fire := func(body func(i int) map[string]any, c *cycle) []int {
		out := make([]int, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				out[i] = c.tn.Do("POST", "/avtalegiro/import", body(i)).Status
			}()
		}
		close(start)
		wg.Wait()
		return out
	}
	// paidOnce checks that each claim and its invoice is paid by exactly
	// one payment, with nothing over, and that the ledger is clean.
	paidOnce := func(t *testing.T, e *apitest.Env, c *cycle, claims []avtalegiro.AvtaleGiroClaim) {
		t.Helper()
		for _, cl := range claims {
			var got avtalegiro.AvtaleGiroClaim
			c.tn.Do("GET", "/avtalegiro/claim/"+cl.ID, nil).JSON(t, &got)
			var ps []store.Payment
			c.tn.Do("GET", "/payment?invoiceId="+*cl.InvoiceID, nil).JSON(t, &ps)
			inv, err := e.Store.Invoice(c.ctx, *cl.InvoiceID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != avtalegiro.ClaimPaid || len(ps) != 1 || ps[0].Surplus.Minor != 0 || inv.Status != billing.InvoicePaid {
				t.Errorf("claim due %s: %s, invoice %s, %d payments %+v", cl.DueDate, got.Status, inv.Status, len(ps), ps)
			}
		}
		rep, err := ledger.Check(c.ctx, e.Store, ledger.Options{TenantID: c.tn.ID})
		if err != nil || !rep.Clean() {
			t.Fatalf("ledger %+v %v", rep.Problems, err)
		}
	}
	t.Run("one file imported 16 times", func(t *testing.T) {
		t.Parallel()
		apitest.EachWith(t, loopbackBank, func(t *testing.T, e *apitest.Env) {
			c, claims := twoSentClaims(t, e)
			file := ocrPayments(t, c, 90, claims[0].KID, claims[0].Amount.Minor, claims[1].Amount.Minor)
			for i, s := range fire(func(int) map[string]any { return file }, c) {
				if s != http.StatusOK {
					t.Fatalf("import %d: %d", i, s)
				}
			}
			paidOnce(t, e, c, claims)
		})
	})
	t.Run("16 files for two claims", func(t *testing.T) {
		t.Parallel()
		apitest.EachWith(t, loopbackBank, func(t *testing.T, e *apitest.Env) {
			c, claims := twoSentClaims(t, e)
			for i, s := range fire(func(i int) map[string]any { return ocrPayments(t, c, 100+i, claims[0].KID, claims[0].Amount.Minor) }, c) {
				if s != http.StatusOK {
					t.Fatalf("import %d: %d", i, s)
				}
			}
			paidOnce(t, e, c, claims)
			var problems int
			if err := e.Store.DB().QueryRow(`SELECT COUNT(*) FROM avtalegiro_payments WHERE tenant_id = $1 AND problem IS NOT NULL`,
				c.tn.ID).Scan(&problems); err != nil || problems != n-2 {
				t.Fatalf("%d payments kept as problems, want %d (%v)", problems, n-2, err)
			}
		})
	})
}
