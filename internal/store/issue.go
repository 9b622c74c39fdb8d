package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/period"
)

// NewPeriod is a subscription period created at business time At: what
// the engine hands billing (engine.Hooks.PeriodsCreated).
type NewPeriod struct {
	Sub Subscription
	At  time.Time
}

// IssuePeriodInvoices is the billing hook of new subscription periods
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
func IssuePeriodInvoices(ctx context.Context, tx *Tx, periods []NewPeriod) error {
	if len(periods) == 0 {
		return nil
	}
	if err := tx.issuePeriodInvoices(ctx, periods); err != nil {
		if len(periods) == 1 {
			return fmt.Errorf("store: invoice subscription %s: %w", periods[0].Sub.ID, err)
		}
		return fmt.Errorf("store: invoice %d periods (first subscription %s): %w", len(periods), periods[0].Sub.ID, err)
	}
	return nil
}

// issueOrg is an organization as issuing needs it.
type issueOrg struct {
	Organization
	loc    *time.Location
	seller string
}

// openItem is an outstanding account item with its booking time; an
// invoice only picks up items booked at or before its issue time.
type openItem struct {
	billing.Item
	booked time.Time
}

func (tx *Tx) issuePeriodInvoices(ctx context.Context, periods []NewPeriod) error {
	n := len(periods)
	at := make([]time.Time, n)
	curs := make([]money.Currency, n)
	orgs := map[string]*issueOrg{}
	var (
		orgOrder    []string
		subscribers []string
		counts      = map[string]int64{}
		seen        = map[string]bool{}
		maxAt       time.Time
	)
	for i, p := range periods {
		at[i] = p.At.UTC().Truncate(time.Microsecond)
		if at[i].After(maxAt) {
			maxAt = at[i]
		}
		cur, err := currencyOf(p.Sub.Currency)
		if err != nil {
			return err
		}
		curs[i] = cur
		if _, ok := orgs[p.Sub.OrganizationID]; !ok {
			o, err := tx.issueOrganization(ctx, p.Sub.OrganizationID)
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
	}
	buyers, err := tx.buyers(ctx, subscribers)
	if err != nil {
		return err
	}
	accounts, err := tx.accounts(ctx, periods, at, subscribers)
	if err != nil {
		return err
	}
	accountIDs := make([]string, 0, len(accounts))
	for _, id := range accounts {
		accountIDs = append(accountIDs, id)
	}
	items, err := tx.openItemsOf(ctx, accountIDs, maxAt)
	if err != nil {
		return err
	}
	// One counter update per organization reserves the batch's numbers;
	// they are handed out in the order of periods. The reservation commits
	// or rolls back with the invoices, so the series stays gap-free.
	next := map[string]int64{}
	for _, org := range orgOrder {
		last, err := tx.reserveNumbers(ctx, invoiceScope(org), counts[org])
		if err != nil {
			return err
		}
		next[org] = last - counts[org] + 1
	}

	created := ts(time.Now())
	var (
		invoices = make([][]any, 0, n)
		demands  = make([][]any, 0, n)
		entries  = make([][]any, 0, n)
		events   = make([]NewEvent, 0, n)
		uses     []billing.Use
	)
	dunning, err := tx.dunningResolver(ctx)
	if err != nil {
		return err
	}
	for i, p := range periods {
		sub, org, cur := p.Sub, orgs[p.Sub.OrganizationID], curs[i]
		account := accounts[sub.SubscriberID+"/"+sub.Currency]
		var in []billing.Item
		for _, it := range items[account] {
			if it.Remaining > 0 && !it.booked.After(at[i]) {
				in = append(in, it.Item)
			}
		}
		doc, err := billing.Build(billing.Input{Currency: cur, PricesIncludeVAT: org.PricesIncludeVAT, Package: sub.Package,
			PeriodStart: sub.PeriodStart, PeriodEnd: sub.PeriodEnd, Items: in})
		if err != nil {
			return fmt.Errorf("subscription %s: %w", sub.ID, err)
		}
		number := next[org.ID]
		next[org.ID]++
		due := billing.DueAt(at[i], sub.PeriodStart, sub.Package.BillingPlan.PaymentTermsDays, org.loc)
		lines, err := json.Marshal(doc.Lines)
		if err != nil {
			return err
		}
		vats, err := json.Marshal(doc.VATTotals)
		if err != nil {
			return err
		}
		invoiceID, demandID := NewID(), NewID()
		// An invoice that allowances brought to zero is settled at issue.
		demandStatus, invoiceStatus := billing.Settlement{Amount: doc.Gross}.Statuses()
		invoices = append(invoices, []any{invoiceID, tx.tenant, org.ID, number, demandID, account, sub.SubscriberID, sub.ID,
			sub.PaymentAgreementID, cur.Code, org.PricesIncludeVAT, invoiceStatus, ts(at[i]), ts(due), billing.LocalDate(at[i], org.loc),
			billing.LocalDate(due, org.loc), ts(sub.PeriodStart), ts(sub.PeriodEnd), org.seller, buyers[sub.SubscriberID],
			string(lines), string(vats), doc.Net, doc.VAT, doc.Gross, billing.KID(number, org.KIDAlgorithm), created})
		// The demand's dunning process is chosen at issue and its first
		// reminder scheduled (none for a demand settled at issue).
		var process, firstReminder any
		if id, days, ok := dunning(sub.Package.BillingPlan.BillingPlanID); ok && doc.Gross > 0 {
			process, firstReminder = id, ts(DunningTime(due, days, org.loc))
		}
		demands = append(demands, []any{demandID, tx.tenant, "Period", invoiceID, account, sub.SubscriberID, sub.ID, org.ID, cur.Code,
			doc.Gross, demandStatus, ts(at[i]), ts(due), process, firstReminder, created})
		entries = append(entries, []any{NewID(), tx.tenant, account, EntryInvoice, doc.Gross, invoiceID, nil, ts(at[i]), created})
		for _, u := range doc.Uses {
			for _, it := range items[account] {
				if it.ID == u.ItemID {
					it.Remaining -= u.Amount
				}
			}
			uses = append(uses, u)
			kind, amount := EntryChargeInvoiced, -u.Amount
			if u.Kind == billing.ItemAllowance {
				kind, amount = EntryAllowanceApplied, u.Amount
			}
			entries = append(entries, []any{NewID(), tx.tenant, account, kind, amount, invoiceID, u.ItemID, ts(at[i]), created})
		}
		events = append(events, NewEvent{Type: EventInvoiceIssued, Subject: "/invoice/" + invoiceID, At: at[i],
			Data: invoiceIssuedData{InvoiceID: invoiceID, PaymentDemandID: demandID, SubscriberID: sub.SubscriberID,
				SubscriptionID: sub.ID}})
	}

	if err := tx.insertRows(ctx, "invoices", `id, tenant_id, organization_id, invoice_number, payment_demand_id,
		account_id, subscriber_id, subscription_id, payment_agreement_id, currency, prices_include_vat, status,
		issued_at, due_at, issue_date, due_date, period_start, period_end, seller, buyer, lines, vat_totals,
		net, vat, gross, kid, created_at`, invoices, ``); err != nil {
		return fmt.Errorf("insert invoices: %w", err)
	}
	if err := tx.insertRows(ctx, "payment_demands", `id, tenant_id, kind, invoice_id, account_id, subscriber_id,
		subscription_id, organization_id, currency, amount, status, issued_at, due_at, dunning_process_id, next_dunning_at,
		created_at`, demands, ``); err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("period already has a payment demand: %w", ErrConflict)
		}
		return fmt.Errorf("insert payment demands: %w", err)
	}
	if err := tx.insertRows(ctx, "account_entries", `id, tenant_id, account_id, kind, amount, invoice_id, item_id,
		booked_at, created_at`, entries, ``); err != nil {
		return fmt.Errorf("store: add ledger entries: %w", err)
	}
	for _, u := range uses {
		if err := tx.useItem(ctx, u.ItemID, u.Amount); err != nil {
			return err
		}
	}
	return tx.AddEvents(ctx, events)
}

// invoiceIssuedData is the payload of a period's InvoiceIssued event. A
// struct encodes faster than a map; its fields are in the order of their
// names, the order encoding/json writes a map's keys in, so the events
// read as they did when it was one.
type invoiceIssuedData struct {
	InvoiceID       string `json:"invoiceId"`
	PaymentDemandID string `json:"paymentDemandId"`
	SubscriberID    string `json:"subscriberId"`
	SubscriptionID  string `json:"subscriptionId"`
}

// issueOrganization reads organization id with its zone and seller
// snapshot.
func (tx *Tx) issueOrganization(ctx context.Context, id string) (*issueOrg, error) {
	org, err := scanOrganization(tx.queryRow(ctx,
		`SELECT `+organizationColumns+` FROM organizations WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
	if err != nil {
		return nil, fmt.Errorf("organization %s: %w", id, notFound(err))
	}
	loc, err := period.LoadZone(org.TimeZone)
	if err != nil {
		return nil, err
	}
	seller, err := json.Marshal(SellerOf(org))
	if err != nil {
		return nil, err
	}
	return &issueOrg{Organization: org, loc: loc, seller: string(seller)}, nil
}

// buyers returns the JSON of every subscriber of ids as an invoice's
// buyer, by id.
func (tx *Tx) buyers(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	err := tx.queryIn(ctx, `SELECT `+subscriberColumns+` FROM subscribers WHERE tenant_id = $1 AND id IN `, ``, nil, ids,
		func(rows *sql.Rows) error {
			sub, err := scanSubscriber(rows)
			if err != nil {
				return err
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
				return err
			}
			out[sub.ID] = string(j)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("subscribers: %w", err)
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			return nil, fmt.Errorf("subscriber %s: %w", id, ErrNotFound)
		}
	}
	return out, nil
}

// accounts returns the account of every (subscriber, currency) of periods,
// keyed "subscriber/currency", creating the missing ones (each at the time
// of its first period) with one multi-row insert.
func (tx *Tx) accounts(ctx context.Context, periods []NewPeriod, at []time.Time, subscribers []string) (map[string]string, error) {
	out := map[string]string{}
	load := func(ids []string) error {
		return tx.queryIn(ctx, `SELECT id, subscriber_id, currency FROM subscriber_accounts WHERE tenant_id = $1 AND subscriber_id IN `,
			``, nil, ids, func(rows *sql.Rows) error {
				var id, subscriber, currency string
				if err := rows.Scan(&id, &subscriber, &currency); err != nil {
					return err
				}
				out[subscriber+"/"+currency] = id
				return nil
			})
	}
	if err := load(subscribers); err != nil {
		return nil, fmt.Errorf("store: subscriber accounts: %w", err)
	}
	var (
		missing [][]any
		again   []string
		noted   = map[string]bool{}
	)
	for i, p := range periods {
		key := p.Sub.SubscriberID + "/" + p.Sub.Currency
		if _, ok := out[key]; ok || noted[key] {
			continue
		}
		noted[key] = true
		missing = append(missing, []any{NewID(), tx.tenant, p.Sub.SubscriberID, p.Sub.Currency, ts(at[i])})
		again = append(again, p.Sub.SubscriberID)
	}
	if len(missing) == 0 {
		return out, nil
	}
	if err := tx.insertRows(ctx, "subscriber_accounts", `id, tenant_id, subscriber_id, currency, created_at`,
		missing, `ON CONFLICT (tenant_id, subscriber_id, currency) DO NOTHING`); err != nil {
		return nil, fmt.Errorf("store: create subscriber accounts: %w", err)
	}
	// Read them back: a concurrent first order may have created one.
	if err := load(again); err != nil {
		return nil, fmt.Errorf("store: subscriber accounts: %w", err)
	}
	for key := range noted {
		if _, ok := out[key]; !ok {
			return nil, fmt.Errorf("store: subscriber account %s: %w", key, ErrNotFound)
		}
	}
	return out, nil
}

// openItemsOf returns, by account, the charges and allowances of accounts
// booked at or before until that still have something to bill or apply,
// oldest first.
func (tx *Tx) openItemsOf(ctx context.Context, accounts []string, until time.Time) (map[string][]*openItem, error) {
	out := map[string][]*openItem{}
	err := tx.queryIn(ctx, `SELECT account_id, id, kind, description, remaining, vat_rate, booked_at FROM account_items
		WHERE tenant_id = $1 AND remaining > 0 AND booked_at <= $2 AND account_id IN `, ` ORDER BY booked_at, id`,
		[]any{ts(until)}, accounts, func(rows *sql.Rows) error {
			var (
				account, rate string
				it            openItem
			)
			if err := rows.Scan(&account, &it.ID, &it.Kind, &it.Description, &it.Remaining, &rate, &it.booked); err != nil {
				return err
			}
			var err error
			if it.VATRate, err = catalog.ParsePercentText(rate); err != nil {
				return fmt.Errorf("account item %s vat rate: %w", it.ID, err)
			}
			it.booked = it.booked.UTC()
			out[account] = append(out[account], &it)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: open account items: %w", err)
	}
	return out, nil
}

// invoiceScope is the counter series of an organization's invoice numbers.
func invoiceScope(orgID string) string { return "invoice:" + orgID }

// reserveNumbers takes the next n numbers of series scope in one upsert
// and returns the last of them (the first is last-n+1). Like nextCounter
// they are consumed only if the transaction commits.
func (tx *Tx) reserveNumbers(ctx context.Context, scope string, n int64) (int64, error) {
	var last int64
	err := tx.queryRow(ctx, `INSERT INTO counters (tenant_id, scope, value) VALUES ($1, $2, $3)
		ON CONFLICT (tenant_id, scope) DO UPDATE SET value = counters.value + excluded.value
		WHERE counters.value <= $4
		RETURNING value`, tx.tenant, scope, n, int64(maxCounter)-n).Scan(&last)
	if err != nil {
		if err == sql.ErrNoRows {
			return 0, fmt.Errorf("counter %s: %w", scope, ErrCounterExhausted)
		}
		return 0, fmt.Errorf("counter %s: %w", scope, err)
	}
	return last, nil
}
