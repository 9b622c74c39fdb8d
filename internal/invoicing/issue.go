// Package invoicing runs the billing workflows over the store: issuing a
// batch of periods' invoices and payment demands, settling a demand with a
// payment or a credit, crediting an invoice, settling a cancellation
// (proration), booking charges and allowances, and dunning (reminders and
// payment stops).
//
// Each workflow loads its inputs with a few store reads, decides with the
// pure rules of internal/billing (amounts, VAT, statuses, due dates, KIDs,
// proration) and writes the outcome with a few set-based store writes. It
// runs in the caller's transaction (a *store.Tx), so what a workflow writes
// commits or rolls back with the change that caused it; the functions that
// take a *store.Store (RecordPayment, AddAccountItem, CreditInvoice) open
// one transaction of their own.
//
// It owns dunning's records and their SQL, on the store's query kit
// (internal/store/kit.go): the tenant's dunning processes and proration
// policies (processes.go, kept for the API by internal/app), the
// demands' dunning schedule and the reminders issued (dunningsql.go).
// The tables and their migrations stay in internal/store.
package invoicing

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
)

// IssuePeriods is the billing hook of new subscription periods
// (engine.Hooks.PeriodsCreated): in tx, for every period in order, at its
// business time, it ensures the subscriber's account in the subscription's
// currency, builds the period's invoice (picking up the account's
// outstanding charges and allowances booked by then, including what an
// earlier invoice of the same call left), numbers it in the
// organization's gap-free series (in the order of periods), and writes the
// invoice, its payment demand, the ledger entries and the InvoiceIssued
// event. Everything it writes is derived from stored state and the times.
//
// It is set-based: one query per kind of input for the whole batch, one
// counter update per organization, and multi-row inserts, so an engine
// batch of a thousand renewals costs a few dozen statements.
func IssuePeriods(ctx context.Context, tx *store.Tx, periods []store.NewPeriod) error {
	if len(periods) == 0 {
		return nil
	}
	if err := issuePeriods(ctx, tx, periods); err != nil {
		if len(periods) == 1 {
			return fmt.Errorf("invoicing: invoice subscription %s: %w", periods[0].Sub.ID, err)
		}
		return fmt.Errorf("invoicing: invoice %d periods (first subscription %s): %w", len(periods), periods[0].Sub.ID, err)
	}
	return nil
}

// issuer is an organization as issuing needs it: its zone and the seller
// snapshot its invoices carry.
type issuer struct {
	store.Organization
	loc    *time.Location
	seller *store.Seller
}

// openItem is an outstanding account item with its booking time; an
// invoice only picks up items booked at or before its issue time.
type openItem struct {
	billing.Item
	booked time.Time
}

func issuePeriods(ctx context.Context, tx *store.Tx, periods []store.NewPeriod) error {
	n := len(periods)
	at := make([]time.Time, n)
	curs := make([]money.Currency, n)
	orgs := map[string]*issuer{}
	var (
		orgOrder    []string
		subscribers []string
		counts      = map[string]int64{}
		seen        = map[string]bool{}
		maxAt       time.Time
		want        = make([]store.NewAccount, n)
	)
	for i, p := range periods {
		at[i] = p.At.UTC().Truncate(time.Microsecond)
		if at[i].After(maxAt) {
			maxAt = at[i]
		}
		cur, ok := money.LookupCurrency(p.Sub.Currency)
		if !ok {
			return fmt.Errorf("subscription %s: unknown currency %q", p.Sub.ID, p.Sub.Currency)
		}
		curs[i] = cur
		if _, ok := orgs[p.Sub.OrganizationID]; !ok {
			o, err := loadIssuer(ctx, tx, p.Sub.OrganizationID)
			if err != nil {
				return err
			}
			orgs[p.Sub.OrganizationID] = o
			orgOrder = append(orgOrder, p.Sub.OrganizationID)
		}
		counts[p.Sub.OrganizationID]++
		if !seen[p.Sub.SubscriberID] {
			seen[p.Sub.SubscriberID] = true
			subscribers = append(subscribers, p.Sub.SubscriberID)
		}
		want[i] = store.NewAccount{AccountKey: store.AccountKey{SubscriberID: p.Sub.SubscriberID, Currency: p.Sub.Currency}, At: at[i]}
	}
	subs, err := tx.Subscribers(ctx, subscribers)
	if err != nil {
		return err
	}
	buyers := make(map[string]*store.Buyer, len(subs))
	for id, s := range subs {
		buyers[id] = buyerOf(s)
	}
	accounts, err := tx.EnsureAccounts(ctx, want)
	if err != nil {
		return err
	}
	accountIDs := make([]string, 0, len(accounts))
	for _, id := range accounts {
		accountIDs = append(accountIDs, id)
	}
	stored, err := tx.OpenItems(ctx, accountIDs, maxAt)
	if err != nil {
		return err
	}
	items := make(map[string][]*openItem, len(stored))
	for account, its := range stored {
		items[account] = openItems(its)
	}
	// One counter update per organization reserves the batch's numbers;
	// they are handed out in the order of periods. The reservation commits
	// or rolls back with the invoices, so the series stays gap-free.
	next := map[string]int64{}
	for _, org := range orgOrder {
		last, err := tx.ReserveNumbers(ctx, store.InvoiceSeries(org), counts[org])
		if err != nil {
			return err
		}
		next[org] = last - counts[org] + 1
	}
	dunning, err := dunningResolver(ctx, tx)
	if err != nil {
		return err
	}

	var (
		invoices = make([]store.NewInvoice, 0, n)
		demands  = make([]store.NewDemand, 0, n)
		entries  = make([]store.NewEntry, 0, n)
		events   = make([]store.NewEvent, 0, n)
		uses     []store.ItemUse
	)
	for i, p := range periods {
		sub, org, cur := p.Sub, orgs[p.Sub.OrganizationID], curs[i]
		account := accounts[want[i].AccountKey]
		doc, due, err := periodDocument(sub, org, cur, items[account], at[i])
		if err != nil {
			return err
		}
		number := next[org.ID]
		next[org.ID]++
		dueDate := billing.LocalDate(due, org.loc)
		invoiceID, demandID := store.NewID(), store.NewID()
		// An invoice that allowances brought to zero is settled at issue.
		demandStatus, invoiceStatus := billing.Settlement{Amount: doc.Gross}.Statuses()
		invoices = append(invoices, store.NewInvoice{ID: invoiceID, OrganizationID: org.ID, Number: number,
			PaymentDemandID: demandID, AccountID: account, SubscriberID: sub.SubscriberID, SubscriptionID: sub.ID,
			PaymentAgreementID: sub.PaymentAgreementID, Currency: cur.Code, PricesIncludeVAT: org.PricesIncludeVAT,
			Status: invoiceStatus, IssuedAt: at[i], DueAt: due, IssueDate: billing.LocalDate(at[i], org.loc),
			DueDate: dueDate, PeriodStart: sub.PeriodStart, PeriodEnd: sub.PeriodEnd,
			Seller: org.seller, Buyer: buyers[sub.SubscriberID], Lines: doc.Lines, VATTotals: doc.VATTotals,
			Net: doc.Net, VAT: doc.VAT, Gross: doc.Gross, KID: billing.KID(number, org.KIDAlgorithm)})
		// The demand's dunning process is chosen at issue and its first
		// reminder scheduled (none for a demand settled at issue).
		d := store.NewDemand{ID: demandID, Kind: store.DemandPeriod, InvoiceID: invoiceID, AccountID: account,
			SubscriberID: sub.SubscriberID, SubscriptionID: sub.ID, OrganizationID: org.ID, Currency: cur.Code,
			Amount: doc.Gross, Status: demandStatus, IssuedAt: at[i], DueAt: due}
		if id, days, ok := dunning(sub.Package.BillingPlan.BillingPlanID); ok && doc.Gross > 0 {
			first := DunningTime(due, days, org.loc)
			d.DunningProcessID, d.NextDunningAt = &id, &first
		}
		demands = append(demands, d)
		entries = append(entries, store.NewEntry{AccountID: account, Kind: store.EntryInvoice, Amount: doc.Gross,
			InvoiceID: invoiceID, BookedAt: at[i]})
		for _, u := range doc.Uses {
			for _, it := range items[account] {
				if it.ID == u.ItemID {
					it.Remaining -= u.Amount
				}
			}
			uses = append(uses, store.ItemUse{ItemID: u.ItemID, Amount: u.Amount})
			kind, amount := store.EntryChargeInvoiced, -u.Amount
			if u.Kind == billing.ItemAllowance {
				kind, amount = store.EntryAllowanceApplied, u.Amount
			}
			entries = append(entries, store.NewEntry{AccountID: account, Kind: kind, Amount: amount, InvoiceID: invoiceID,
				ItemID: u.ItemID, BookedAt: at[i]})
		}
		events = append(events, store.NewEvent{Type: store.EventInvoiceIssued, Subject: "/invoice/" + invoiceID, At: at[i],
			Data: InvoiceEventData{Amount: catalog.NewAmount(doc.Gross, cur), Currency: cur.Code, DueAt: due,
				DueDate: dueDate, InvoiceID: invoiceID, InvoiceNumber: number, Number: number,
				OrganizationID: org.ID, PaymentDemandID: demandID, SubscriberID: sub.SubscriberID, SubscriptionID: &periods[i].Sub.ID}})
	}

	if err := tx.InsertInvoices(ctx, invoices); err != nil {
		return err
	}
	if err := tx.InsertDemands(ctx, demands); err != nil {
		return err
	}
	if err := tx.AddEntries(ctx, entries); err != nil {
		return err
	}
	if err := tx.UseItems(ctx, uses); err != nil {
		return err
	}
	return tx.AddEvents(ctx, events)
}

// openItems are stored open items as issuing uses them.
func openItems(stored []store.OpenItem) []*openItem {
	out := make([]*openItem, len(stored))
	for i, it := range stored {
		out[i] = &openItem{Item: billing.Item{ID: it.ID, Kind: it.Kind, Description: it.Description, Remaining: it.Remaining,
			VATRate: it.VATRate}, booked: it.BookedAt}
	}
	return out
}

// periodDocument is the content of period sub's invoice issued at at by
// org in currency cur: its lines, VAT summary and totals, with the
// account's open items among items booked by at (oldest first), and when
// it falls due. Issuing (issuePeriods) and the upcoming invoice's preview
// (PreviewPeriod) both build it here, so a preview is what issuing writes.
func periodDocument(sub store.Subscription, org *issuer, cur money.Currency, items []*openItem, at time.Time) (billing.Document, time.Time, error) {
	var in []billing.Item
	for _, it := range items {
		if it.Remaining > 0 && !it.booked.After(at) {
			in = append(in, it.Item)
		}
	}
	doc, err := billing.Build(billing.Input{Currency: cur, PricesIncludeVAT: org.PricesIncludeVAT, Package: sub.Package,
		PeriodStart: sub.PeriodStart, PeriodEnd: sub.PeriodEnd, Items: in})
	if err != nil {
		return billing.Document{}, time.Time{}, fmt.Errorf("subscription %s: %w", sub.ID, err)
	}
	return doc, billing.DueAt(at, sub.PeriodStart, sub.Package.BillingPlan.PaymentTermsDays, org.loc), nil
}

// loadIssuer reads organization id with its zone and seller snapshot.
func loadIssuer(ctx context.Context, tx *store.Tx, id string) (*issuer, error) {
	org, err := tx.Organization(ctx, id)
	if err != nil {
		return nil, err
	}
	return issuerOf(org)
}

// issuerOf is org with its zone and seller snapshot.
func issuerOf(org store.Organization) (*issuer, error) {
	loc, err := period.LoadZone(org.TimeZone)
	if err != nil {
		return nil, err
	}
	seller := store.SellerOf(org)
	return &issuer{Organization: org, loc: loc, seller: &seller}, nil
}

// buyerOf is subscriber s as an invoice's buyer: the invoice goes to its
// first Invoice contact, when it has one.
func buyerOf(s *store.Subscriber) *store.Buyer {
	b := store.Buyer{SubscriberID: s.ID, SubscriberNumber: s.SubscriberNumber, Name: s.Name, Email: s.Email,
		Phone: s.Phone, Address: s.Address, Country: s.Country}
	for i := range s.Contacts {
		if s.Contacts[i].Role == store.ContactInvoice {
			b.InvoiceContact = &s.Contacts[i]
			break
		}
	}
	return &b
}

// dunningResolver reads the tenant's dunning processes once per batch of
// invoices and returns what applies to an invoice of billing plan planID:
// the plan's process, else the tenant's default, with its first reminder
// day; ok is false when none applies (or it has no reminders). A tenant
// without dunning processes costs one query per batch.
func dunningResolver(ctx context.Context, tx *store.Tx) (func(planID string) (id string, firstDays int, ok bool), error) {
	schedules, err := dunningSchedules(ctx, tx)
	if err != nil {
		return nil, err
	}
	type proc struct {
		first int
		ok    bool
	}
	procs := map[string]proc{}
	var def string
	for _, s := range schedules {
		if len(s.ReminderDays) > 0 {
			procs[s.ID] = proc{first: s.ReminderDays[0], ok: true}
		}
		if s.IsDefault {
			def = s.ID
		}
	}
	none := func(string) (string, int, bool) { return "", 0, false }
	if len(procs) == 0 {
		return none, nil
	}
	byPlan, err := planDunningProcesses(ctx, tx)
	if err != nil {
		return nil, err
	}
	return func(planID string) (string, int, bool) {
		id := def
		if p, ok := byPlan[planID]; ok {
			id = p
		}
		p := procs[id]
		return id, p.first, p.ok
	}, nil
}

// DunningTime is days local calendar days after the due time (the same
// time of day, at local midnight for demands due at a period start).
func DunningTime(due time.Time, days int, loc *time.Location) time.Time {
	return due.In(loc).AddDate(0, 0, days).UTC()
}
