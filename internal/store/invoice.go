package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/tenancy"
)

// EventInvoiceIssued is recorded when an invoice is issued, in the same
// transaction.
const EventInvoiceIssued = "InvoiceIssued"

// DemandPeriod is the kind of the payment demand of a subscription period.
const DemandPeriod = "Period"

// Seller is the organization on an invoice, as it was at issue.
type Seller struct {
	OrganizationID     string `json:"organizationId"`
	Name               string `json:"name"`
	OrganizationNumber string `json:"organizationNumber"`
	Country            string `json:"country"`
	LogoURL            string `json:"logoUrl"`
}

// Buyer is the subscriber on an invoice, as at issue, with the invoice
// contact (who receives the invoice) when the subscriber has one.
type Buyer struct {
	SubscriberID     string   `json:"subscriberId"`
	SubscriberNumber int64    `json:"subscriberNumber"`
	Name             string   `json:"name"`
	Email            string   `json:"email"`
	Phone            string   `json:"phone"`
	Address          Address  `json:"address"`
	Country          string   `json:"country"`
	InvoiceContact   *Contact `json:"invoiceContact"`
}

// Invoice is an issued invoice. Everything but Status and CreatedAt is a
// function of the state it was issued from (see billing.Build).
type Invoice struct {
	ID                  string             `json:"id"`
	InvoiceNumber       int64              `json:"invoiceNumber"`
	OrganizationID      string             `json:"organizationId"`
	PaymentDemandID     string             `json:"paymentDemandId"`
	SubscriberAccountID string             `json:"subscriberAccountId"`
	SubscriberID        string             `json:"subscriberId"`
	SubscriptionID      *string            `json:"subscriptionId"`
	PaymentAgreementID  *string            `json:"paymentAgreementId"`
	Currency            string             `json:"currency"`
	PricesIncludeVAT    bool               `json:"pricesIncludeVat"`
	Status              string             `json:"status" enum:"Issued,PartiallyPaid,Paid,Overdue,Credited"`
	IssuedAt            time.Time          `json:"issuedAt"`
	DueAt               time.Time          `json:"dueAt"`
	IssueDate           string             `json:"issueDate" format:"date" description:"Issue date in the organization's time zone."`
	DueDate             string             `json:"dueDate" format:"date" description:"Due date in the organization's time zone."`
	PeriodStart         *time.Time         `json:"periodStart"`
	PeriodEnd           *time.Time         `json:"periodEnd"`
	Seller              Seller             `json:"seller"`
	Buyer               Buyer              `json:"buyer"`
	Lines               []billing.Line     `json:"lines"`
	VATTotals           []billing.VATTotal `json:"vatTotals"`
	Net                 catalog.Amount     `json:"net"`
	VAT                 catalog.Amount     `json:"vat"`
	Gross               catalog.Amount     `json:"gross"`
	KID                 string             `json:"kid" description:"Payment reference (KID, MOD10)."`
	CreatedAt           time.Time          `json:"createdAt"`
}

// PaymentDemand is the claim to be paid that an invoice documents: one
// demand, one invoice.
type PaymentDemand struct {
	ID                  string         `json:"id"`
	Kind                string         `json:"kind" enum:"Period"`
	InvoiceID           string         `json:"invoiceId"`
	SubscriberAccountID string         `json:"subscriberAccountId"`
	SubscriberID        string         `json:"subscriberId"`
	SubscriptionID      *string        `json:"subscriptionId"`
	OrganizationID      string         `json:"organizationId"`
	Currency            string         `json:"currency"`
	Amount              catalog.Amount `json:"amount"`
	PaidAmount          catalog.Amount `json:"paidAmount"`
	CreditedAmount      catalog.Amount `json:"creditedAmount"`
	Status              string         `json:"status" enum:"Open,PartiallyPaid,Paid,Overdue,Credited"`
	IssuedAt            time.Time      `json:"issuedAt"`
	DueAt               time.Time      `json:"dueAt"`
	CreatedAt           time.Time      `json:"createdAt"`
}

// zones caches time zones by name: time.LoadLocation reads the zone data
// on every call, which is too slow for every renewal.
var zones sync.Map

func zone(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	l, err := period.LoadZone(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, l)
	return l, nil
}

// issueMemo remembers, for one write transaction, what issuing reads
// again and again: an engine batch renews many subscriptions of the same
// organization (and often of the same subscriber). Rows read inside a
// transaction cannot change under it except by the transaction itself, and
// the engine's transaction changes neither organizations nor subscribers,
// so a memo is exact for the transaction it belongs to. Only the latest
// transaction's memo is kept; another transaction starts a fresh one.
type issueMemo struct {
	tx       *Tx
	orgs     map[string]*memoOrg
	buyers   map[string]string
	accounts map[string]string
}

type memoOrg struct {
	Organization
	loc    *time.Location
	seller string
}

var lastMemo atomic.Pointer[issueMemo]

func memoFor(tx *Tx) *issueMemo {
	if m := lastMemo.Load(); m != nil && m.tx == tx {
		return m
	}
	m := &issueMemo{tx: tx, orgs: map[string]*memoOrg{}, buyers: map[string]string{}, accounts: map[string]string{}}
	lastMemo.Store(m)
	return m
}

func (m *issueMemo) organization(ctx context.Context, id string) (*memoOrg, error) {
	if o, ok := m.orgs[id]; ok {
		return o, nil
	}
	org, err := scanOrganization(m.tx.queryRow(ctx,
		`SELECT `+organizationColumns+` FROM organizations WHERE tenant_id = $1 AND id = $2`, m.tx.tenant, id))
	if err != nil {
		return nil, fmt.Errorf("organization %s: %w", id, notFound(err))
	}
	loc, err := zone(org.TimeZone)
	if err != nil {
		return nil, err
	}
	seller, err := json.Marshal(Seller{OrganizationID: org.ID, Name: org.Name, OrganizationNumber: org.OrganizationNumber,
		Country: org.Country, LogoURL: org.LogoURL})
	if err != nil {
		return nil, err
	}
	o := &memoOrg{Organization: org, loc: loc, seller: string(seller)}
	m.orgs[id] = o
	return o, nil
}

// buyer returns the JSON of subscriber id as an invoice's buyer.
func (m *issueMemo) buyer(ctx context.Context, id string) (string, error) {
	if b, ok := m.buyers[id]; ok {
		return b, nil
	}
	sub, err := scanSubscriber(m.tx.queryRow(ctx,
		`SELECT `+subscriberColumns+` FROM subscribers WHERE tenant_id = $1 AND id = $2`, m.tx.tenant, id))
	if err != nil {
		return "", fmt.Errorf("subscriber %s: %w", id, notFound(err))
	}
	b := Buyer{SubscriberID: sub.ID, SubscriberNumber: sub.SubscriberNumber, Name: sub.Name, Email: sub.Email,
		Phone: sub.Phone, Address: sub.Address, Country: sub.Country}
	for i := range sub.Contacts {
		if sub.Contacts[i].Role == ContactInvoice {
			b.InvoiceContact = &sub.Contacts[i]
			break
		}
	}
	j, err := json.Marshal(b)
	if err != nil {
		return "", err
	}
	m.buyers[id] = string(j)
	return string(j), nil
}

func (m *issueMemo) account(ctx context.Context, subscriberID, currency string, at time.Time) (string, error) {
	key := subscriberID + "/" + currency
	if a, ok := m.accounts[key]; ok {
		return a, nil
	}
	a, err := m.tx.ensureAccount(ctx, subscriberID, currency, at)
	if err != nil {
		return "", err
	}
	m.accounts[key] = a
	return a, nil
}

// invoiceScope is the counter series of an organization's invoice numbers.
func invoiceScope(orgID string) string { return "invoice:" + orgID }

// nextNumber is nextCounter through the transaction's prepared
// statements (the engine takes one per renewal).
func (tx *Tx) nextNumber(ctx context.Context, scope string) (int64, error) {
	var n int64
	err := tx.queryRow(ctx, `INSERT INTO counters (tenant_id, scope, value) VALUES ($1, $2, 1)
		ON CONFLICT (tenant_id, scope) DO UPDATE SET value = counters.value + 1
		WHERE counters.value < $3
		RETURNING value`, tx.tenant, scope, int64(maxCounter)).Scan(&n)
	if err != nil {
		if err == sql.ErrNoRows {
			return 0, fmt.Errorf("counter %s: %w", scope, ErrCounterExhausted)
		}
		return 0, fmt.Errorf("counter %s: %w", scope, err)
	}
	return n, nil
}

// IssuePeriodInvoice is the billing hook of a new subscription period
// (engine.Hooks.PeriodCreated): in tx, at business time at, it ensures the
// subscriber's account in the subscription's currency, builds the period's
// invoice (picking up the account's outstanding charges and allowances),
// numbers it in the organization's gap-free series, and writes the invoice,
// its payment demand, the ledger entries and the InvoiceIssued event.
// Everything it writes is derived from stored state and at.
func IssuePeriodInvoice(ctx context.Context, tx *Tx, sub Subscription, at time.Time) error {
	if err := tx.issuePeriodInvoice(ctx, sub, at); err != nil {
		return fmt.Errorf("store: invoice subscription %s: %w", sub.ID, err)
	}
	return nil
}

func (tx *Tx) issuePeriodInvoice(ctx context.Context, sub Subscription, at time.Time) error {
	at = at.UTC().Truncate(time.Microsecond)
	cur, err := currencyOf(sub.Currency)
	if err != nil {
		return err
	}
	m := memoFor(tx)
	org, err := m.organization(ctx, sub.OrganizationID)
	if err != nil {
		return err
	}
	buyerJSON, err := m.buyer(ctx, sub.SubscriberID)
	if err != nil {
		return err
	}
	account, err := m.account(ctx, sub.SubscriberID, sub.Currency, at)
	if err != nil {
		return err
	}
	items, err := tx.openItems(ctx, account, at)
	if err != nil {
		return err
	}
	doc, err := billing.Build(billing.Input{Currency: cur, PricesIncludeVAT: org.PricesIncludeVAT, Package: sub.Package,
		PeriodStart: sub.PeriodStart, PeriodEnd: sub.PeriodEnd, Items: items})
	if err != nil {
		return err
	}
	number, err := tx.nextNumber(ctx, invoiceScope(org.ID))
	if err != nil {
		return err
	}
	due := billing.DueAt(at, sub.PeriodStart, sub.Package.BillingPlan.PaymentTermsDays, org.loc)
	lines, err := json.Marshal(doc.Lines)
	if err != nil {
		return err
	}
	vats, err := json.Marshal(doc.VATTotals)
	if err != nil {
		return err
	}
	invoiceID, demandID := NewID(), NewID()
	created := ts(time.Now())
	if _, err := tx.exec(ctx, `INSERT INTO invoices (id, tenant_id, organization_id, invoice_number, payment_demand_id,
		account_id, subscriber_id, subscription_id, payment_agreement_id, currency, prices_include_vat, status,
		issued_at, due_at, issue_date, due_date, period_start, period_end, seller, buyer, lines, vat_totals,
		net, vat, gross, kid, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'Issued', $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
		$22, $23, $24, $25, $26)`,
		invoiceID, tx.tenant, org.ID, number, demandID, account, sub.SubscriberID, sub.ID, sub.PaymentAgreementID,
		cur.Code, org.PricesIncludeVAT, ts(at), ts(due), billing.LocalDate(at, org.loc), billing.LocalDate(due, org.loc),
		ts(sub.PeriodStart), ts(sub.PeriodEnd), org.seller, buyerJSON, string(lines), string(vats),
		doc.Net, doc.VAT, doc.Gross, billing.KID(number), created); err != nil {
		return fmt.Errorf("insert invoice: %w", err)
	}
	if _, err := tx.exec(ctx, `INSERT INTO payment_demands (id, tenant_id, kind, invoice_id, account_id, subscriber_id,
		subscription_id, organization_id, currency, amount, status, issued_at, due_at, created_at)
		VALUES ($1, $2, 'Period', $3, $4, $5, $6, $7, $8, $9, 'Open', $10, $11, $12)`,
		demandID, tx.tenant, invoiceID, account, sub.SubscriberID, sub.ID, org.ID, cur.Code, doc.Gross, ts(at), ts(due), created); err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("period already has a payment demand: %w", ErrConflict)
		}
		return fmt.Errorf("insert payment demand: %w", err)
	}
	if err := tx.addEntry(ctx, account, EntryInvoice, doc.Gross, &invoiceID, nil, at); err != nil {
		return err
	}
	for _, u := range doc.Uses {
		if err := tx.useItem(ctx, u.ItemID, u.Amount); err != nil {
			return err
		}
		kind, amount := EntryChargeInvoiced, -u.Amount
		if u.Kind == billing.ItemAllowance {
			kind, amount = EntryAllowanceApplied, u.Amount
		}
		if err := tx.addEntry(ctx, account, kind, amount, &invoiceID, &u.ItemID, at); err != nil {
			return err
		}
	}
	return tx.AddEvent(ctx, EventInvoiceIssued, "/invoice/"+invoiceID, map[string]string{
		"invoiceId": invoiceID, "paymentDemandId": demandID, "subscriberId": sub.SubscriberID, "subscriptionId": sub.ID,
	}, at)
}

const invoiceColumns = `id, invoice_number, organization_id, payment_demand_id, account_id, subscriber_id, subscription_id,
	payment_agreement_id, currency, prices_include_vat, status, issued_at, due_at, issue_date, due_date, period_start,
	period_end, seller, buyer, lines, vat_totals, net, vat, gross, kid, created_at`

func scanInvoice(row scanner) (Invoice, error) {
	var (
		inv                             Invoice
		sub, agreement                  sql.NullString
		start, end                      sql.NullTime
		seller, buyer, lines, vatTotals string
		net, vat, gross                 int64
	)
	err := row.Scan(&inv.ID, &inv.InvoiceNumber, &inv.OrganizationID, &inv.PaymentDemandID, &inv.SubscriberAccountID,
		&inv.SubscriberID, &sub, &agreement, &inv.Currency, &inv.PricesIncludeVAT, &inv.Status, &inv.IssuedAt, &inv.DueAt,
		&inv.IssueDate, &inv.DueDate, &start, &end, &seller, &buyer, &lines, &vatTotals, &net, &vat, &gross, &inv.KID, &inv.CreatedAt)
	if err != nil {
		return Invoice{}, err
	}
	cur, err := currencyOf(inv.Currency)
	if err != nil {
		return Invoice{}, err
	}
	for _, j := range []struct {
		src string
		dst any
	}{{seller, &inv.Seller}, {buyer, &inv.Buyer}, {lines, &inv.Lines}, {vatTotals, &inv.VATTotals}} {
		if err := json.Unmarshal([]byte(j.src), j.dst); err != nil {
			return Invoice{}, fmt.Errorf("invoice %s: %w", inv.ID, err)
		}
	}
	inv.SubscriptionID, inv.PaymentAgreementID = nullString(sub), nullString(agreement)
	inv.PeriodStart, inv.PeriodEnd = fromNullTime(start), fromNullTime(end)
	inv.Net, inv.VAT, inv.Gross = catalog.NewAmount(net, cur), catalog.NewAmount(vat, cur), catalog.NewAmount(gross, cur)
	inv.IssuedAt, inv.DueAt, inv.CreatedAt = inv.IssuedAt.UTC(), inv.DueAt.UTC(), inv.CreatedAt.UTC()
	if inv.Lines == nil {
		inv.Lines = []billing.Line{}
	}
	if inv.VATTotals == nil {
		inv.VATTotals = []billing.VATTotal{}
	}
	return inv, nil
}

// Invoice returns invoice id of the context's tenant with its stored
// status (billing.Status derives Overdue).
func (s *Store) Invoice(ctx context.Context, id string) (Invoice, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Invoice{}, err
	}
	if !ValidID(id) {
		return Invoice{}, ErrNotFound
	}
	inv, err := scanInvoice(s.readRow(ctx, `SELECT `+invoiceColumns+` FROM invoices WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return Invoice{}, fmt.Errorf("store: invoice %s: %w", id, notFound(err))
	}
	return inv, nil
}

// DocumentFilter narrows ListInvoices and ListPaymentDemands; zero fields
// do not filter. Status is a status as shown (Overdue is derived at Now).
type DocumentFilter struct {
	SubscriberID   string
	SubscriptionID string
	Status         string
	IssuedFrom     *time.Time
	IssuedTo       *time.Time
	Now            time.Time
}

// statusCondition adds the condition for a shown status. unsettled are the
// stored statuses that turn Overdue after the due time.
func (f DocumentFilter) statusCondition(q *filter, first, overdue string) {
	now := ts(f.Now)
	switch f.Status {
	case "":
	case overdue:
		q.add("status IN ('"+first+"', 'PartiallyPaid') AND due_at < ?", now)
	case first, billing.InvoicePartiallyPaid:
		q.add("status = ?", f.Status)
		q.add("due_at >= ?", now)
	default:
		q.add("status = ?", f.Status)
	}
}

func (f DocumentFilter) apply(q *filter) {
	if f.SubscriberID != "" {
		q.add("subscriber_id = ?", f.SubscriberID)
	}
	if f.SubscriptionID != "" {
		q.add("subscription_id = ?", f.SubscriptionID)
	}
	if f.IssuedFrom != nil {
		q.add("issued_at >= ?", ts(*f.IssuedFrom))
	}
	if f.IssuedTo != nil {
		q.add("issued_at < ?", ts(*f.IssuedTo))
	}
}

// ListInvoices returns one page of the tenant's invoices.
func (s *Store) ListInvoices(ctx context.Context, f DocumentFilter, p Page) ([]Invoice, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	f.apply(q)
	f.statusCondition(q, billing.InvoiceIssued, billing.InvoiceOverdue)
	tail := q.page(p)
	rows, err := s.r.QueryContext(ctx, `SELECT `+invoiceColumns+` FROM invoices`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list invoices: %w", err)
	}
	defer rows.Close()
	out := []Invoice{}
	for rows.Next() {
		inv, err := scanInvoice(rows)
		if err != nil {
			return nil, "", fmt.Errorf("store: list invoices: %w", err)
		}
		out = append(out, inv)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("store: list invoices: %w", err)
	}
	out, next := trimPage(out, p, func(inv Invoice) string { return inv.ID })
	return out, next, nil
}

const demandColumns = `id, kind, invoice_id, account_id, subscriber_id, subscription_id, organization_id, currency,
	amount, paid_amount, credited_amount, status, issued_at, due_at, created_at`

func scanDemand(row scanner) (PaymentDemand, error) {
	var (
		d                      PaymentDemand
		sub                    sql.NullString
		amount, paid, credited int64
	)
	err := row.Scan(&d.ID, &d.Kind, &d.InvoiceID, &d.SubscriberAccountID, &d.SubscriberID, &sub, &d.OrganizationID,
		&d.Currency, &amount, &paid, &credited, &d.Status, &d.IssuedAt, &d.DueAt, &d.CreatedAt)
	if err != nil {
		return PaymentDemand{}, err
	}
	cur, err := currencyOf(d.Currency)
	if err != nil {
		return PaymentDemand{}, err
	}
	d.SubscriptionID = nullString(sub)
	d.Amount, d.PaidAmount, d.CreditedAmount = catalog.NewAmount(amount, cur), catalog.NewAmount(paid, cur), catalog.NewAmount(credited, cur)
	d.IssuedAt, d.DueAt, d.CreatedAt = d.IssuedAt.UTC(), d.DueAt.UTC(), d.CreatedAt.UTC()
	return d, nil
}

// PaymentDemand returns payment demand id of the context's tenant.
func (s *Store) PaymentDemand(ctx context.Context, id string) (PaymentDemand, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return PaymentDemand{}, err
	}
	if !ValidID(id) {
		return PaymentDemand{}, ErrNotFound
	}
	d, err := scanDemand(s.readRow(ctx, `SELECT `+demandColumns+` FROM payment_demands WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return PaymentDemand{}, fmt.Errorf("store: payment demand %s: %w", id, notFound(err))
	}
	return d, nil
}

// ListPaymentDemands returns one page of the tenant's payment demands.
func (s *Store) ListPaymentDemands(ctx context.Context, f DocumentFilter, p Page) ([]PaymentDemand, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	f.apply(q)
	f.statusCondition(q, billing.DemandOpen, billing.DemandOverdue)
	tail := q.page(p)
	rows, err := s.r.QueryContext(ctx, `SELECT `+demandColumns+` FROM payment_demands`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list payment demands: %w", err)
	}
	defer rows.Close()
	out := []PaymentDemand{}
	for rows.Next() {
		d, err := scanDemand(rows)
		if err != nil {
			return nil, "", fmt.Errorf("store: list payment demands: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("store: list payment demands: %w", err)
	}
	out, next := trimPage(out, p, func(d PaymentDemand) string { return d.ID })
	return out, next, nil
}

// SubscriberExists reports whether subscriber id exists in the context's
// tenant (list filters naming a missing parent answer 404).
func (s *Store) subscriberExists(ctx context.Context, tenant, id string) (bool, error) {
	var one int
	err := s.readRow(ctx, `SELECT 1 FROM subscribers WHERE tenant_id = $1 AND id = $2`, tenant, id).Scan(&one)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

// RequireParents answers ErrNotFound when a list filter names a subscriber
// or subscription that does not exist in the context's tenant.
func (s *Store) RequireParents(ctx context.Context, subscriberID, subscriptionID string) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if subscriberID != "" {
		ok, err := s.subscriberExists(ctx, tenant, subscriberID)
		if err != nil {
			return err
		}
		if !ok {
			return ErrNotFound
		}
	}
	if subscriptionID != "" {
		if _, err := s.Subscription(ctx, subscriptionID); err != nil {
			return err
		}
	}
	return nil
}
