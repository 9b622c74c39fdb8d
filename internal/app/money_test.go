package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/provider/invoice"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

func create(t *testing.T, tn apitest.Tenant, path string, body any) string {
	t.Helper()
	r := tn.Do("POST", path, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	return r.ID(t)
}

// issued makes the tenant one issued NOK invoice of 199.00 and returns it.
func issued(t *testing.T, tn apitest.Tenant) store.Invoice {
	t.Helper()
	product := create(t, tn, "/product", map[string]any{"name": "Nordavis Digital", "category": "digital", "vatRate": 0})
	plan := create(t, tn, "/billingplan", map[string]any{"name": "Monthly", "intervalUnit": "Month"})
	pkg := create(t, tn, "/package", fmt.Sprintf(`{"Name": "Digital", "Currency": "NOK", "Price": 199.00,
		"products": [{"productId": %q}], "BillingPlans": [%q]}`, product, plan))
	org := create(t, tn, "/organization", map[string]any{"name": "Nordavis AS", "organizationNumber": "923609016", "country": "NO",
		"currency": "NOK", "timeZone": "Europe/Oslo"})
	sub := create(t, tn, "/subscriber", map[string]any{"name": "Regnskap AS", "country": "NO"})
	order := create(t, tn, "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": sub})
	if r := tn.Do("POST", "/order/"+order+"/complete", nil); r.Status != http.StatusOK {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	var invs []store.Invoice
	tn.Do("GET", "/invoice", nil).JSON(t, &invs)
	if len(invs) != 1 {
		t.Fatalf("%d invoices after the order, want 1", len(invs))
	}
	return invs[0]
}

func fieldOf(t *testing.T, err error) string {
	t.Helper()
	var verrs validation.Errors
	if !errors.As(err, &verrs) || len(verrs) == 0 {
		t.Fatalf("error %v, want validation errors", err)
	}
	return verrs[0].Field
}

// TestMoneyCommandsWithoutHTTP pays and credits an invoice through the
// application layer alone, as the console will, and checks the rules the
// commands enforce.
func TestMoneyCommandsWithoutHTTP(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		a := app.New(app.Options{Store: e.Store, Providers: provider.NewRegistry(invoice.Provider)})
		inv := issued(t, e.Tenant)
		ctx := tenancy.With(context.Background(), e.Tenant.ID)
		pay := app.NewPayment{InvoiceID: inv.ID, Status: store.PaymentSucceeded, Amount: 10000, Currency: "NOK",
			Provider: "Bank", ProviderReference: "ref-1"}

		// A payment to a demand the tenant does not have names the field.
		unknown := pay
		unknown.InvoiceID = store.NewID()
		if _, _, err := a.RecordPayment(ctx, unknown); fieldOf(t, err) != "invoiceId" {
			t.Errorf("payment to an unknown invoice: %v, want an error on invoiceId", err)
		}
		// So does one in another currency than the demand's.
		sek := pay
		sek.Currency = "SEK"
		if _, _, err := a.RecordPayment(ctx, sek); fieldOf(t, err) != "currency" {
			t.Errorf("payment in SEK: %v, want an error on currency", err)
		}

		p, created, err := a.RecordPayment(ctx, pay)
		if err != nil || !created || p.PaymentDemandID != inv.PaymentDemandID || p.Applied.Minor != 10000 {
			t.Fatalf("payment: %+v created %v, %v", p, created, err)
		}
		// The same reference again is the first payment; with another
		// amount it is a conflict.
		if again, created, err := a.RecordPayment(ctx, pay); err != nil || created || again.ID != p.ID {
			t.Errorf("repeated payment: %s created %v, %v; want %s", again.ID, created, err, p.ID)
		}
		other := pay
		other.Amount = 500
		if _, _, err := a.RecordPayment(ctx, other); !errors.Is(err, store.ErrConflict) {
			t.Errorf("reference with another amount: %v, want ErrConflict", err)
		}

		// Credits: a line without its number is refused by line; the
		// whole invoice can be credited once, then nothing is left.
		if _, err := a.CreditInvoice(ctx, app.NewCredit{InvoiceID: inv.ID, Lines: []app.CreditLine{{Amount: "1.00"}}}); fieldOf(t, err) != "lines[0].lineNumber" {
			t.Errorf("credit line without a number: %v", err)
		}
		if _, err := a.CreditInvoice(ctx, app.NewCredit{InvoiceID: store.NewID()}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("credit of an unknown invoice: %v, want ErrNotFound", err)
		}
		note, err := a.CreditInvoice(ctx, app.NewCredit{InvoiceID: inv.ID, Reason: "test"})
		if err != nil || note.InvoiceID != inv.ID {
			t.Fatalf("credit: %+v, %v", note, err)
		}
		if _, err := a.CreditInvoice(ctx, app.NewCredit{InvoiceID: inv.ID}); fieldOf(t, err) != "lines" {
			t.Errorf("second full credit: %v, want an error on lines", err)
		}
	})
}
