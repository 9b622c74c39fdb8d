package api_test

import (
	"encoding/json"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

// TestCancellationPreviewAPI: POST /subscription/{id}/cancel/preview takes
// the cancel's body and answers, writing nothing, the credit note the
// cancellation then issues (internal/app's TestCancellationPreview holds
// the paid, unpaid and dated cases); its refusals are the cancel's, and
// another tenant's subscription is a 404.
func TestCancellationPreviewAPI(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newEuroFixture(t, e.NewTenant("cancel-preview", true))
		f.advance(osloDay(2027, 3, 1))
		id, inv := f.orderOf(f.pkg28)
		f.advance(osloDay(2027, 3, 10))
		body := map[string]any{"mode": "Immediately"}
		tn := f.tn
		r := tn.Do("POST", "/subscription/"+id+"/cancel/preview", body)
		if r.Status != 200 {
			t.Fatalf("preview: %d %s", r.Status, r.Body)
		}
		var p struct {
			Periods []struct {
				SubscriptionID string
				Deactivated    bool
				Settlement     *struct {
					Kind       string
					Reason     *string
					UsedDays   int
					CreditNote *struct{ Lines, VATTotals, Gross json.RawMessage }
				}
			}
		}
		r.JSON(t, &p)
		if len(p.Periods) != 1 || p.Periods[0].SubscriptionID != id || !p.Periods[0].Deactivated || p.Periods[0].Settlement == nil ||
			p.Periods[0].Settlement.Kind != "CreditNote" || p.Periods[0].Settlement.CreditNote == nil || p.Periods[0].Settlement.UsedDays != 9 || *p.Periods[0].Settlement.Reason != "Proration" {
			t.Fatalf("preview of 9 days of 28 used, not paid: %s", r.Body)
		}
		var again store.Subscription
		if tn.Do("GET", "/subscription/"+id, nil).JSON(t, &again); again.CancelledAt != nil {
			t.Fatal("the preview cancelled the subscription")
		}
		if r := tn.Do("POST", "/subscription/"+id+"/cancel", body); r.Status != 200 {
			t.Fatalf("cancel: %d", r.Status)
		}
		var notes []struct {
			Reason           string
			Lines, VATTotals json.RawMessage
			Gross            json.RawMessage
		}
		tn.Do("GET", "/creditnote?invoiceId="+inv.ID, nil).JSON(t, &notes)
		want := p.Periods[0].Settlement
		if len(notes) != 1 || notes[0].Reason != *want.Reason || string(notes[0].Lines) != string(want.CreditNote.Lines) ||
			string(notes[0].VATTotals) != string(want.CreditNote.VATTotals) || string(notes[0].Gross) != string(want.CreditNote.Gross) {
			t.Errorf("credit notes %+v; previewed %s", notes, r.Body)
		}
		if r := tn.Do("POST", "/subscription/"+id+"/cancel/preview", body); r.Status != 400 {
			t.Errorf("preview of a cancelled subscription: %d, want 400", r.Status)
		}
		if r := tn.Do("POST", "/subscription/"+id+"/cancel/preview", map[string]any{"mode": "Soon"}); r.Status != 400 {
			t.Errorf("bad mode: %d, want 400", r.Status)
		}
		if r := e.NewTenant("tenant-b", false).Do("POST", "/subscription/"+id+"/cancel/preview", body); r.Status != 404 {
			t.Errorf("tenant B previews tenant A's cancellation: %d, want 404", r.Status)
		}
	})
}
