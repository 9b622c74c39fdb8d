package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/provider/ehf"
	"github.com/kadens/kadens/internal/provider/external"
	"github.com/kadens/kadens/internal/provider/invoice"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

func create(t *testing.T, tn apitest.Tenant, path string, body any) string {
	t.Helper()
	r := tn.Do("POST", path, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	return r.ID(t)
}

// billed orders a monthly package for a new subscriber paying with an
// agreement of providerType (reference ref), completes the order (which
// issues the first invoice) and credits that invoice in full. It returns
// the invoice id.
func billed(t *testing.T, tn apitest.Tenant, providerType, ref string) string {
	t.Helper()
	product := create(t, tn, "/product", map[string]any{"name": "Nordavis Digital", "category": "digital", "vatRate": 0})
	plan := create(t, tn, "/billingplan", map[string]any{"name": "Monthly", "intervalUnit": "Month"})
	pkg := create(t, tn, "/package", fmt.Sprintf(`{"Name": "Digital", "Currency": "NOK", "Price": 199.00,
		"products": [{"productId": %q}], "BillingPlans": [%q]}`, product, plan))
	org := create(t, tn, "/organization", map[string]any{"name": "Nordavis AS", "organizationNumber": "923609016", "country": "NO",
		"currency": "NOK", "timeZone": "Europe/Oslo"})
	sub := create(t, tn, "/subscriber", map[string]any{"name": "Regnskap AS", "country": "NO"})
	agreement := map[string]any{"subscriberId": sub, "providerType": providerType}
	if ref != "" {
		agreement["providerAgreementReference"] = ref
	}
	r := tn.Do("POST", "/paymentagreement", agreement)
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("agreement: %d %s", r.Status, r.Body)
	}
	order := create(t, tn, "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": sub,
		"paymentAgreementId": r.ID(t)})
	if r := tn.Do("POST", "/order/"+order+"/complete", nil); r.Status != http.StatusOK {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	r = tn.Do("GET", "/invoice", nil)
	var invs []store.Invoice
	r.JSON(t, &invs)
	if len(invs) != 1 {
		t.Fatalf("%d invoices after the order, want 1", len(invs))
	}
	if r := tn.Do("POST", "/invoice/"+invs[0].ID+"/credit", map[string]any{"reason": "test"}); r.Status != http.StatusCreated {
		t.Fatalf("credit: %d %s", r.Status, r.Body)
	}
	return invs[0].ID
}

// TestDispatcherCallsTheInvoicesProvider drives the Dispatcher with the
// outbox events of a real order and credit, as the outbox consumer will: the
// hooks of the invoice's provider run, with the ids they need, and those of
// other providers do not.
func TestDispatcherCallsTheInvoicesProvider(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		var calls []string
		rec := func(kind string) func(context.Context, provider.Invoice) error {
			return func(ctx context.Context, inv provider.Invoice) error {
				if tenant, err := tenancy.From(ctx); err != nil || tenant != inv.TenantID {
					t.Errorf("%s: context tenant %q (%v), invoice of %s", kind, tenant, err, inv.TenantID)
				}
				calls = append(calls, fmt.Sprintf("%s %s %s", kind, inv.InvoiceID, inv.CreditNoteID))
				return nil
			}
		}
		deliver := func(_ context.Context, d provider.Document) error {
			calls = append(calls, fmt.Sprintf("deliver %s %s %s", d.Kind, d.ID, d.InvoiceID))
			return nil
		}
		collecting := ehf.Provider
		collecting.InvoiceIssued, collecting.InvoiceCredited, collecting.Deliver = rec("issued"), rec("credited"), deliver
		otherwise := invoice.Provider
		otherwise.InvoiceIssued = func(context.Context, provider.Invoice) error {
			t.Error("the Invoice provider's hook ran for an EHF invoice")
			return nil
		}
		d := provider.Dispatcher{Registry: provider.NewRegistry(otherwise, collecting), Store: e.Store}

		inv := billed(t, e.Tenant, "EHF", "923609016")
		ctx := tenancy.With(context.Background(), e.Tenant.ID)
		events, _, err := e.Store.ListEvents(ctx, store.EventFilter{}, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var note string
		for _, ev := range events {
			if err := d.Handle(context.Background(), e.Tenant.ID, ev); err != nil {
				t.Fatalf("%s: %v", ev.EventType, err)
			}
			if ev.EventType == store.EventCreditNoteIssued {
				note = ev.Subject[len("/creditnote/"):]
			}
		}
		want := []string{"issued " + inv + " ", "deliver Invoice " + inv + " " + inv,
			"credited " + inv + " " + note, "deliver CreditNote " + note + " " + inv}
		if !slices.Equal(calls, want) {
			t.Errorf("calls\n%q\nwant\n%q", calls, want)
		}

		// Another tenant's events are not found under this one.
		other := e.NewTenant("other", true)
		for _, ev := range events {
			if ev.EventType == store.EventInvoiceIssued {
				if err := d.Handle(context.Background(), other.ID, ev); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("cross-tenant event: %v, want not found", err)
				}
			}
		}

		// A failing hook is the consumer's to retry.
		collecting.InvoiceIssued = func(context.Context, provider.Invoice) error { return errors.New("bank unreachable") }
		d.Registry = provider.NewRegistry(collecting)
		for _, ev := range events {
			if ev.EventType == store.EventInvoiceIssued {
				if err := d.Handle(context.Background(), e.Tenant.ID, ev); err == nil {
					t.Error("a failing hook's error was lost")
				}
			}
		}
	})
}

// TestDispatcherRunsLifecycleHooks drives the Dispatcher with the outbox
// events of a real agreement created and deleted: the hooks of the
// agreement's provider run once each with its ids, another provider's not,
// and a failing hook is returned for the consumer to retry.
func TestDispatcherRunsLifecycleHooks(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		var calls []string
		rec := func(kind string) func(context.Context, provider.AgreementRef) error {
			return func(ctx context.Context, a provider.AgreementRef) error {
				if tenant, err := tenancy.From(ctx); err != nil || tenant != a.TenantID || a.EventID == "" || a.Now.IsZero() {
					t.Errorf("%s: context tenant %q (%v), ref %+v", kind, tenant, err, a)
				}
				calls = append(calls, kind+" "+a.AgreementID+" "+a.SubscriberID)
				return nil
			}
		}
		own := external.Provider
		own.AgreementCreated, own.AgreementDeleted = rec("created"), rec("deleted")
		other := ehf.Provider
		other.AgreementCreated = func(context.Context, provider.AgreementRef) error {
			t.Error("EHF's lifecycle hook ran for an External agreement")
			return nil
		}
		d := provider.Dispatcher{Registry: provider.NewRegistry(other, own), Store: e.Store}

		sub := create(t, e.Tenant, "/subscriber", map[string]any{"name": "Kari Nordmann", "country": "NO"})
		agreement := create(t, e.Tenant, "/paymentagreement", map[string]any{"subscriberId": sub, "providerType": "External",
			"providerAgreementReference": "wallet-1"})
		if r := e.Tenant.Do("DELETE", "/paymentagreement/"+agreement, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		ctx := tenancy.With(context.Background(), e.Tenant.ID)
		events, _, err := e.Store.ListEvents(ctx, store.EventFilter{}, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			if err := d.Handle(context.Background(), e.Tenant.ID, ev); err != nil {
				t.Fatalf("%s: %v", ev.EventType, err)
			}
		}
		want := []string{"created " + agreement + " " + sub, "deleted " + agreement + " " + sub}
		if !slices.Equal(calls, want) {
			t.Errorf("calls\n%q\nwant\n%q", calls, want)
		}

		own.AgreementDeleted = func(context.Context, provider.AgreementRef) error { return errors.New("provider unreachable") }
		d.Registry = provider.NewRegistry(own)
		failed := false
		for _, ev := range events {
			if ev.EventType == store.EventPaymentAgreementDeleted {
				failed = d.Handle(context.Background(), e.Tenant.ID, ev) != nil
			}
		}
		if !failed {
			t.Error("a failing lifecycle hook's error was lost")
		}
	})
}
