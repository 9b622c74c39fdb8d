package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// List pages are compact (docs/PERFORMANCE.md, "Lists"): a subscription in
// a list carries a summary of its package and an invoice leaves out its
// seller, buyer, lines and VAT totals, unless the request names them in
// `expand` (as Stripe's lists do). GET by id always answers the whole
// record. A page of 100 subscriptions went from ~140 KB to ~60 KB.

// SubscriptionListItem is a subscription period in a list: as GET
// /subscription/{id} shows it, with the package summarized unless
// expand=package.
type SubscriptionListItem struct {
	store.Subscription
	Package ListedPackage `json:"package" description:"The package's summary (name, currency, price, units, totalPrice, automaticStop, the billing plan's id, name and interval, the chain fields); with expand=package the whole SubscriptionPackage, a superset of the summary."`
	Status  string        `json:"status" enum:"Pending,Active,Completed,Cancelled"`
}

// ListedPackage is the package JSON of a list item, as the store rendered
// it (store.ListedSubscription.PackageJSON).
type ListedPackage struct{ raw []byte }

// MarshalJSON writes the rendered JSON as it is.
func (p ListedPackage) MarshalJSON() ([]byte, error) { return p.raw, nil }

// JSONSchemaAnyOf says what a listed package may be: its summary or, with
// expand=package, the whole package.
func (ListedPackage) JSONSchemaAnyOf() []any {
	return []any{store.PackageSummary{}, catalog.SubscriptionPackage{}}
}

// InvoiceListItem is an invoice in a list: as GET /invoice/{id} shows it,
// without the parts expand does not name.
type InvoiceListItem struct {
	store.Invoice
	Seller    *store.Seller      `json:"seller,omitzero" description:"With expand=seller."`
	Buyer     *store.Buyer       `json:"buyer,omitzero" description:"With expand=buyer."`
	Lines     []billing.Line     `json:"lines,omitzero" description:"With expand=lines."`
	VATTotals []billing.VATTotal `json:"vatTotals,omitzero" description:"With expand=vatTotals."`
}

func invoiceListItem(inv store.Invoice, parts store.InvoiceParts) InvoiceListItem {
	item := InvoiceListItem{Invoice: inv}
	if parts.Seller {
		item.Seller = &inv.Seller
	}
	if parts.Buyer {
		item.Buyer = &inv.Buyer
	}
	if parts.Lines {
		item.Lines = inv.Lines
	}
	if parts.VATTotals {
		item.VATTotals = inv.VATTotals
	}
	return item
}

// subscriptionExpansion is what expand may name in a subscription list.
type subscriptionExpansion string

// Enum lists the values for the OpenAPI document.
func (subscriptionExpansion) Enum() []any { return []any{"package"} }

// invoiceExpansion is what expand may name in an invoice list.
type invoiceExpansion string

// Enum lists the values for the OpenAPI document.
func (invoiceExpansion) Enum() []any { return []any{"seller", "buyer", "lines", "vatTotals"} }

// expandParam reads the expand query parameter: names from allowed, comma
// separated or repeated. An unknown name is a 400 naming expand.
func expandParam(r *http.Request, errs *validation.Errors, allowed ...string) map[string]bool {
	out := map[string]bool{}
	for _, v := range r.URL.Query()["expand"] {
		for name := range strings.SplitSeq(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !slices.Contains(allowed, name) {
				errs.Add("expand", "must be %s (comma separated or repeated), not %q", strings.Join(allowed, ", "), name)
				continue
			}
			out[name] = true
		}
	}
	return out
}

// listBuffers recycles the buffers list pages are rendered into.
var listBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// writeSubscriptionList answers a page of subscriptions, rendered by
// appendSubscriptionItem: the same bytes encoding/json writes for
// []SubscriptionListItem (TestSubscriptionListEncoding holds it to that),
// without reflecting over every field of every row.
func (s *Server) writeSubscriptionList(w http.ResponseWriter, r *http.Request, subs []store.ListedSubscription, now time.Time, next string) {
	bp := listBuffers.Get().(*[]byte)
	b := append((*bp)[:0], '[')
	for i := range subs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendSubscriptionItem(b, &subs[i], now)
	}
	b = append(b, "]\n"...)
	s.setNextLink(w, r, next)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	if cap(b) <= 1<<20 { // a page of expanded packages may be large; don't keep those
		*bp = b
		listBuffers.Put(bp)
	}
}

// appendSubscriptionItem appends sub as encoding/json would write its
// SubscriptionListItem: the fields of store.Subscription in declaration
// order without the package, then the package and the status.
func appendSubscriptionItem(b []byte, sub *store.ListedSubscription, now time.Time) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, sub.ID)
	b = append(b, `,"subscriberId":`...)
	b = appendJSONString(b, sub.SubscriberID)
	b = append(b, `,"organizationId":`...)
	b = appendJSONString(b, sub.OrganizationID)
	b = append(b, `,"orderId":`...)
	b = appendJSONNullString(b, sub.OrderID)
	b = append(b, `,"paymentAgreementId":`...)
	b = appendJSONNullString(b, sub.PaymentAgreementID)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, sub.Currency)
	b = append(b, `,"subscriptionPackageChainId":`...)
	b = appendJSONNullString(b, sub.ChainID)
	b = append(b, `,"chainStepOrder":`...)
	if sub.ChainStep == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*sub.ChainStep), 10)
	}
	b = append(b, `,"chainStepPeriod":`...)
	b = strconv.AppendInt(b, int64(sub.StepPeriod), 10)
	b = append(b, `,"timeZone":`...)
	b = appendJSONString(b, sub.TimeZone)
	b = append(b, `,"periodStart":`...)
	b = appendJSONTime(b, sub.PeriodStart)
	b = append(b, `,"periodEnd":`...)
	b = appendJSONTime(b, sub.PeriodEnd)
	b = append(b, `,"renewAt":`...)
	b = appendJSONNullTime(b, sub.RenewAt)
	b = append(b, `,"previousSubscriptionId":`...)
	b = appendJSONNullString(b, sub.PreviousID)
	b = append(b, `,"nextSubscriptionId":`...)
	b = appendJSONNullString(b, sub.NextID)
	b = append(b, `,"cancelledAt":`...)
	b = appendJSONNullTime(b, sub.CancelledAt)
	b = append(b, `,"cancelEffectiveAt":`...)
	b = appendJSONNullTime(b, sub.CancelEffectiveAt)
	b = append(b, `,"cancelReason":`...)
	b = appendJSONString(b, sub.CancelReason)
	b = append(b, `,"deactivatedAt":`...)
	b = appendJSONNullTime(b, sub.DeactivatedAt)
	b = append(b, `,"createdAt":`...)
	b = appendJSONTime(b, sub.CreatedAt)
	b = append(b, `,"package":`...)
	b = append(b, sub.PackageJSON...)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, engine.Status(sub.Subscription, now))
	return append(b, '}')
}

// appendJSONString appends s as encoding/json writes a string. Plain
// printable ASCII, nearly every id, name and zone, is copied; anything
// else is left to encoding/json, so escaping (HTML characters, control
// characters, U+2028, invalid UTF-8) is exactly its own.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s) // a string always encodes
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendJSONNullString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

// appendJSONTime appends t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds as needed; stored times are within its years 0-9999).
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendJSONNullTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendJSONTime(b, *t)
}
