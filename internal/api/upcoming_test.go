package api_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

// upcomingBody is GET /subscription/{id}/upcominginvoice as a client reads
// it; lines and totals stay raw, to compare with the invoice byte for byte.
type upcomingBody struct {
	SubscriptionID         string
	RenewingSubscriptionID string
	WillRenew              bool
	Reason                 string
	PeriodStart, PeriodEnd *time.Time
	IssuedAt, DueAt        *time.Time
	IssueDate, DueDate     *string
	Currency               string
	Lines, VATTotals       json.RawMessage
	Net, VAT, Gross        json.RawMessage
	PendingChanges         []struct {
		Kind, ID string
		At       *time.Time
	}
}

// TestUpcomingInvoiceAPI: GET /subscription/{id}/upcominginvoice previews
// the renewal through the real listener (internal/app's TestUpcoming* hold
// its rules), the renewal then issues an invoice whose lines, VAT totals and
// totals are the preview's, byte for byte; a cancelled subscription answers
// willRenew false with no lines; an unknown or another tenant's
// subscription is a 404, a malformed id a 400.
func TestUpcomingInvoiceAPI(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		var clock struct{ Now time.Time }
		e.Do("GET", "/testclock", nil).JSON(t, &clock)
		sub, _, _ := beginSubscription(t, e, e.Tenant, clock.Now.Add(24*time.Hour))

		var up upcomingBody
		r := e.Do("GET", "/subscription/"+sub.ID+"/upcominginvoice", nil)
		if r.Status != 200 {
			t.Fatalf("upcoming invoice: %d", r.Status)
		}
		r.JSON(t, &up)
		if !up.WillRenew || up.Reason != "" || up.SubscriptionID != sub.ID || up.RenewingSubscriptionID != sub.ID ||
			up.PeriodStart == nil || !up.PeriodStart.Equal(sub.PeriodEnd) || up.IssuedAt == nil || up.Currency != "NOK" ||
			string(up.Gross) != "199.00" || len(up.PendingChanges) != 0 {
			t.Fatalf("upcoming invoice: %+v (lines %s)", up, up.Lines)
		}

		if r := e.Do("POST", "/testclock/advance", map[string]any{"to": up.IssuedAt.Add(time.Second).Format(time.RFC3339Nano)}); r.Status != 200 {
			t.Fatalf("advance: %d", r.Status)
		}
		var renewed store.Subscription
		e.Do("GET", "/subscription/"+sub.ID, nil).JSON(t, &renewed)
		if renewed.NextID == nil {
			t.Fatalf("no renewal by %s", up.IssuedAt)
		}
		var page []struct{ ID string }
		e.Do("GET", "/invoice?subscriptionId="+*renewed.NextID, nil).JSON(t, &page)
		if len(page) != 1 {
			t.Fatalf("%d invoices of the renewal, want 1", len(page))
		}
		var inv struct {
			IssuedAt, DueAt        time.Time
			IssueDate, DueDate     string
			PeriodStart, PeriodEnd time.Time
			Lines, VATTotals       json.RawMessage
			Net, VAT, Gross        json.RawMessage
		}
		e.Do("GET", "/invoice/"+page[0].ID, nil).JSON(t, &inv)
		if string(inv.Lines) != string(up.Lines) || string(inv.VATTotals) != string(up.VATTotals) ||
			string(inv.Net) != string(up.Net) || string(inv.VAT) != string(up.VAT) || string(inv.Gross) != string(up.Gross) {
			t.Errorf("invoice lines %s, VAT %s, totals %s/%s/%s;\npreviewed %s, %s, %s/%s/%s", inv.Lines, inv.VATTotals, inv.Net, inv.VAT, inv.Gross,
				up.Lines, up.VATTotals, up.Net, up.VAT, up.Gross)
		}
		if !inv.IssuedAt.Equal(*up.IssuedAt) || !inv.DueAt.Equal(*up.DueAt) || inv.IssueDate != *up.IssueDate || inv.DueDate != *up.DueDate ||
			!inv.PeriodStart.Equal(*up.PeriodStart) || !inv.PeriodEnd.Equal(*up.PeriodEnd) {
			t.Errorf("invoice %+v, previewed %+v", inv, up)
		}

		// The series' last period, created ahead, renews next; cancelled,
		// it never starts and the series ends with the running period.
		if r := e.Do("POST", "/subscription/"+*renewed.NextID+"/cancel", map[string]any{"mode": "EndOfPeriod"}); r.Status != 200 {
			t.Fatalf("cancel: %d", r.Status)
		}
		var none upcomingBody
		e.Do("GET", "/subscription/"+sub.ID+"/upcominginvoice", nil).JSON(t, &none)
		if none.WillRenew || none.Reason != "Cancelled" || string(none.Lines) != "[]" || string(none.Gross) != "null" ||
			none.RenewingSubscriptionID != *renewed.NextID || len(none.PendingChanges) != 1 || none.PendingChanges[0].Kind != "Cancellation" ||
			none.PendingChanges[0].At == nil || !none.PendingChanges[0].At.Equal(sub.PeriodEnd) {
			var last store.Subscription
			e.Do("GET", "/subscription/"+*renewed.NextID, nil).JSON(t, &last)
			t.Errorf("cancelled: %+v (lines %s, gross %s); last period %+v", none, none.Lines, none.Gross, last)
		}

		if r := e.Do("GET", "/subscription/"+store.NewID()+"/upcominginvoice", nil); r.Status != 404 {
			t.Errorf("unknown subscription: %d, want 404", r.Status)
		}
		if r := e.NewTenant("tenant-b", false).Do("GET", "/subscription/"+sub.ID+"/upcominginvoice", nil); r.Status != 404 {
			t.Errorf("tenant B reads tenant A's upcoming invoice: %d, want 404", r.Status)
		}
		if r := e.Do("GET", "/subscription/not-an-id/upcominginvoice", nil); r.Status != 400 {
			t.Errorf("malformed id: %d, want 400", r.Status)
		}
	})
}
