package api

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
)

// TestListEncoders holds the hand-written list encoders to encoding/json:
// for records with and without the optional fields, strings that need
// escaping and times of every precision, appendSubscriptionItem and
// appendInvoiceItem write exactly the bytes json.Marshal writes for
// SubscriptionListItem and InvoiceListItem; and the field lists they were
// written for are still the types' (else lists fall back to
// encoding/json, slower, and this fails until the encoders are updated).
func TestListEncoders(t *testing.T) {
	for typ, want := range renderedFields {
		if got := jsonFieldNames(typ); !slices.Equal(got, want) {
			t.Errorf("%s has JSON fields\n%v\nthe list encoder writes\n%v", typ, got, want)
		}
	}
	if !fastLists {
		t.Fatal("fastLists is off")
	}
	// jsonFieldNames must agree with encoding/json on a populated value.
	sub, inv := sampleSubscription(), sampleInvoice()
	for _, v := range []any{SubscriptionListItem{Subscription: sub.Subscription, Package: ListedPackage{raw: sub.PackageJSON}},
		invoiceListItem(inv, store.InvoiceParts{Seller: true, Buyer: true, Lines: true, VATTotals: true})} {
		if got, want := orderedKeys(t, v), jsonFieldNames(reflect.TypeOf(v)); !slices.Equal(got, want) {
			t.Errorf("%T: encoding/json writes %v, jsonFieldNames says %v", v, got, want)
		}
	}

	now := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	texts := []string{"", "plain", "Kari Nordmann", "Ærlig Øl & Å <b>", `quote " and \ backslash`, "tab\tnew\nline\x01",
		"\u2028\u2029", "bad \xff utf-8", "emoji 🎉"}
	times := []time.Time{time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC), time.Date(2026, 11, 24, 8, 44, 44, 335659000, time.UTC),
		time.Date(2026, 11, 24, 8, 44, 44, 335659188, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 100, time.UTC)}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	ptr := func(s string) *string {
		if rng.IntN(3) == 0 {
			return nil
		}
		return &s
	}
	tptr := func() *time.Time {
		if rng.IntN(3) == 0 {
			return nil
		}
		tm := times[rng.IntN(len(times))]
		return &tm
	}
	for i := range 300 {
		sub := sampleSubscription()
		sub.ID, sub.SubscriberID, sub.Currency, sub.TimeZone, sub.CancelReason = pick(texts), pick(texts), pick(texts), pick(texts), pick(texts)
		sub.OrderID, sub.PaymentAgreementID, sub.ChainID, sub.PreviousID, sub.NextID = ptr(pick(texts)), ptr(pick(texts)), ptr("c"), ptr(pick(texts)), ptr(pick(texts))
		if rng.IntN(2) == 0 {
			n := rng.IntN(5) - 1
			sub.ChainStep = &n
		}
		sub.StepPeriod = rng.IntN(100) - 50
		sub.PeriodStart, sub.PeriodEnd, sub.CreatedAt = times[rng.IntN(len(times))], times[rng.IntN(len(times))], times[rng.IntN(len(times))]
		sub.RenewAt, sub.CancelledAt, sub.CancelEffectiveAt, sub.DeactivatedAt = tptr(), tptr(), tptr(), tptr()
		// A binding ahead of now, one passed, or none; a cancellation
		// waiting for it or not.
		switch rng.IntN(3) {
		case 0:
			end := now.AddDate(0, rng.IntN(12)+1, 0)
			sub.BindingEnd = &end
		case 1:
			end := now.AddDate(0, -1, 0)
			sub.BindingEnd = &end
		}
		sub.ScheduledCancelAt = tptr()
		want, err := json.Marshal(subscriptionListItem(sub, now))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendSubscriptionItem(nil, &sub, now); !bytes.Equal(got, want) {
			t.Fatalf("subscription %d:\n got %s\nwant %s", i, got, want)
		}

		inv := sampleInvoice()
		inv.ID, inv.Status, inv.IssueDate, inv.KID = pick(texts), pick(texts), pick(texts), pick(texts)
		inv.InvoiceNumber = rng.Int64N(1 << 40)
		inv.Number = inv.InvoiceNumber
		inv.PricesIncludeVAT = rng.IntN(2) == 0
		inv.SubscriptionID, inv.PaymentAgreementID = ptr(pick(texts)), ptr(pick(texts))
		inv.IssuedAt, inv.DueAt, inv.CreatedAt = times[rng.IntN(len(times))], times[rng.IntN(len(times))], times[rng.IntN(len(times))]
		inv.PeriodStart, inv.PeriodEnd = tptr(), tptr()
		inv.Net = catalog.Amount{Minor: rng.Int64N(2_000_000) - 1_000_000, Digits: rng.IntN(4)}
		inv.VAT, inv.Gross = catalog.Amount{Minor: -rng.Int64N(100), Digits: 2}, catalog.Amount{Minor: rng.Int64N(1000), Digits: 0}
		want, err = json.Marshal(invoiceListItem(inv, store.InvoiceParts{}))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendInvoiceItem(nil, &inv); !bytes.Equal(got, want) {
			t.Fatalf("invoice %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestAppendAmount compares appendAmount with catalog.Amount's own
// encoding at the edges of signs, digits and sizes.
func TestAppendAmount(t *testing.T) {
	minors := []int64{0, 1, -1, 5, -5, 9, 10, 99, 100, 101, -101, 19900, -19900, 123456789, 1<<53 + 1, 1<<62 - 1, -(1<<62 - 1)}
	for _, m := range minors {
		for d := range 5 {
			a := catalog.Amount{Minor: m, Digits: d}
			want, _ := a.MarshalJSON()
			if got := appendAmount([]byte("x"), a); string(got) != "x"+string(want) {
				t.Errorf("Amount{%d, %d}: %s, want %s", m, d, got[1:], want)
			}
		}
	}
}

func orderedKeys(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

func sampleSubscription() store.ListedSubscription {
	start := time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC)
	n := 2
	return store.ListedSubscription{Subscription: store.Subscription{ID: "01a20cba-95ff-7601-9fbc-b42b4ccde700",
		SubscriberID: "s", OrganizationID: "o", Currency: "NOK", ChainStep: &n, StepPeriod: 1, TimeZone: "Europe/Oslo",
		PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0), CreatedAt: start},
		PackageJSON: []byte(`{"name":"Digital \u003c1\u003e","units":1}`)}
}

func sampleInvoice() store.Invoice {
	at := time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC)
	sub := "sub"
	return store.Invoice{ID: "i", InvoiceNumber: 7, OrganizationID: "o", PaymentDemandID: "d", SubscriberAccountID: "a",
		SubscriberID: "s", SubscriptionID: &sub, Currency: "NOK", Status: "Issued", IssuedAt: at, DueAt: at, IssueDate: "2027-02-01",
		DueDate: "2027-02-15", PeriodStart: &at, Seller: store.Seller{Name: "Nordavis AS"}, Buyer: store.Buyer{Name: "Kari"},
		Lines: []billing.Line{}, VATTotals: []billing.VATTotal{}, Net: catalog.Amount{Minor: 19900, Digits: 2}, KID: "00000000018", CreatedAt: at}
}

// FuzzAppendJSONTime: the hand-written UTC layout of list pages writes
// exactly what time.Time's MarshalJSON writes, for any instant and zone.
func FuzzAppendJSONTime(f *testing.F) {
	for _, seed := range []struct {
		sec  int64
		nsec int64
	}{{0, 0}, {1_700_000_000, 0}, {1_700_000_000, 123_000}, {1_700_000_000, 100_000_000}, {1_700_000_000, 999_999_999},
		{-62_135_596_800, 1}, {253_402_300_799, 5}, {951_782_400, 0} /* 29 February 2000 */} {
		f.Add(seed.sec, seed.nsec, false)
	}
	f.Fuzz(func(t *testing.T, sec, nsec int64, oslo bool) {
		tm := time.Unix(sec, nsec%1_000_000_000).UTC()
		if oslo {
			loc, err := time.LoadLocation("Europe/Oslo") // embedded: internal/period imports time/tzdata
			if err != nil {
				t.Fatal(err)
			}
			tm = tm.In(loc)
		}
		want, err := json.Marshal(tm)
		if err != nil {
			return // outside the years MarshalJSON writes; the store has none
		}
		if got := appendJSONTime(nil, tm); string(got) != string(want) {
			t.Fatalf("appendJSONTime(%v) = %s, MarshalJSON = %s", tm, got, want)
		}
	})
}

// appendSubscriptionItem is a list row as writeSubscriptionList puts it
// together (head, package and status, tail, binding): what encoding/json writes for
// SubscriptionListItem.
func appendSubscriptionItem(b []byte, sub *store.ListedSubscription, now time.Time) []byte {
	b = appendSubscriptionHead(b, sub)
	b = appendSubscriptionMiddle(b, sub, now)
	b = appendSubscriptionTail(b, sub)
	return appendSubscriptionBinding(b, sub, now)
}
