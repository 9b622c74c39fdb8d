package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// firstInvoice is the invoice of period id.
func firstInvoice(t *testing.T, a *app.App, ctx context.Context, id string) store.Invoice {
	t.Helper()
	invs, _, err := a.Invoices(ctx, store.DocumentFilter{SubscriptionID: id}, store.Page{Limit: 10}, store.InvoiceParts{})
	if err != nil || len(invs) != 1 {
		t.Fatalf("invoices of %s: %d, %v; want 1", id, len(invs), err)
	}
	inv, err := a.Invoice(ctx, invs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// cancelsAsPreviewed previews cancelling sub as c, checks that the preview
// wrote nothing, cancels, and checks that what the cancellation wrote is
// the preview: the credit note's lines and totals, or the allowances per
// VAT rate.
func cancelsAsPreviewed(t *testing.T, s *store.Store, a *app.App, ctx context.Context, sub store.Subscription, c app.Cancellation) app.CancellationPreview {
	t.Helper()
	inv := firstInvoice(t, a, ctx, sub.ID)
	items := func() []store.OpenItem {
		_, items, err := s.OpenItemsOf(ctx, store.AccountKey{SubscriberID: sub.SubscriberID, Currency: sub.Currency}, time.Now().AddDate(10, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		return items
	}
	notes := func() []store.CreditNote {
		n, _, err := a.CreditNotes(ctx, store.CreditNoteFilter{InvoiceID: inv.ID}, store.Page{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	itemsBefore, notesBefore := len(items()), len(notes())
	p, err := a.CancellationPreview(ctx, sub.ID, c)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := a.Subscription(ctx, sub.ID); err != nil || again.CancelledAt != nil {
		t.Fatalf("after the preview: %+v, %v; want it not cancelled", again, err)
	}
	if len(items()) != itemsBefore || len(notes()) != notesBefore {
		t.Fatalf("the preview wrote items or notes")
	}
	if len(p.Periods) != 1 || p.Periods[0].SubscriptionID != sub.ID {
		t.Fatalf("preview periods %+v; want %s", p.Periods, sub.ID)
	}
	if _, _, err := a.CancelSubscription(ctx, sub.ID, c); err != nil {
		t.Fatal(err)
	}
	got, err := a.Subscription(ctx, sub.ID)
	if err != nil || got.CancelEffectiveAt == nil || !got.CancelEffectiveAt.Equal(p.Periods[0].EffectiveAt) ||
		(got.DeactivatedAt != nil) != p.Periods[0].Deactivated {
		t.Fatalf("cancelled %+v, %v; previewed effect %s, deactivated %v", got, err, p.Periods[0].EffectiveAt, p.Periods[0].Deactivated)
	}
	set := p.Periods[0].Settlement
	newNotes, newItems := notes()[notesBefore:], items()[itemsBefore:]
	switch {
	case set == nil:
		if len(newNotes) != 0 || len(newItems) != 0 {
			t.Errorf("previewed nothing; the cancellation wrote %d notes, %d items", len(newNotes), len(newItems))
		}
	case set.Note != nil:
		if len(newNotes) != 1 {
			t.Fatalf("previewed a credit note; the cancellation wrote %d", len(newNotes))
		}
		n := newNotes[0]
		if got, want := jsonOf(t, n.Lines), jsonOf(t, set.Note.Lines); got != want {
			t.Errorf("credit note lines\n  written   %s\n  previewed %s", got, want)
		}
		if got, want := jsonOf(t, n.VATTotals), jsonOf(t, set.Note.VATTotals); got != want {
			t.Errorf("credit note VAT %s, previewed %s", got, want)
		}
		if n.Gross.Minor != set.Note.Gross || n.Reason != set.Reason {
			t.Errorf("credit note gross %d reason %s, previewed %d %s", n.Gross.Minor, n.Reason, set.Note.Gross, set.Reason)
		}
		if len(newItems) != 0 {
			t.Errorf("items %+v besides the note (the invoice was not paid)", newItems)
		}
	default:
		if len(newNotes) != 0 || len(newItems) != len(set.Allowances) {
			t.Fatalf("previewed allowances %+v; written notes %d, items %+v", set.Allowances, len(newNotes), newItems)
		}
		for i, al := range set.Allowances {
			if it := newItems[i]; it.Kind != "Allowance" || it.Remaining != al.Gross || jsonOf(t, it.VATRate) != jsonOf(t, al.VATRate) {
				t.Errorf("allowance %d: written %+v, previewed %+v", i, it, al)
			}
		}
	}
	return p
}

// TestCancellationPreview: cancelling now, or at a date, previews exactly
// what the cancellation then writes, for an invoice not paid (a credit
// note down to the used days) and a paid one (an allowance for the
// unused days), in a month that ends on the 28th; at the period end
// nothing is settled.
func TestCancellationPreview(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, ctx, oslo, order := monthEndApp(t, s)
		mid := time.Date(2027, 2, 10, 12, 0, 0, 0, time.UTC)
		unpaid, paid, atDate, endOf := order(), order(), order(), order()
		inv := firstInvoice(t, a, ctx, paid.ID)
		if _, _, err := a.RecordPayment(ctx, app.NewPayment{InvoiceID: inv.ID, Status: store.PaymentSucceeded, Amount: inv.Gross.Minor,
			Currency: inv.Currency, Provider: "Manual", ProviderReference: "bank-1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.AdvanceTestClock(ctx, mid); err != nil {
			t.Fatal(err)
		}
		p := cancelsAsPreviewed(t, s, a, ctx, unpaid, app.Cancellation{Mode: engine.CancelImmediately})
		if set := p.Periods[0].Settlement; set == nil || set.Note == nil || set.TotalDays != 28 || set.UsedDays != 10 || set.Reason != store.CreditReasonProration {
			t.Errorf("unpaid, cancelled on 10 February: %+v; want a proration credit of 18 of 28 days", set)
		}
		p = cancelsAsPreviewed(t, s, a, ctx, paid, app.Cancellation{Mode: engine.CancelImmediately})
		if set := p.Periods[0].Settlement; set == nil || set.Note != nil || len(set.Allowances) != 1 || set.UsedDays != 10 {
			t.Errorf("paid, cancelled on 10 February: %+v; want an allowance for 18 of 28 days", set)
		}
		at := time.Date(2027, 2, 20, 0, 0, 0, 0, oslo)
		p = cancelsAsPreviewed(t, s, a, ctx, atDate, app.Cancellation{At: &at})
		if set := p.Periods[0].Settlement; set == nil || set.Note == nil || set.UsedDays != 20 || p.Periods[0].Deactivated {
			t.Errorf("unpaid, cancelled from 20 February: %+v; want a credit of 8 of 28 days, not deactivated now", p.Periods[0])
		}
		p = cancelsAsPreviewed(t, s, a, ctx, endOf, app.Cancellation{Mode: engine.CancelEndOfPeriod})
		if p.Periods[0].Settlement != nil || !p.Periods[0].EffectiveAt.Equal(endOf.PeriodEnd) {
			t.Errorf("at the period end: %+v; want nothing settled, effect %s", p.Periods[0], endOf.PeriodEnd)
		}
		if _, err := a.CancellationPreview(ctx, endOf.ID, app.Cancellation{Mode: engine.CancelImmediately}); err == nil {
			t.Error("previewing a cancelled subscription's cancellation: no error; want the cancellation's refusal")
		}
	})
}
