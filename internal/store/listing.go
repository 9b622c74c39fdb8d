package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/rowcache"
	"github.com/kadens/kadens/internal/substatus"
	"github.com/kadens/kadens/internal/tenancy"
)

// Lists are read differently from single records. A page of 100
// subscriptions used to decode 100 copies of the package JSON and encode
// them again (~129 KB, ~1.6 ms of CPU), and every timestamp went through
// the SQLite driver's layout guessing. A list query here selects only the
// columns a list shows, reads SQLite timestamps as text with one fixed
// layout, runs as a prepared statement, and reads a period's package by
// its hash only (subscription_packages), turning each distinct package
// into its JSON once per process (packageViews). docs/PERFORMANCE.md
// ("List pages") has the numbers.

// PackageSummary is the package of a subscription as lists show it: what
// tells the periods of a list apart. Its fields have the names and types
// of catalog.SubscriptionPackage's, so the whole package (?expand=package)
// is a superset of it.
type PackageSummary struct {
	Name                       string         `json:"name"`
	Currency                   string         `json:"currency"`
	Price                      catalog.Amount `json:"price"`
	Units                      int            `json:"units"`
	TotalPrice                 catalog.Amount `json:"totalPrice"`
	AutomaticStop              bool           `json:"automaticStop"`
	BillingPlan                PlanSummary    `json:"billingPlan"`
	SubscriptionPackageChainID *string        `json:"subscriptionPackageChainId"`
	ChainStepOrder             *int           `json:"chainStepOrder"`
	ChainStepPeriods           *int           `json:"chainStepPeriods"`
}

// PlanSummary is the billing plan of a PackageSummary: which plan, and its
// interval.
type PlanSummary struct {
	BillingPlanID string      `json:"billingPlanId"`
	Name          string      `json:"name"`
	IntervalUnit  period.Unit `json:"intervalUnit"`
	IntervalCount int         `json:"intervalCount"`
}

// SummarizePackage returns the summary of p.
func SummarizePackage(p catalog.SubscriptionPackage) PackageSummary {
	return PackageSummary{Name: p.Name, Currency: p.Currency, Price: p.Price, Units: p.Units, TotalPrice: p.TotalPrice,
		AutomaticStop: p.AutomaticStop, BillingPlan: PlanSummary{BillingPlanID: p.BillingPlan.BillingPlanID, Name: p.BillingPlan.Name,
			IntervalUnit: p.BillingPlan.IntervalUnit, IntervalCount: p.BillingPlan.IntervalCount},
		SubscriptionPackageChainID: p.SubscriptionPackageChainID, ChainStepOrder: p.ChainStepOrder, ChainStepPeriods: p.ChainStepPeriods}
}

// packageView is the JSON a list shows for one stored package.
type packageView struct {
	summary, full []byte
}

// packageViews maps stored packages, by hash (packageHash), to their list
// JSON, for the whole process: a tenant's periods share a handful of
// packages, so a page decodes none after the first. The value is a
// function of the package text alone, which the hash names, so sharing it
// between tenants shows nobody anything. It is emptied when it reaches
// packageViewsMax entries, which bounds it to a few MiB; the next pages
// fill it again.
var packageViews = struct {
	sync.RWMutex
	m map[string]packageView
}{m: map[string]packageView{}}

const packageViewsMax = 2048

// cachedPackageView returns the list JSON of the package stored as hash
// if packageViews has it: the summary's or (full) the whole package's.
func cachedPackageView(hash string, full bool) ([]byte, bool) {
	packageViews.RLock()
	v, ok := packageViews.m[hash]
	packageViews.RUnlock()
	if full {
		return v.full, ok
	}
	return v.summary, ok
}

// viewOfPackage returns the list JSON of package text raw, stored as
// hash, and remembers it in packageViews.
func viewOfPackage(hash string, raw []byte, full bool) ([]byte, error) {
	var p catalog.SubscriptionPackage
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	var (
		v   packageView
		err error
	)
	if v.summary, err = json.Marshal(SummarizePackage(p)); err != nil {
		return nil, err
	}
	// Re-encoded rather than passed through: a package stored by an
	// older version lacks the fields added since, which GET shows.
	if v.full, err = json.Marshal(p); err != nil {
		return nil, err
	}
	packageViews.Lock()
	if len(packageViews.m) >= packageViewsMax {
		clear(packageViews.m)
	}
	packageViews.m[hash] = v
	packageViews.Unlock()
	if full {
		return v.full, nil
	}
	return v.summary, nil
}

// fillPackageViews sets the PackageJSON of the subscriptions of page
// whose package packageViews did not have (missing: their package hashes
// by index in page), reading those packages in one query.
func (s *Store) fillPackageViews(ctx context.Context, tenant string, page []ListedSubscription, missing map[int]string, full bool) error {
	if len(missing) == 0 {
		return nil
	}
	hashes := make([]string, 0, len(missing))
	args := []any{tenant}
	for _, h := range missing {
		if !slices.Contains(hashes, h) {
			hashes = append(hashes, h)
			args = append(args, h)
		}
	}
	rows, err := s.r.QueryContext(ctx, `SELECT hash, package FROM subscription_packages WHERE tenant_id = $1 AND hash IN (`+
		placeholders(2, len(hashes))+`)`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	views := make(map[string][]byte, len(hashes))
	for rows.Next() {
		var (
			hash string
			raw  []byte
		)
		if err := rows.Scan(&hash, &raw); err != nil {
			return err
		}
		if views[hash], err = viewOfPackage(hash, raw, full); err != nil {
			return fmt.Errorf("package %s: %w", hash, err)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i, h := range missing {
		v, ok := views[h]
		if !ok {
			return fmt.Errorf("subscription %s: package %s is not stored", page[i].ID, h)
		}
		page[i].PackageJSON = v
	}
	return nil
}

// placeholders is "$from, $from+1, …", n of them.
func placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(from+i))
	}
	return b.String()
}

// ListedSubscription is a subscription period as a list shows it. Package
// and Choices of Subscription are left empty, as are the fields lists do
// not show (Anchor, PeriodIndex, NextActionAt, Version,
// TemplatePackageID); PackageJSON holds the package: the JSON of its
// PackageSummary or, when the whole package was asked for, of the
// catalog.SubscriptionPackage. Callers must not change PackageJSON (it is
// shared).
type ListedSubscription struct {
	Subscription
	PackageJSON []byte
}

// listSubscriptionColumns are the columns of a ListedSubscription.
var listSubscriptionColumns = []string{"id", "subscriber_id", "organization_id", "order_id", "payment_agreement_id", "currency",
	"package_hash", "chain_id", "chain_step", "step_period", "time_zone", "period_start!", "period_end!", "renew_at!", "previous_id",
	"next_id", "cancelled_at!", "cancel_effective_at!", "cancel_reason", "deactivated_at!", "created_at!", "binding_ends_at!", "scheduled_cancel_at!"}

// listColumns joins columns for a list's SELECT. Timestamp columns (marked
// "!") are read as text on SQLite: for a column declared TIMESTAMP the
// driver tries several layouts per value, which cost more than the rest of
// the row, while every timestamp Kadens writes has one fixed layout
// (dbTimeLayout) that listTime reads directly.
func (s *Store) listColumns(cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		name, isTime := strings.CutSuffix(c, "!")
		if isTime && s.engine == SQLite {
			name = "CAST(" + name + " AS TEXT)"
		}
		out[i] = name
	}
	return strings.Join(out, ", ")
}

// listTime scans a timestamp of a list query: a time (PostgreSQL) or the
// stored text (SQLite, see listColumns); NULL leaves it unset. It holds
// the value rather than a pointer, so a required timestamp costs no
// allocation (ptr makes one for the nullable ones).
type listTime struct {
	t     time.Time
	valid bool
}

func (l *listTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*l = listTime{}
		return nil
	case time.Time:
		*l = listTime{x.UTC(), true}
		return nil
	case string:
		t, err := parseDBTime(x)
		if err != nil {
			return err
		}
		*l = listTime{t, true}
		return nil
	case []byte:
		return l.Scan(string(x))
	}
	return fmt.Errorf("store: cannot read %T as a timestamp", v)
}

// value is the time, zero if NULL.
func (l listTime) value() time.Time { return l.t }

// ptr is the time, nil if NULL.
func (l listTime) ptr() *time.Time {
	if !l.valid {
		return nil
	}
	t := l.t
	return &t
}

// parseDBTime reads a timestamp as SQLite stores it: dbTimeLayout
// (2006-01-02T15:04:05.000000Z) by hand, which is most of them, else any
// RFC 3339 time or the driver's own layout for time.Time parameters.
func parseDBTime(s string) (time.Time, error) {
	if len(s) == len(dbTimeLayout) && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' && s[19] == '.' && s[26] == 'Z' {
		var f [7]int
		ok := true
		for i, r := range [7][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}, {20, 26}} {
			n := 0
			for _, c := range []byte(s[r[0]:r[1]]) {
				if c < '0' || c > '9' {
					ok = false
					break
				}
				n = n*10 + int(c-'0')
			}
			f[i] = n
		}
		if ok && f[1] >= 1 && f[1] <= 12 && f[2] >= 1 && f[2] <= 31 && f[3] < 24 && f[4] < 60 && f[5] < 60 {
			t := time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], f[6]*1000, time.UTC)
			if t.Day() == f[2] { // not 31 February
				return t, nil
			}
		}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("store: timestamp %q has no known layout", s)
}

// readQuery runs a list query on the read pool as a cached prepared
// statement (readStmt): list queries are built from fixed fragments, so
// their texts are few, and SQLite would otherwise compile each one anew.
func (s *Store) readQuery(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.readStmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// listPage is filter.page for the list queries here. On SQLite the limit is
// written into the statement rather than bound: a bound LIMIT makes SQLite
// compile the statement again on every run (35 µs instead of 12 µs for a
// page of subscriptions), and one text per filter keeps the statement
// cache small, so it is always the largest page plus one (rows past the
// page are never read: the caller stops after p.Limit+1).
func (s *Store) listPage(q *filter, p Page) string {
	if s.engine != SQLite {
		return q.page(p)
	}
	if p.After != "" {
		q.add("id > ?", p.After)
	}
	return " ORDER BY id LIMIT " + strconv.Itoa(max(p.Limit, listPageMax)+1)
}

// listPageMax is the largest page the API asks for.
const listPageMax = 1000

// subscriptionConditions is the WHERE clause of f for the tenant.
func subscriptionConditions(tenant string, f SubscriptionFilter) *filter {
	q := tenantFilter(tenant)
	if f.SubscriberID != "" {
		q.add("subscriber_id = ?", f.SubscriberID)
	}
	if f.OrganizationID != "" {
		q.add("organization_id = ?", f.OrganizationID)
	}
	if f.ActiveAt != nil {
		at := ts(*f.ActiveAt)
		q.add("period_start <= ?", at)
		q.add("period_end > ?", at)
		q.add("(deactivated_at IS NULL OR deactivated_at > ?)", at)
	}
	if f.Status != "" {
		q.args = append(q.args, ts(f.Now))
		q.conds = append(q.conds, substatus.Is("", f.Status, "$"+strconv.Itoa(len(q.args))))
	}
	if f.RenewingBefore != nil {
		q.add("next_id IS NULL AND renew_at IS NOT NULL AND renew_at <= ?", ts(*f.RenewingBefore))
	}
	return q
}

// ListSubscriptionItems returns one page of the tenant's subscriptions as
// lists show them, with the package summarized unless fullPackage.
func (s *Store) ListSubscriptionItems(ctx context.Context, f SubscriptionFilter, p Page, fullPackage bool) ([]ListedSubscription, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := subscriptionConditions(tenant, f)
	tail := s.listPage(q, p)
	from := ` FROM subscriptions` + q.where() + tail
	page, err := s.pageVersions(ctx, from, q.args, p)
	if err != nil {
		return nil, "", fmt.Errorf("store: list subscriptions: %w", err)
	}
	if out, ok := cachedPage(s.listedSubs, tenant, page, func(r *listedSubscriptionRow) ListedSubscription {
		return ListedSubscription{Subscription: r.sub, PackageJSON: []byte(r.pkgHash)}
	}); ok {
		return s.finishSubscriptionPage(ctx, tenant, out, p, fullPackage)
	}
	rows, err := s.readQuery(ctx, `SELECT `+s.listColumns(listSubscriptionColumns)+`, version`+from, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list subscriptions: %w", err)
	}
	defer rows.Close()
	out := make([]ListedSubscription, 0, min(p.Limit+1, 128))
	// The scan's destinations live outside the loop: scanning into the
	// fields of a fresh ListedSubscription (728 bytes) moved each row's to
	// the heap.
	var (
		id, subscriberID, organizationID, currency, timeZone, reason string
		stepPeriod                                                   int
		pkgHash                                                      string
		version                                                      int64
		orderID, agreement, chainID, prev, next                      sql.NullString
		chainStep                                                    sql.NullInt64
		start, end, renew, cancelled, effective, deact, created      listTime
		bindingEnd, scheduledCancel                                  listTime
	)
	for len(out) <= p.Limit && rows.Next() {
		err := rows.Scan(&id, &subscriberID, &organizationID, &orderID, &agreement, &currency, &pkgHash,
			&chainID, &chainStep, &stepPeriod, &timeZone, &start, &end, &renew, &prev, &next, &cancelled, &effective,
			&reason, &deact, &created, &bindingEnd, &scheduledCancel, &version)
		if err != nil {
			return nil, "", fmt.Errorf("store: list subscriptions: %w", err)
		}
		out = append(out, ListedSubscription{Subscription: Subscription{ID: id, SubscriberID: subscriberID,
			OrganizationID: organizationID, OrderID: nullString(orderID), PaymentAgreementID: nullString(agreement),
			Currency: currency, ChainID: nullString(chainID), StepPeriod: stepPeriod, TimeZone: timeZone,
			PeriodStart: start.value(), PeriodEnd: end.value(), RenewAt: renew.ptr(), PreviousID: nullString(prev),
			NextID: nullString(next), CancelledAt: cancelled.ptr(), CancelEffectiveAt: effective.ptr(), CancelReason: reason,
			DeactivatedAt: deact.ptr(), CreatedAt: created.value(), BindingEnd: bindingEnd.ptr(), ScheduledCancelAt: scheduledCancel.ptr()}})
		sub := &out[len(out)-1]
		if chainStep.Valid {
			n := int(chainStep.Int64)
			sub.ChainStep = &n
		}
		sub.Version = int(version)
		s.listedSubs.Put(tenant, id, version, listedSubscriptionRow{sub.Subscription, pkgHash})
		sub.PackageJSON = []byte(pkgHash)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("store: list subscriptions: %w", err)
	}
	rows.Close() // before the packages are read, on the same connection
	return s.finishSubscriptionPage(ctx, tenant, out, p, fullPackage)
}

// listedSubscriptionRow is a subscription as the list cache holds it: the
// package by its hash, its view is added per request (summary or whole).
type listedSubscriptionRow struct {
	sub     Subscription
	pkgHash string
}

// finishSubscriptionPage turns the package hashes that page's PackageJSON
// holds on entry into the package views and cuts the page.
func (s *Store) finishSubscriptionPage(ctx context.Context, tenant string, page []ListedSubscription, p Page, fullPackage bool) ([]ListedSubscription, string, error) {
	var missing map[int]string
	for i := range page {
		hash := string(page[i].PackageJSON)
		var ok bool
		if page[i].PackageJSON, ok = cachedPackageView(hash, fullPackage); !ok {
			if missing == nil {
				missing = map[int]string{}
			}
			missing[i] = hash
		}
	}
	if err := s.fillPackageViews(ctx, tenant, page, missing, fullPackage); err != nil {
		return nil, "", fmt.Errorf("store: list subscriptions: %w", err)
	}
	page, nextID := trimPage(page, p, func(sub ListedSubscription) string { return sub.ID })
	return page, nextID, nil
}

// idVersion is a row of a page as the first, cheap query reads it.
type idVersion struct {
	id      string
	version int64
}

// pageVersions reads the ids and versions of a page: the rows of from
// (FROM, WHERE and ORDER/LIMIT of a list query), at most p.Limit+1.
func (s *Store) pageVersions(ctx context.Context, from string, args []any, p Page) ([]idVersion, error) {
	rows, err := s.readQuery(ctx, `SELECT id, version`+from, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	page := make([]idVersion, 0, min(p.Limit+1, 128))
	for len(page) <= p.Limit && rows.Next() {
		var r idVersion
		if err := rows.Scan(&r.id, &r.version); err != nil {
			return nil, err
		}
		page = append(page, r)
	}
	return page, rows.Err()
}

// cachedPage is the page from c if every row of it is cached at the
// version read; otherwise the page is to be read in full (which caches
// it). Reading only the missing rows would take a query per page shape
// for what is the exception: rows new to the process, or just changed.
func cachedPage[T, R any](c *rowcache.Cache[T], tenant string, page []idVersion, item func(*T) R) ([]R, bool) {
	out := make([]R, 0, len(page))
	for _, r := range page {
		row, ok := c.Get(tenant, r.id, r.version)
		if !ok {
			return nil, false
		}
		out = append(out, item(row))
	}
	return out, true
}

// InvoiceParts are the parts of an invoice a list leaves out unless asked
// (?expand=): the seller and buyer as at issue, the lines and the VAT
// totals. The ids of the organization and subscriber, the totals, the KID
// and the dates are always there.
type InvoiceParts struct {
	Seller, Buyer, Lines, VATTotals bool
}

// listInvoiceColumns are the columns of an invoice in a list, before the
// parts (InvoiceParts) it was asked with.
var listInvoiceColumns = []string{"id", "invoice_number", "organization_id", "payment_demand_id", "account_id", "subscriber_id",
	"subscription_id", "payment_agreement_id", "currency", "prices_include_vat", "status", "issued_at!", "due_at!", "issue_date",
	"due_date", "period_start!", "period_end!", "net", "vat", "gross", "kid", "created_at!"}

// ListInvoiceItems is ListInvoices for lists: the invoice's parts not in
// parts are left zero (and not read).
func (s *Store) ListInvoiceItems(ctx context.Context, f DocumentFilter, p Page, parts InvoiceParts) ([]Invoice, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	cols := listInvoiceColumns
	var extra []string
	for _, part := range []struct {
		on  bool
		col string
	}{{parts.Seller, "seller"}, {parts.Buyer, "buyer"}, {parts.Lines, "lines"}, {parts.VATTotals, "vat_totals"}} {
		if part.on {
			extra = append(extra, part.col)
		}
	}
	cols = append(append(cols[:len(cols):len(cols)], "version"), extra...)
	q := tenantFilter(tenant)
	f.apply(q, "")
	f.statusCondition(q, billing.InvoiceIssued, billing.InvoiceOverdue)
	tail := s.listPage(q, p)
	from := s.documentsFrom("invoices", "invoices_subscription", f) + q.where() + tail
	// Only the invoice itself is cached: the parts are large and asked for
	// rarely.
	cacheable := len(extra) == 0
	if cacheable {
		page, err := s.pageVersions(ctx, from, q.args, p)
		if err != nil {
			return nil, "", fmt.Errorf("store: list invoices: %w", err)
		}
		if out, ok := cachedPage(s.listedInvoices, tenant, page, func(inv *Invoice) Invoice { return *inv }); ok {
			out, next := trimPage(out, p, func(inv Invoice) string { return inv.ID })
			return out, next, nil
		}
	}
	rows, err := s.readQuery(ctx, `SELECT `+s.listColumns(cols)+from, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list invoices: %w", err)
	}
	defer rows.Close()
	out := make([]Invoice, 0, min(p.Limit+1, 128))
	var (
		sub, agreement                   sql.NullString
		issued, due, start, end, created listTime
		net, vat, gross, version         int64
		seller, buyer, lines, vatTotals  sql.RawBytes
		sellers                          = map[string]Seller{}
	)
	// One Invoice to scan into, outside the loop: a fresh one per row (768
	// bytes) moved to the heap with the pointers the scan takes.
	var inv Invoice
	dest := []any{&inv.ID, &inv.InvoiceNumber, &inv.OrganizationID, &inv.PaymentDemandID, &inv.SubscriberAccountID,
		&inv.SubscriberID, &sub, &agreement, &inv.Currency, &inv.PricesIncludeVAT, &inv.Status, &issued, &due,
		&inv.IssueDate, &inv.DueDate, &start, &end, &net, &vat, &gross, &inv.KID, &created, &version}
	for _, part := range []struct {
		on  bool
		dst *sql.RawBytes
	}{{parts.Seller, &seller}, {parts.Buyer, &buyer}, {parts.Lines, &lines}, {parts.VATTotals, &vatTotals}} {
		if part.on {
			dest = append(dest, part.dst)
		}
	}
	for len(out) <= p.Limit && rows.Next() {
		inv = Invoice{}
		if err := rows.Scan(dest...); err != nil {
			return nil, "", fmt.Errorf("store: list invoices: %w", err)
		}
		cur, err := currencyOf(inv.Currency)
		if err != nil {
			return nil, "", fmt.Errorf("store: list invoices: invoice %s: %w", inv.ID, err)
		}
		inv.SubscriptionID, inv.PaymentAgreementID = nullString(sub), nullString(agreement)
		inv.Number = inv.InvoiceNumber
		inv.IssuedAt, inv.DueAt, inv.CreatedAt = issued.value(), due.value(), created.value()
		inv.PeriodStart, inv.PeriodEnd = start.ptr(), end.ptr()
		inv.Version = version
		inv.Net, inv.VAT, inv.Gross = catalog.NewAmount(net, cur), catalog.NewAmount(vat, cur), catalog.NewAmount(gross, cur)
		if parts.Seller {
			// An organization's invoices mostly carry the same seller.
			if v, ok := sellers[string(seller)]; ok {
				inv.Seller = v
			} else if err := json.Unmarshal(seller, &inv.Seller); err != nil {
				return nil, "", fmt.Errorf("store: list invoices: invoice %s seller: %w", inv.ID, err)
			} else {
				sellers[string(seller)] = inv.Seller
			}
		}
		for _, part := range []struct {
			on  bool
			src sql.RawBytes
			dst any
		}{{parts.Buyer, buyer, &inv.Buyer}, {parts.Lines, lines, &inv.Lines}, {parts.VATTotals, vatTotals, &inv.VATTotals}} {
			if part.on {
				if err := json.Unmarshal(part.src, part.dst); err != nil {
					return nil, "", fmt.Errorf("store: list invoices: invoice %s: %w", inv.ID, err)
				}
			}
		}
		if parts.Lines && inv.Lines == nil {
			inv.Lines = []billing.Line{}
		}
		if parts.VATTotals && inv.VATTotals == nil {
			inv.VATTotals = []billing.VATTotal{}
		}
		if cacheable {
			s.listedInvoices.Put(tenant, inv.ID, version, inv)
		}
		out = append(out, inv)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("store: list invoices: %w", err)
	}
	out, next := trimPage(out, p, func(inv Invoice) string { return inv.ID })
	return out, next, nil
}
