package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// List pages are compact (docs/PERFORMANCE.md, "List pages"): a subscription in
// a list carries a summary of its package and an invoice leaves out its
// seller, buyer, lines and VAT totals, unless the request names them in
// `expand` (as Stripe's lists do). GET by id always answers the whole
// record. A page of 100 subscriptions went from ~140 KB to ~96 KB, of
// invoices from ~178 KB to ~74 KB.

// SubscriptionListItem is a subscription period in a list: as GET
// /subscription/{id} shows it, with the package summarized unless
// expand=package.
type SubscriptionListItem struct {
	store.Subscription
	Package   ListedPackage `json:"package" description:"The package's summary (name, currency, price, units, totalPrice, automaticStop, the billing plan's id, name and interval, the chain fields); with expand=package the whole SubscriptionPackage, a superset of the summary."`
	Status    string        `json:"status" enum:"Pending,Active,Completed,Cancelled"`
	StartTime time.Time     `json:"startTime" description:"The same as periodStart, under the name INFO-Subscription clients read."`
	EndTime   time.Time     `json:"endTime" description:"When this period stops giving access: periodEnd, or cancelEffectiveAt when a cancellation ends it earlier."`
	// The binding, as GET /subscription/{id} shows it.
	BindingEndsAt              *time.Time `json:"bindingEndsAt" description:"When the series' binding period ends; null when it has none or it has ended."`
	ScheduledCancelEffectiveAt *time.Time `json:"scheduledCancelEffectiveAt" description:"When a cancellation waiting for the binding end takes effect; null when none waits."`
}

func subscriptionListItem(sub store.ListedSubscription, now time.Time) SubscriptionListItem {
	it := SubscriptionListItem{Subscription: sub.Subscription, Package: ListedPackage{raw: sub.PackageJSON},
		Status: engine.Status(sub.Subscription, now), StartTime: sub.PeriodStart, EndTime: endTime(&sub.Subscription)}
	it.BindingEndsAt, it.ScheduledCancelEffectiveAt = bindingTimes(&sub.Subscription, now)
	return it
}

// ListedPackage is the package JSON of a list item, as the store rendered
// it (store.ListedSubscription.PackageJSON). Its schema is the summary's
// (the embedded PackageSummary, only reflected); with expand=package the
// whole package is sent, which has every property of the summary and
// more, so one schema describes both and generated clients get one type.
type ListedPackage struct {
	store.PackageSummary
	raw []byte
}

// MarshalJSON writes the rendered JSON as it is.
func (p ListedPackage) MarshalJSON() ([]byte, error) { return p.raw, nil }

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
// []SubscriptionListItem (TestListEncoders holds it to that), without
// reflecting over every field of every row.
func (s *Server) writeSubscriptionList(w http.ResponseWriter, r *http.Request, subs []store.ListedSubscription, now time.Time, next string) {
	if !fastLists {
		items := make([]SubscriptionListItem, len(subs))
		for i, sub := range subs {
			items[i] = subscriptionListItem(sub, now)
		}
		s.writeList(w, r, items, next)
		return
	}
	tenant := tenantOf(r)
	s.writeRendered(w, r, len(subs), func(b []byte, i int) []byte {
		sub := &subs[i]
		row, ok := s.renderedSubs.Get(tenant, sub.ID, int64(sub.Version))
		if !ok {
			rendered := renderedSubscription{head: appendSubscriptionHead(nil, sub), tail: appendSubscriptionTail(nil, sub)}
			s.renderedSubs.Put(tenant, sub.ID, int64(sub.Version), rendered)
			row = &rendered
		}
		b = append(b, row.head...)
		b = appendSubscriptionMiddle(b, sub, now)
		b = append(b, row.tail...)
		return appendSubscriptionBinding(b, sub, now)
	}, next)
}

// renderedSubscription is a list row's JSON around what each request
// decides: the package (summary or whole), the status and the binding at
// its time.
// List rows come with the version they were read at (the store's lists
// set it), so a row whose version is cached is not rendered again: its
// timestamps and ids were a quarter of a page's CPU.
type renderedSubscription struct{ head, tail []byte }

// renderedInvoice is a list row's JSON with the status it was rendered
// with: the status shown turns Overdue with time, the row's version does
// not change with it.
type renderedInvoice struct {
	status string
	json   []byte
}

// tenantOf is the request's tenant; the list routes run authenticated, so
// there is one.
func tenantOf(r *http.Request) string {
	tenant, _ := tenancy.From(r.Context())
	return tenant
}

// writeInvoiceList answers a page of invoices: rendered by
// appendInvoiceItem when nothing is expanded, else by encoding/json.
func (s *Server) writeInvoiceList(w http.ResponseWriter, r *http.Request, invs []store.Invoice, parts store.InvoiceParts, next string) {
	if !fastLists || parts != (store.InvoiceParts{}) {
		items := make([]InvoiceListItem, len(invs))
		for i, inv := range invs {
			items[i] = invoiceListItem(inv, parts)
		}
		s.writeList(w, r, items, next)
		return
	}
	tenant := tenantOf(r)
	s.writeRendered(w, r, len(invs), func(b []byte, i int) []byte {
		inv := &invs[i]
		if row, ok := s.renderedInvoices.Get(tenant, inv.ID, inv.Version); ok && row.status == inv.Status {
			return append(b, row.json...)
		}
		start := len(b)
		b = appendInvoiceItem(b, inv)
		s.renderedInvoices.Put(tenant, inv.ID, inv.Version, renderedInvoice{inv.Status, slices.Clone(b[start:])})
		return b
	}, next)
}

// writeRendered answers a JSON array of n items that item appends, as
// writeList would (a newline after the array, the Link header).
func (s *Server) writeRendered(w http.ResponseWriter, r *http.Request, n int, item func(b []byte, i int) []byte, next string) {
	bp := listBuffers.Get().(*[]byte)
	b := append((*bp)[:0], '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(b, i)
	}
	b = append(b, "]\n"...)
	s.kit.SetNextLink(w, r, next)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	// With the length known the page goes out in one write, not in chunks.
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	if cap(b) <= 1<<20 { // a page of expanded packages may be large; don't keep those
		*bp = b
		listBuffers.Put(bp)
	}
}

// appendSubscriptionHead appends the fields of store.Subscription, which
// a row's version fixes.
func appendSubscriptionHead(b []byte, sub *store.ListedSubscription) []byte {
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
	return appendJSONTime(b, sub.CreatedAt)
}

// appendSubscriptionMiddle appends the package and the status, which the
// request decides (expand, its time).
func appendSubscriptionMiddle(b []byte, sub *store.ListedSubscription, now time.Time) []byte {
	b = append(b, `,"package":`...)
	b = append(b, sub.PackageJSON...)
	b = append(b, `,"status":`...)
	return appendJSONString(b, engine.Status(sub.Subscription, now))
}

// appendSubscriptionBinding appends the binding fields, which the
// request's time decides, and closes the object.
func appendSubscriptionBinding(b []byte, sub *store.ListedSubscription, now time.Time) []byte {
	end, scheduled := bindingTimes(&sub.Subscription, now)
	b = append(b, `,"bindingEndsAt":`...)
	b = appendJSONNullTime(b, end)
	b = append(b, `,"scheduledCancelEffectiveAt":`...)
	b = appendJSONNullTime(b, scheduled)
	return append(b, '}')
}

// appendSubscriptionTail appends the INFO-Subscription times, which the
// row's version fixes (appendSubscriptionBinding then closes the object).
func appendSubscriptionTail(b []byte, sub *store.ListedSubscription) []byte {
	b = append(b, `,"startTime":`...)
	b = appendJSONTime(b, sub.PeriodStart)
	b = append(b, `,"endTime":`...)
	return appendJSONTime(b, endTime(&sub.Subscription))
}

// appendInvoiceItem appends inv as encoding/json would write its
// InvoiceListItem without expansions: the fields of store.Invoice in
// declaration order, without seller, buyer, lines and vatTotals.
func appendInvoiceItem(b []byte, inv *store.Invoice) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, inv.ID)
	b = append(b, `,"invoiceNumber":`...)
	b = strconv.AppendInt(b, inv.InvoiceNumber, 10)
	b = append(b, `,"number":`...)
	b = strconv.AppendInt(b, inv.InvoiceNumber, 10)
	b = append(b, `,"organizationId":`...)
	b = appendJSONString(b, inv.OrganizationID)
	b = append(b, `,"paymentDemandId":`...)
	b = appendJSONString(b, inv.PaymentDemandID)
	b = append(b, `,"subscriberAccountId":`...)
	b = appendJSONString(b, inv.SubscriberAccountID)
	b = append(b, `,"subscriberId":`...)
	b = appendJSONString(b, inv.SubscriberID)
	b = append(b, `,"subscriptionId":`...)
	b = appendJSONNullString(b, inv.SubscriptionID)
	b = append(b, `,"paymentAgreementId":`...)
	b = appendJSONNullString(b, inv.PaymentAgreementID)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, inv.Currency)
	b = append(b, `,"pricesIncludeVat":`...)
	b = strconv.AppendBool(b, inv.PricesIncludeVAT)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, inv.Status)
	b = append(b, `,"issuedAt":`...)
	b = appendJSONTime(b, inv.IssuedAt)
	b = append(b, `,"dueAt":`...)
	b = appendJSONTime(b, inv.DueAt)
	b = append(b, `,"issueDate":`...)
	b = appendJSONString(b, inv.IssueDate)
	b = append(b, `,"dueDate":`...)
	b = appendJSONString(b, inv.DueDate)
	b = append(b, `,"periodStart":`...)
	b = appendJSONNullTime(b, inv.PeriodStart)
	b = append(b, `,"periodEnd":`...)
	b = appendJSONNullTime(b, inv.PeriodEnd)
	b = append(b, `,"net":`...)
	b = appendAmount(b, inv.Net)
	b = append(b, `,"vat":`...)
	b = appendAmount(b, inv.VAT)
	b = append(b, `,"gross":`...)
	b = appendAmount(b, inv.Gross)
	b = append(b, `,"kid":`...)
	b = appendJSONString(b, inv.KID)
	b = append(b, `,"createdAt":`...)
	b = appendJSONTime(b, inv.CreatedAt)
	return append(b, '}')
}

// appendAmount appends a as catalog.Amount's MarshalJSON does (exactly its
// digits of decimals: 199.00, -0.05, 500), with integer arithmetic.
func appendAmount(b []byte, a catalog.Amount) []byte {
	m := a.Minor
	if m < 0 {
		b = append(b, '-')
	}
	u := uint64(m)
	if m < 0 {
		u = uint64(-m)
	}
	if a.Digits <= 0 {
		return strconv.AppendUint(b, u, 10)
	}
	var digits [24]byte
	d := strconv.AppendUint(digits[:0], u, 10)
	for len(d) <= a.Digits { // at least one digit before the point
		d = append([]byte{'0'}, d...)
	}
	b = append(b, d[:len(d)-a.Digits]...)
	b = append(b, '.')
	return append(b, d[len(d)-a.Digits:]...)
}

// renderedFields are the JSON names, in encoding/json's order, that
// appendSubscriptionItem and appendInvoiceItem write. If the records gain
// or lose a field the hand-written encoders would not know it, so lists
// fall back to encoding/json (fastLists) and TestListEncoders fails until
// the encoders are updated.
var renderedFields = map[reflect.Type][]string{
	reflect.TypeFor[SubscriptionListItem](): {"id", "subscriberId", "organizationId", "orderId", "paymentAgreementId", "currency",
		"subscriptionPackageChainId", "chainStepOrder", "chainStepPeriod", "timeZone", "periodStart", "periodEnd", "renewAt",
		"previousSubscriptionId", "nextSubscriptionId", "cancelledAt", "cancelEffectiveAt", "cancelReason", "deactivatedAt",
		"createdAt", "package", "status", "startTime", "endTime", "bindingEndsAt", "scheduledCancelEffectiveAt"},
	reflect.TypeFor[InvoiceListItem](): {"id", "invoiceNumber", "number", "organizationId", "paymentDemandId", "subscriberAccountId",
		"subscriberId", "subscriptionId", "paymentAgreementId", "currency", "pricesIncludeVat", "status", "issuedAt", "dueAt",
		"issueDate", "dueDate", "periodStart", "periodEnd", "net", "vat", "gross", "kid", "createdAt",
		"seller", "buyer", "lines", "vatTotals"},
}

// fastLists reports whether the hand-written encoders match the types.
var fastLists = func() bool {
	for t, want := range renderedFields {
		if !slices.Equal(jsonFieldNames(t), want) {
			return false
		}
	}
	return true
}()

// jsonFieldNames lists the JSON names encoding/json writes for struct type
// t, in its order: fields of embedded structs in place, except those a
// shallower field of the same name hides, which go where that field is.
func jsonFieldNames(t reflect.Type) []string {
	type field struct {
		name  string
		depth int
		index []int
	}
	var all []field
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			idx := append(slices.Clone(index), i)
			tag := f.Tag.Get("json")
			if tag == "-" || !f.IsExported() && !f.Anonymous {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type, idx)
				continue
			}
			if name == "" {
				name = f.Name
			}
			all = append(all, field{name, len(idx), idx})
		}
	}
	walk(t, nil)
	best := map[string]field{}
	for _, f := range all {
		if b, ok := best[f.name]; !ok || f.depth < b.depth {
			best[f.name] = f
		}
	}
	var kept []field
	for _, f := range all {
		if slices.Equal(best[f.name].index, f.index) {
			kept = append(kept, f)
		}
	}
	slices.SortFunc(kept, func(a, b field) int { return slices.Compare(a.index, b.index) })
	names := make([]string, len(kept))
	for i, f := range kept {
		names[i] = f.name
	}
	return names
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
// nanoseconds as needed; stored times are within its years 0-9999). The
// store returns UTC times, which are written by hand: a list page has
// seven of them per row, and AppendFormat's general layout interpreter
// was a tenth of the page's CPU.
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	if t.Location() == time.UTC && t.Year() >= 0 && t.Year() <= 9999 {
		b = appendRFC3339NanoUTC(b, t)
	} else {
		b = t.AppendFormat(b, time.RFC3339Nano)
	}
	return append(b, '"')
}

// appendRFC3339NanoUTC appends t (UTC, year 0-9999) in time.RFC3339Nano:
// the fraction without trailing zeros, none if zero, then Z.
func appendRFC3339NanoUTC(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	b = appendDigits(b, sec, 2)
	if ns := t.Nanosecond(); ns != 0 {
		width := 9
		for ns%10 == 0 {
			ns /= 10
			width--
		}
		b = append(b, '.')
		b = appendDigits(b, ns, width)
	}
	return append(b, 'Z')
}

// appendDigits appends n (≥ 0) zero-padded to width digits.
func appendDigits(b []byte, n, width int) []byte {
	var buf [9]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, buf[:width]...)
}

func appendJSONNullTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendJSONTime(b, *t)
}
