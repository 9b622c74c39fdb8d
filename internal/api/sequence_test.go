package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
)

// TestSequencesAfterClientExtremes: for every number series Kadens
// assigns, the most extreme value a client may send where the series is
// used comes first, and the series still assigns its next number after it
// (docs/BILLING.md, "Number series"). Subscriber numbers, the one series
// clients write numbers into, have TestSubscriberNumberExtremes; the rest
// take no number from a client, and these show nothing a client sends
// beside them moves or stops them.
func TestSequencesAfterClientExtremes(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		t.Run("invoice and credit note numbers, KIDs", func(t *testing.T) {
			tn := e.For(t).NewTenant("invoices", true)
			f := newBillingFixture(t, e, tn)
			// The buyer has the largest subscriber number a client may choose,
			// and a payment names the longest KID there is before any invoice.
			f.subscriber = create(t, tn, "/subscriber", map[string]any{"name": "Top", "subscriberNumber": store.MaxSubscriberNumber})
			if r := tn.Do("POST", "/payment", map[string]any{"kid": strings.Repeat("9", 25), "amount": 1, "currency": "NOK",
				"provider": "External", "status": "Succeeded", "providerReference": "x", "paidAt": "2027-01-05T10:00:00+01:00"}); r.Status != http.StatusBadRequest {
				t.Fatalf("payment to an unknown KID: %d %s", r.Status, r.Body)
			}
			f.advance(osloDay(2027, 1, 10))
			start := osloDay(2027, 2, 1)
			f.order(&start)
			f.order(&start)
			invs := f.invoices("")
			if len(invs) != 2 {
				t.Fatalf("%d invoices, want 2", len(invs))
			}
			for i, inv := range invs {
				if inv.InvoiceNumber != int64(i+1) || inv.KID != billing.KID(inv.InvoiceNumber, billing.KIDMod10) {
					t.Errorf("invoice %d: number %d, KID %s", i, inv.InvoiceNumber, inv.KID)
				}
			}
			for i, inv := range invs {
				var c store.CreditNote
				tn.Do("GET", "/creditnote/"+create(t, tn, "/invoice/"+inv.ID+"/credit", map[string]any{}), nil).JSON(t, &c)
				if c.CreditNoteNumber != int64(i+1) {
					t.Errorf("credit note number %d, want %d", c.CreditNoteNumber, i+1)
				}
			}
		})
		t.Run("Autogiro payer numbers", func(t *testing.T) {
			tn := e.For(t).NewTenant("autogiro", true)
			f := newAGFixture(t, tn)
			mandate := func(sub, payer string) autogiro.AutogiroMandate {
				body := map[string]any{"accountId": f.account, "subscriberId": sub, "clearingNumber": "3300",
					"bankAccountNumber": "121212-1212", "payerId": "19121212-1212"}
				if payer != "" {
					body["payerNumber"] = payer
				}
				var m autogiro.AutogiroMandate
				tn.Do("GET", "/autogiro/mandate/"+create(t, tn, "/autogiro/mandate", body), nil).JSON(t, &m)
				return m
			}
			// The longest payer number, then the defaults: the largest
			// subscriber number a client may choose still fits a payer number.
			if m := mandate(f.sub1, strings.Repeat("9", 16)); m.PayerNumber != strings.Repeat("9", 16) {
				t.Fatalf("chosen payer number stored as %s", m.PayerNumber)
			}
			top := create(t, tn, "/subscriber", map[string]any{"name": "Top", "subscriberNumber": store.MaxSubscriberNumber})
			if m := mandate(top, ""); m.PayerNumber != "999999999999999" {
				t.Errorf("default payer number of subscriber %d: %s", int64(store.MaxSubscriberNumber), m.PayerNumber)
			}
			if m := mandate(f.sub2, ""); m.PayerNumber != "2" {
				t.Errorf("default payer number of subscriber 2: %s", m.PayerNumber)
			}
		})
		t.Run("AvtaleGiro transmission numbers", func(t *testing.T) {
			tn := e.For(t).NewTenant("avtalegiro", true)
			account, _ := agSetup(t, e, tn, "https://bank.example")
			// A mandate with the largest KID of the account's length, and a
			// claim of it for more than any real one.
			body := strings.Repeat("9", 14)
			d, _ := billing.CheckDigit(body, billing.KIDMod10)
			m := create(t, tn, "/avtalegiro/mandate", map[string]any{"accountId": account, "kid": body + string(d)})
			for i, due := range []string{"2027-01-15", "2027-02-15"} {
				create(t, tn, "/avtalegiro/claim", map[string]any{"mandateId": m, "amount": 9999999.99, "dueDate": due})
				r := tn.Do("POST", "/avtalegiro/account/"+account+"/export", nil)
				var file avtalegiro.AvtaleGiroFile
				if r.Status != http.StatusOK {
					t.Fatalf("export: %d %s", r.Status, r.Body)
				}
				r.JSON(t, &file)
				if want := []string{"0000001", "0000002"}[i]; file.TransmissionNumber != want {
					t.Errorf("transmission number %s, want %s", file.TransmissionNumber, want)
				}
			}
		})
	})
}
