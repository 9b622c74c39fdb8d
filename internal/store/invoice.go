package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

// EventInvoiceIssued is recorded when an invoice is issued, in the same
// transaction.
const EventInvoiceIssued = "InvoiceIssued"

// DemandPeriod is the kind of the payment demand of a subscription period.
const DemandPeriod = "Period"

// Seller is the organization on an invoice, as it was at issue: who is
// paid, where and under which registrations (invoices issued before
// migration 00017 have empty address and account fields and no
// registrations).
type Seller struct {
	OrganizationID     string `json:"organizationId"`
	Name               string `json:"name"`
	OrganizationNumber string `json:"organizationNumber"`
	Country            string `json:"country"`
	LogoURL            string `json:"logoUrl"`

	// Payment details and registrations (migration 00017).
	Address          Address     `json:"address"`
	BankAccount      BankAccount `json:"bankAccount"`
	VATRegistered    bool        `json:"vatRegistered"`
	BusinessRegister bool        `json:"businessRegister"`
}

// SellerOf is organization o as its invoices record it.
func SellerOf(o Organization) Seller {
	return Seller{OrganizationID: o.ID, Name: o.Name, OrganizationNumber: o.OrganizationNumber, Country: o.Country,
		LogoURL: o.LogoURL, Address: o.Address, BankAccount: o.BankAccount, VATRegistered: o.VATRegistered,
		BusinessRegister: o.BusinessRegister}
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
	ID            string `json:"id"`
	InvoiceNumber int64  `json:"invoiceNumber"`
	// Number repeats InvoiceNumber under the name INFO-Subscription
	// clients read (docs/MIGRATION.md).
	Number              int64              `json:"number" description:"The same as invoiceNumber, under the name INFO-Subscription clients read."`
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
	KID                 string             `json:"kid" description:"Payment reference (KID) with a MOD10 or MOD11 check digit, as the organization's kidAlgorithm was at issue."`
	CreatedAt           time.Time          `json:"createdAt"`
	// Version counts the changes of the row; set by lists only
	// (ListInvoiceItems), which key their caches by it.
	Version int64 `json:"-"`
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
	inv.Number = inv.InvoiceNumber
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
	// KID and InvoiceNumber find invoices by their payment reference or
	// number (invoices only).
	KID           string
	InvoiceNumber *int64
	Now           time.Time
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

// documentsFrom is the FROM clause of a list of table filtered by f.
// Listing by subscriber goes through the subscriber's subscription periods
// and the table's index by subscription (byPeriod); SQLite, without
// statistics, would rather walk all of the tenant's documents in id order,
// so it is told which index to use.
func (s *Store) documentsFrom(table, byPeriod string, f DocumentFilter) string {
	from := " FROM " + table
	if f.SubscriberID != "" && s.engine == SQLite {
		from += " INDEXED BY " + byPeriod
	}
	return from
}

// apply adds f's conditions. period, if any, is the predicate of the
// table's partial index by subscription, so the planner can use it.
func (f DocumentFilter) apply(q *filter, period string) {
	if f.SubscriberID != "" {
		// Through the subscriber's subscription periods: invoices and
		// demands have no index by subscriber (migration 00014 says why),
		// and every one of them belongs to a period: issuing is the only
		// writer, demands' kind is CHECKed to Period, and the billing
		// simulation (TestBillingSimulation, listsBySubscriber) compares
		// these lists with the documents that name the subscriber. A kind
		// without a period would need its own way in here.
		if period != "" {
			q.conds = append(q.conds, period)
		}
		q.add("subscription_id IN (SELECT id FROM subscriptions WHERE tenant_id = $1 AND subscriber_id = ?)", f.SubscriberID)
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
	if f.KID != "" {
		q.add("kid = ?", f.KID)
	}
	if f.InvoiceNumber != nil {
		q.add("invoice_number = ?", *f.InvoiceNumber)
	}
}

// ListInvoices returns one page of the tenant's invoices.
func (s *Store) ListInvoices(ctx context.Context, f DocumentFilter, p Page) ([]Invoice, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	f.apply(q, "")
	f.statusCondition(q, billing.InvoiceIssued, billing.InvoiceOverdue)
	tail := q.page(p)
	rows, err := s.r.QueryContext(ctx, `SELECT `+invoiceColumns+s.documentsFrom("invoices", "invoices_subscription", f)+q.where()+tail, q.args...)
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
	f.apply(q, "kind = 'Period'")
	f.statusCondition(q, billing.DemandOpen, billing.DemandOverdue)
	tail := q.page(p)
	rows, err := s.r.QueryContext(ctx, `SELECT `+demandColumns+s.documentsFrom("payment_demands", "payment_demands_period", f)+q.where()+tail, q.args...)
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

// Parents names the rows a list filter refers to; empty fields are not
// checked.
type Parents struct {
	Subscriber, Subscription, Invoice, PaymentDemand, Organization string
}

// RequireParents answers ErrNotFound when a list filter names a parent
// that does not exist in the context's tenant (a filter that matches
// nothing is an empty list; one that names nothing real is a 404).
func (s *Store) RequireParents(ctx context.Context, p Parents) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	for _, parent := range []struct{ table, what, id string }{
		{"subscribers", "subscriber", p.Subscriber}, {"subscriptions", "subscription", p.Subscription},
		{"invoices", "invoice", p.Invoice}, {"payment_demands", "payment demand", p.PaymentDemand},
		{"organizations", "organization", p.Organization}} {
		if parent.id == "" {
			continue
		}
		var one int
		if err := s.readRow(ctx, `SELECT 1 FROM `+parent.table+` WHERE tenant_id = $1 AND id = $2`, tenant, parent.id).Scan(&one); err != nil {
			return fmt.Errorf("store: %s %s: %w", parent.what, parent.id, notFound(err))
		}
	}
	return nil
}
