// Package ledger checks that the billing ledger balances, per tenant, in
// one read snapshot: every account's balance against its documents and
// items, every invoice's and credit note's entry, every payment demand's
// invoice, amounts and statuses (billing.Settlement's rules), every item's
// remaining amount, every payment's entry and surplus, and that every
// charge, allowance and entry names the document that booked it. It only
// reads, on the store's query kit, and its report says what to do about
// each problem (`kadens ledger check`, docs/BILLING.md "Ledger check").
// It is no store code: it reads the tables of the store and of the wings
// (which register their item sources with RegisterItemSource), so it sits
// above both, and the tests of every package that moves money call it.
package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Ledger rules checked by CheckLedger (docs/BILLING.md, "Ledger check").
const (
	RuleBalance       = "balance"        // Σ entries = Σ invoices − Σ credit notes − Σ payments + charges − allowances
	RuleInvoiceEntry  = "invoice-entry"  // one Invoice entry per invoice, equal to its gross, on its account
	RuleDemandInvoice = "demand-invoice" // one invoice per demand, pointing back, amount = gross
	RuleDemandPaid    = "demand-paid"    // paid_amount = Σ applied of succeeded payments
	RuleDemandCredit  = "demand-credited"
	RuleStatus        = "status"         // stored statuses = billing.Settlement.Statuses
	RuleItemRemaining = "item-remaining" // remaining = amount − what invoices billed or applied
	RulePaymentEntry  = "payment-entry"  // one Payment entry of −applied per payment; surplus = its allowance
	RuleOverCredit    = "over-credit"    // per invoice line: Σ credit notes ≤ its gross, positive lines only; per invoice: Σ credit notes + Σ unused-days allowances ≤ Σ positive lines
	RuleItemSource    = "item-source"    // every charge and allowance has the document that booked it, naming it back
	RuleSettledTwice  = "settled-twice"  // Σ applied of a demand's payments and credit notes ≤ its amount
	RuleCreditEntry   = "credit-entry"   // one CreditNote entry of −applied per credit note; surplus = its allowance
	RuleEntrySource   = "entry-source"   // every entry names the document or item of its kind on its account
)

// Problem is one row that breaks a ledger rule, with what to do.
type Problem struct {
	TenantID string `json:"tenantId"`
	Rule     string `json:"rule"`
	Table    string `json:"table"`
	ID       string `json:"id"`
	Detail   string `json:"detail"`
	Fix      string `json:"fix"`
}

func (p Problem) String() string {
	row := strings.TrimSuffix(p.Table, "s")
	if p.Table == "account_entries" {
		row = "account_entry"
	}
	return fmt.Sprintf("tenant %s %s %s [%s]: %s. %s", p.TenantID, row, p.ID, p.Rule, p.Detail, p.Fix)
}

// Report is the outcome of CheckLedger: what was checked and every
// problem found (Problems is capped at Options.MaxProblems; Found
// counts them all).
type Report struct {
	Tenants  int       `json:"tenants"`
	Accounts int       `json:"accounts"`
	Invoices int       `json:"invoices"`
	Demands  int       `json:"demands"`
	Items    int       `json:"accountItems"`
	Payments int       `json:"payments"`
	Found    int       `json:"problemCount"`
	Problems []Problem `json:"problems"`
}

// Clean reports whether no rule is broken.
func (r Report) Clean() bool { return r.Found == 0 }

// Options configures CheckLedger.
type Options struct {
	// TenantID limits the check to one tenant; empty checks all.
	TenantID string
	// Progress, when set, is called every ProgressEvery rows of a step
	// (so only big tenants report), with the tenant, the step and the rows
	// done so far.
	Progress      func(tenantID, step string, done int)
	ProgressEvery int
	// MaxProblems caps the problems kept in the report (default 10,000).
	MaxProblems int
}

// CheckLedger verifies the billing ledger of every tenant (or one) in one
// read snapshot per tenant: every account's balance against its
// documents and items, every invoice's ledger entry, every demand's
// invoice, amounts and statuses, every item's remaining amount and every
// payment's entry and surplus. It reads only; the report says what to do
// about each problem.
func Check(ctx context.Context, st *store.Store, o Options) (Report, error) {
	if o.MaxProblems <= 0 {
		o.MaxProblems = 10000
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 10000
	}
	var tenants []string
	if o.TenantID != "" {
		t, err := st.TenantByID(ctx, o.TenantID)
		if err != nil {
			return Report{}, fmt.Errorf("ledger: check: tenant %s: %w", o.TenantID, err)
		}
		tenants = []string{t.ID}
	} else {
		all, err := st.Tenants(ctx)
		if err != nil {
			return Report{}, err
		}
		for _, t := range all {
			tenants = append(tenants, t.ID)
		}
	}
	r := &ledgerRun{Options: o, report: Report{Problems: []Problem{}}}
	for _, t := range tenants {
		r.tenant = t
		err := st.InReadTx(tenancy.With(ctx, t), func(q store.ReadTx) error {
			for _, step := range []func(context.Context, store.ReadTx) error{
				r.balances, r.invoiceEntries, r.demands, r.orphanInvoices, r.items, r.payments,
				r.credits, r.creditEntries, r.itemSources, r.entrySources} {
				if err := step(ctx, q); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return r.report, fmt.Errorf("ledger: check of tenant %s: %w", t, err)
		}
		r.report.Tenants++
	}
	return r.report, nil
}

type ledgerRun struct {
	Options
	tenant string
	report Report
}

func (r *ledgerRun) problem(rule, table, id, fix, format string, args ...any) {
	r.report.Found++
	if len(r.report.Problems) < r.MaxProblems {
		r.report.Problems = append(r.report.Problems, Problem{TenantID: r.tenant, Rule: rule, Table: table, ID: id,
			Detail: fmt.Sprintf(format, args...), Fix: fix})
	}
}

// each streams query's rows to fn, reporting progress as it goes, and
// returns the number of rows.
func (r *ledgerRun) each(ctx context.Context, q store.ReadTx, step, query string, fn func(*sql.Rows) error) (int, error) {
	rows, err := q.Query(ctx, query, r.tenant)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", step, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if err := fn(rows); err != nil {
			return n, fmt.Errorf("%s: %w", step, err)
		}
		n++
		if r.Progress != nil && n%r.ProgressEvery == 0 {
			r.Progress(r.tenant, step, n)
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("%s: %w", step, err)
	}
	return n, nil
}

// fmtMoney formats minor units of currency code for a problem's detail.
func fmtMoney(minor int64, code string) string {
	if cur, ok := money.LookupCurrency(code); ok {
		return catalog.NewAmount(minor, cur).String() + " " + code
	}
	return fmt.Sprintf("%d minor units of %s", minor, code)
}

// sum is SUM(expr) as a bigint on both engines (PostgreSQL's SUM of a
// bigint is numeric).
func sum(expr string) string { return "CAST(SUM(" + expr + ") AS bigint)" }

const fixEntries = "Ledger entries are append-only: find the altered or missing entry (GET /subscriberaccount/{id}/entries), " +
	"restore it from a backup or the audit trail, and do not edit entries by hand"

func (r *ledgerRun) balances(ctx context.Context, q store.ReadTx) error {
	n, err := r.each(ctx, q, "accounts", `SELECT a.id, a.currency, COALESCE(e.total, 0), COALESCE(i.total, 0),
		COALESCE(c.total, 0), COALESCE(p.total, 0), COALESCE(it.charges, 0), COALESCE(it.allowances, 0)
		FROM subscriber_accounts a
		LEFT JOIN (SELECT account_id, `+sum("amount")+` AS total FROM account_entries WHERE tenant_id = $1 GROUP BY account_id) e
			ON e.account_id = a.id
		LEFT JOIN (SELECT account_id, `+sum("gross")+` AS total FROM invoices WHERE tenant_id = $1 GROUP BY account_id) i
			ON i.account_id = a.id
		LEFT JOIN (SELECT account_id, `+sum("applied")+` AS total FROM credit_notes WHERE tenant_id = $1 GROUP BY account_id) c
			ON c.account_id = a.id
		LEFT JOIN (SELECT account_id, `+sum("applied")+` AS total FROM payments WHERE tenant_id = $1 AND status = 'Succeeded'
			GROUP BY account_id) p ON p.account_id = a.id
		LEFT JOIN (SELECT account_id, `+sum("CASE WHEN kind = 'Charge' THEN remaining ELSE 0 END")+` AS charges,
			`+sum("CASE WHEN kind = 'Allowance' THEN remaining ELSE 0 END")+` AS allowances
			FROM account_items WHERE tenant_id = $1 GROUP BY account_id) it ON it.account_id = a.id
		WHERE a.tenant_id = $1 ORDER BY a.id`, func(rows *sql.Rows) error {
		var (
			id, code                                               string
			balance, invoiced, credited, paid, charges, allowances int64
		)
		if err := rows.Scan(&id, &code, &balance, &invoiced, &credited, &paid, &charges, &allowances); err != nil {
			return err
		}
		totals := billing.AccountTotals{Invoiced: invoiced, Credited: credited, Paid: paid, Charges: charges, Allowances: allowances}
		if want := totals.Balance(); balance != want {
			r.problem(RuleBalance, "subscriber_accounts", id, fixEntries,
				"balance (sum of entries) is %s but invoices %s − credit notes %s − payments %s + outstanding charges %s − available allowances %s = %s (off by %s)",
				fmtMoney(balance, code), fmtMoney(invoiced, code), fmtMoney(credited, code), fmtMoney(paid, code), fmtMoney(charges, code),
				fmtMoney(allowances, code), fmtMoney(want, code), fmtMoney(balance-want, code))
		}
		return nil
	})
	r.report.Accounts += n
	return err
}

func (r *ledgerRun) invoiceEntries(ctx context.Context, q store.ReadTx) error {
	// Invoice entries that do not match their invoice.
	_, err := r.each(ctx, q, "invoice entries", `SELECT e.id, e.amount, e.account_id, e.invoice_id, i.id, i.gross, i.account_id, i.currency
		FROM account_entries e LEFT JOIN invoices i ON i.tenant_id = e.tenant_id AND i.id = e.invoice_id
		WHERE e.tenant_id = $1 AND e.kind = 'Invoice'
			AND (i.id IS NULL OR e.amount <> i.gross OR e.account_id <> i.account_id)`, func(rows *sql.Rows) error {
		var (
			id, account                    string
			entryInvoice, invoice, invAcct sql.NullString
			code                           sql.NullString
			amount                         int64
			gross                          sql.NullInt64
		)
		if err := rows.Scan(&id, &amount, &account, &entryInvoice, &invoice, &gross, &invAcct, &code); err != nil {
			return err
		}
		switch {
		case !invoice.Valid:
			r.problem(RuleInvoiceEntry, "account_entries", id, fixEntries, "Invoice entry of %d minor units names no invoice (%s)",
				amount, entryInvoice.String)
		case amount != gross.Int64:
			r.problem(RuleInvoiceEntry, "account_entries", id, fixEntries, "Invoice entry is %s but invoice %s has gross %s",
				fmtMoney(amount, code.String), invoice.String, fmtMoney(gross.Int64, code.String))
		default:
			r.problem(RuleInvoiceEntry, "account_entries", id, fixEntries, "Invoice entry is on account %s but invoice %s is on account %s",
				account, invoice.String, invAcct.String)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Invoices without exactly one Invoice entry.
	_, err = r.each(ctx, q, "invoice entries", `SELECT i.id, i.invoice_number, COALESCE(e.n, 0)
		FROM invoices i LEFT JOIN (SELECT invoice_id, COUNT(*) AS n FROM account_entries
			WHERE tenant_id = $1 AND kind = 'Invoice' GROUP BY invoice_id) e ON e.invoice_id = i.id
		WHERE i.tenant_id = $1 AND COALESCE(e.n, 0) <> 1`, func(rows *sql.Rows) error {
		var (
			id      string
			number  int64
			entries int64
		)
		if err := rows.Scan(&id, &number, &entries); err != nil {
			return err
		}
		r.problem(RuleInvoiceEntry, "invoices", id, fixEntries, "invoice %d has %d Invoice ledger entries, want 1", number, entries)
		return nil
	})
	return err
}

const fixDemand = "A demand's amounts and statuses follow from its payments and credit notes: recompute them with the " +
	"settlement rule (docs/BILLING.md) from the payments and credit_notes rows, and find what changed the demand"

func (r *ledgerRun) demands(ctx context.Context, q store.ReadTx) error {
	n, err := r.each(ctx, q, "payment demands", `SELECT d.id, d.currency, d.amount, d.paid_amount, d.credited_amount, d.status,
		d.account_id, i.id, i.invoice_number, i.payment_demand_id, i.gross, i.status, i.account_id, COALESCE(n.cnt, 0),
		COALESCE(p.total, 0), COALESCE(c.total, 0)
		FROM payment_demands d
		LEFT JOIN invoices i ON i.tenant_id = d.tenant_id AND i.id = d.invoice_id
		LEFT JOIN (SELECT payment_demand_id, COUNT(*) AS cnt FROM invoices WHERE tenant_id = $1 GROUP BY payment_demand_id) n
			ON n.payment_demand_id = d.id
		LEFT JOIN (SELECT payment_demand_id, `+sum("applied")+` AS total FROM payments WHERE tenant_id = $1 AND status = 'Succeeded'
			GROUP BY payment_demand_id) p ON p.payment_demand_id = d.id
		LEFT JOIN (SELECT payment_demand_id, `+sum("applied")+` AS total FROM credit_notes WHERE tenant_id = $1
			GROUP BY payment_demand_id) c ON c.payment_demand_id = d.id
		WHERE d.tenant_id = $1 ORDER BY d.id`, func(rows *sql.Rows) error {
		var (
			id, code, status, account                   string
			amount, paid, credited, invoices, pays, cns int64
			inv, invDemand, invStatus, invAccount       sql.NullString
			number, gross                               sql.NullInt64
		)
		if err := rows.Scan(&id, &code, &amount, &paid, &credited, &status, &account, &inv, &number, &invDemand, &gross,
			&invStatus, &invAccount, &invoices, &pays, &cns); err != nil {
			return err
		}
		const fixInvoice = "Every demand has exactly one invoice issued with it in the same transaction: restore the missing or " +
			"altered row from a backup; never re-point invoices by hand"
		switch {
		case !inv.Valid:
			r.problem(RuleDemandInvoice, "payment_demands", id, fixInvoice, "its invoice does not exist")
		case invDemand.String != id:
			r.problem(RuleDemandInvoice, "payment_demands", id, fixInvoice, "its invoice %s (number %d) belongs to demand %s",
				inv.String, number.Int64, invDemand.String)
		case gross.Int64 != amount:
			r.problem(RuleDemandInvoice, "payment_demands", id, fixInvoice, "amount is %s but invoice %d has gross %s",
				fmtMoney(amount, code), number.Int64, fmtMoney(gross.Int64, code))
		case invAccount.String != account:
			r.problem(RuleDemandInvoice, "payment_demands", id, fixInvoice, "is on account %s but invoice %d is on account %s",
				account, number.Int64, invAccount.String)
		}
		if invoices != 1 {
			r.problem(RuleDemandInvoice, "payment_demands", id, fixInvoice, "%d invoices name this demand, want 1", invoices)
		}
		if paid != pays {
			r.problem(RuleDemandPaid, "payment_demands", id, fixDemand, "paid amount is %s but its succeeded payments applied %s",
				fmtMoney(paid, code), fmtMoney(pays, code))
		}
		if pays+cns > amount {
			r.problem(RuleSettledTwice, "payment_demands", id, "A demand is settled once: its payments and credit notes together "+
				"can reduce it by its amount at most, and what is beyond is a surplus booked as an allowance. Find the payment or credit "+
				"note recorded on the settled demand (GET /payment?paymentDemandId=, GET /creditnote?invoiceId=) and report the defect",
				"its payments applied %s and its credit notes %s, %s more than its amount %s", fmtMoney(pays, code), fmtMoney(cns, code),
				fmtMoney(pays+cns-amount, code), fmtMoney(amount, code))
		}
		if credited != cns {
			r.problem(RuleDemandCredit, "payment_demands", id, fixDemand, "credited amount is %s but its credit notes applied %s",
				fmtMoney(credited, code), fmtMoney(cns, code))
		}
		st := billing.Settlement{Amount: amount, Paid: paid, Credited: credited}
		if !st.Consistent() {
			r.problem(RuleStatus, "payment_demands", id, fixDemand, "paid %s + credited %s exceed the amount %s",
				fmtMoney(paid, code), fmtMoney(credited, code), fmtMoney(amount, code))
		}
		wantDemand, wantInvoice := st.Statuses()
		if status != wantDemand {
			r.problem(RuleStatus, "payment_demands", id, fixDemand, "status is %s but amount %s, paid %s, credited %s make it %s",
				status, fmtMoney(amount, code), fmtMoney(paid, code), fmtMoney(credited, code), wantDemand)
		}
		if inv.Valid && invStatus.String != wantInvoice {
			r.problem(RuleStatus, "invoices", inv.String, fixDemand, "invoice %d status is %s but its demand %s makes it %s",
				number.Int64, invStatus.String, id, wantInvoice)
		}
		return nil
	})
	r.report.Demands += n
	return err
}

// orphanInvoices finds invoices whose demand does not point back at them.
func (r *ledgerRun) orphanInvoices(ctx context.Context, q store.ReadTx) error {
	n, err := r.each(ctx, q, "invoices", `SELECT i.id, i.invoice_number, i.payment_demand_id, d.invoice_id
		FROM invoices i LEFT JOIN payment_demands d ON d.tenant_id = i.tenant_id AND d.id = i.payment_demand_id
		WHERE i.tenant_id = $1 ORDER BY i.id`, func(rows *sql.Rows) error {
		var (
			id, demand string
			number     int64
			back       sql.NullString
		)
		if err := rows.Scan(&id, &number, &demand, &back); err != nil {
			return err
		}
		const fix = "An invoice is issued with its demand in one transaction: restore the demand from a backup"
		switch {
		case !back.Valid:
			r.problem(RuleDemandInvoice, "invoices", id, fix, "invoice %d names payment demand %s, which does not exist", number, demand)
		case back.String != id:
			r.problem(RuleDemandInvoice, "invoices", id, fix, "invoice %d names payment demand %s, whose invoice is %s", number, demand, back.String)
		}
		return nil
	})
	r.report.Invoices += n
	return err
}

func (r *ledgerRun) items(ctx context.Context, q store.ReadTx) error {
	n, err := r.each(ctx, q, "account items", `SELECT it.id, it.kind, it.amount, it.remaining, a.currency,
		COALESCE(u.billed, 0), COALESCE(u.applied, 0), COALESCE(u.charged, 0), COALESCE(u.allowed, 0)
		FROM account_items it
		JOIN subscriber_accounts a ON a.tenant_id = it.tenant_id AND a.id = it.account_id
		LEFT JOIN (SELECT item_id,
			`+sum("CASE WHEN kind = 'ChargeInvoiced' THEN -amount ELSE 0 END")+` AS billed,
			`+sum("CASE WHEN kind = 'AllowanceApplied' THEN amount ELSE 0 END")+` AS applied,
			`+sum("CASE WHEN kind = 'Charge' THEN amount ELSE 0 END")+` AS charged,
			`+sum("CASE WHEN kind = 'Allowance' THEN -amount ELSE 0 END")+` AS allowed
			FROM account_entries WHERE tenant_id = $1 AND item_id IS NOT NULL GROUP BY item_id) u ON u.item_id = it.id
		WHERE it.tenant_id = $1 ORDER BY it.id`, func(rows *sql.Rows) error {
		var (
			id, kind, code                                       string
			amount, remaining, billed, applied, charged, allowed int64
		)
		if err := rows.Scan(&id, &kind, &amount, &remaining, &code, &billed, &applied, &charged, &allowed); err != nil {
			return err
		}
		booked, used, wrong := charged, billed, applied+allowed
		if kind == billing.ItemAllowance {
			booked, used, wrong = allowed, applied, billed+charged
		}
		const fix = "An item's remaining amount is its amount less what invoices billed or applied (ChargeInvoiced/" +
			"AllowanceApplied entries): compare the item with the invoice lines that name it and restore the altered row"
		if booked != amount {
			r.problem(RuleItemRemaining, "account_items", id, fixEntries, "%s of %s has booking entries of %s", kind,
				fmtMoney(amount, code), fmtMoney(booked, code))
		}
		if wrong != 0 {
			r.problem(RuleItemRemaining, "account_items", id, fixEntries, "%s has entries of the other kind of item", kind)
		}
		if remaining != amount-used {
			r.problem(RuleItemRemaining, "account_items", id, fix, "%s of %s has %s remaining but invoices used %s (want %s remaining)",
				kind, fmtMoney(amount, code), fmtMoney(remaining, code), fmtMoney(used, code), fmtMoney(amount-used, code))
		}
		return nil
	})
	r.report.Items += n
	return err
}

func (r *ledgerRun) payments(ctx context.Context, q store.ReadTx) error {
	n, err := r.each(ctx, q, "payments", `SELECT p.id, p.status, p.applied, p.surplus, p.currency, p.account_id,
		COALESCE(e.n, 0), COALESCE(e.total, 0), it.id, it.kind, it.amount
		FROM payments p
		LEFT JOIN (SELECT payment_id, COUNT(*) AS n, `+sum("amount")+` AS total
			FROM account_entries WHERE tenant_id = $1 AND payment_id IS NOT NULL GROUP BY payment_id) e ON e.payment_id = p.id
		LEFT JOIN account_items it ON it.tenant_id = p.tenant_id AND it.id = p.allowance_item_id
		WHERE p.tenant_id = $1 ORDER BY p.id`, func(rows *sql.Rows) error {
		var (
			id, status, code, account  string
			applied, surplus, n, total int64
			item, kind                 sql.NullString
			itemAmount                 sql.NullInt64
		)
		if err := rows.Scan(&id, &status, &applied, &surplus, &code, &account, &n, &total, &item, &kind, &itemAmount); err != nil {
			return err
		}
		wantN := int64(0)
		if applied > 0 {
			wantN = 1
		}
		if n != wantN || total != -applied {
			r.problem(RulePaymentEntry, "payments", id, fixEntries, "%s payment applied %s but has %d Payment entries totalling %s",
				status, fmtMoney(applied, code), n, fmtMoney(total, code))
		}
		if surplus > 0 && (!item.Valid || kind.String != billing.ItemAllowance || itemAmount.Int64 != surplus) {
			r.problem(RulePaymentEntry, "payments", id, "The surplus of an overpayment is booked as an allowance of the same amount: "+
				"restore the allowance (allowance_item_id) from a backup", "surplus %s has no allowance of that amount", fmtMoney(surplus, code))
		}
		return nil
	})
	r.report.Payments += n
	if err != nil {
		return err
	}
	// Payment entries must name their payment.
	_, err = r.each(ctx, q, "payment entries", `SELECT e.id, e.amount FROM account_entries e
		LEFT JOIN payments p ON p.tenant_id = e.tenant_id AND p.id = e.payment_id
		WHERE e.tenant_id = $1 AND ((e.kind = 'Payment' AND p.id IS NULL) OR (e.payment_id IS NOT NULL AND e.kind <> 'Payment')
			OR (p.id IS NOT NULL AND p.account_id <> e.account_id))`, func(rows *sql.Rows) error {
		var (
			id     string
			amount int64
		)
		if err := rows.Scan(&id, &amount); err != nil {
			return err
		}
		r.problem(RulePaymentEntry, "account_entries", id, fixEntries,
			"entry of %d minor units does not match a payment of its account (Payment entries name their payment)", amount)
		return nil
	})
	return err
}

// credits checks that no invoice is credited beyond what it billed: per
// invoice line, what its credit notes took is at most the line's gross,
// and only positive lines are credited. A surplus credit note does not
// unbalance the ledger (its surplus is an allowance, entered as one), so
// only this rule sees money credited out of nothing.
// credits checks what each invoice has given back: per line, what its
// credit notes took is at most the line's gross (positive lines only); in
// all, its credit notes and the unused-days allowances cancellations
// booked for it (source Proration) are at most what the invoice can be
// credited (its positive lines). The notes and allowances come in one
// stream ordered by invoice, so memory is one invoice's.
func (r *ledgerRun) credits(ctx context.Context, q store.ReadTx) error {
	type invoiceCredits struct {
		id, code   string
		number     int64
		lines      []billing.Line
		per        map[int]int64
		total      int64
		notes      int
		allowances int
		allowed    int64
	}
	var cur *invoiceCredits
	flush := func() {
		if cur == nil {
			return
		}
		var over []string
		creditable := int64(0)
		gross := map[int]int64{}
		for _, l := range cur.lines {
			gross[l.LineNumber] = l.Gross.Minor
			if l.Gross.Minor > 0 {
				creditable += l.Gross.Minor
			}
		}
		for _, l := range cur.lines {
			if c := cur.per[l.LineNumber]; c > max(l.Gross.Minor, 0) {
				over = append(over, fmt.Sprintf("line %d of %s credited %s", l.LineNumber, fmtMoney(l.Gross.Minor, cur.code), fmtMoney(c, cur.code)))
			}
		}
		for n, c := range cur.per {
			if _, ok := gross[n]; !ok {
				over = append(over, fmt.Sprintf("line %d, which the invoice does not have, credited %s", n, fmtMoney(c, cur.code)))
			}
		}
		slices.Sort(over)
		switch {
		case cur.allowances > 0 && cur.total+cur.allowed > creditable:
			over = append([]string{fmt.Sprintf("%s by %d credit notes and %s by %d unused-days allowances of a cancellation",
				fmtMoney(cur.total, cur.code), cur.notes, fmtMoney(cur.allowed, cur.code), cur.allowances)}, over...)
			r.problem(RuleOverCredit, "invoices", cur.id, "Credit notes and allowances are never deleted: find the credit notes "+
				"(GET /creditnote?invoiceId=) and the unused-days allowances (account items with source Proration and this invoice) "+
				"that give back the same days, take the surplus back with a charge on the subscriber account, and report how they "+
				"were issued",
				"invoice %d is given back %s but can be given back %s at most (%s)", cur.number,
				fmtMoney(cur.total+cur.allowed, cur.code), fmtMoney(creditable, cur.code), strings.Join(over, "; "))
		case len(over) > 0:
			r.problem(RuleOverCredit, "invoices", cur.id, "Credit notes are never deleted: find the surplus ones (GET /creditnote?invoiceId=) "+
				"and the allowances their surplus booked, take the money back with a charge on the subscriber account, and report how "+
				"the notes were issued",
				"invoice %d is credited %s by %d credit notes but can be credited %s at most (%s)", cur.number,
				fmtMoney(cur.total, cur.code), cur.notes, fmtMoney(creditable, cur.code), strings.Join(over, "; "))
		}
		cur = nil
	}
	_, err := r.each(ctx, q, "credit notes", `SELECT i.id, i.invoice_number, i.currency, i.lines, c.lines, 0
		FROM credit_notes c JOIN invoices i ON i.tenant_id = c.tenant_id AND i.id = c.invoice_id
		WHERE c.tenant_id = $1
		UNION ALL
		SELECT i.id, i.invoice_number, i.currency, i.lines, '', it.amount
		FROM account_items it JOIN invoices i ON i.tenant_id = it.tenant_id AND i.id = it.source_id
		WHERE it.tenant_id = $1 AND it.source_kind = 'Proration' AND it.kind = 'Allowance'
		ORDER BY 1`, func(rows *sql.Rows) error {
		var (
			id, code, invLines, noteLines string
			number, allowance             int64
		)
		if err := rows.Scan(&id, &number, &code, &invLines, &noteLines, &allowance); err != nil {
			return err
		}
		if cur == nil || cur.id != id {
			flush()
			cur = &invoiceCredits{id: id, code: code, number: number, per: map[int]int64{}}
			if err := json.Unmarshal([]byte(invLines), &cur.lines); err != nil {
				return fmt.Errorf("invoice %s lines: %w", id, err)
			}
		}
		if noteLines == "" {
			cur.allowed += allowance
			cur.allowances++
			return nil
		}
		var lines []billing.CreditLine
		if err := json.Unmarshal([]byte(noteLines), &lines); err != nil {
			return fmt.Errorf("credit note of invoice %s: lines: %w", id, err)
		}
		for _, l := range lines {
			cur.per[l.InvoiceLineNumber] += l.Gross.Minor
			cur.total += l.Gross.Minor
		}
		cur.notes++
		return nil
	})
	flush()
	return err
}

// creditEntries checks every credit note's ledger entry and surplus, as
// payments does for payments.
func (r *ledgerRun) creditEntries(ctx context.Context, q store.ReadTx) error {
	_, err := r.each(ctx, q, "credit note entries", `SELECT c.id, c.credit_note_number, c.currency, c.applied, c.surplus,
		COALESCE(e.n, 0), COALESCE(e.total, 0), it.kind, it.amount
		FROM credit_notes c
		LEFT JOIN (SELECT credit_note_id, COUNT(*) AS n, `+sum("amount")+` AS total
			FROM account_entries WHERE tenant_id = $1 AND credit_note_id IS NOT NULL GROUP BY credit_note_id) e ON e.credit_note_id = c.id
		LEFT JOIN account_items it ON it.tenant_id = c.tenant_id AND it.id = c.allowance_item_id
		WHERE c.tenant_id = $1 ORDER BY c.id`, func(rows *sql.Rows) error {
		var (
			id, code                           string
			number, applied, surplus, n, total int64
			kind                               sql.NullString
			itemAmount                         sql.NullInt64
		)
		if err := rows.Scan(&id, &number, &code, &applied, &surplus, &n, &total, &kind, &itemAmount); err != nil {
			return err
		}
		wantN := int64(0)
		if applied > 0 {
			wantN = 1
		}
		if n != wantN || total != -applied {
			r.problem(RuleCreditEntry, "credit_notes", id, fixEntries, "credit note %d applied %s but has %d CreditNote entries totalling %s",
				number, fmtMoney(applied, code), n, fmtMoney(total, code))
		}
		if surplus > 0 && (!kind.Valid || kind.String != billing.ItemAllowance || itemAmount.Int64 != surplus) {
			r.problem(RuleCreditEntry, "credit_notes", id, "The surplus of a credit note is booked as an allowance of the same amount: "+
				"restore the allowance (allowance_item_id) from a backup", "credit note %d: surplus %s has no allowance of that amount",
				number, fmtMoney(surplus, code))
		}
		return nil
	})
	return err
}

// ItemSource is a wing's table of documents that book account items
// (an Autogiro debit paid back books a charge): the ledger check's
// itemSources rule reads it beside the store's own documents (credit
// notes, payments, reminders), so the rule holds for the wing's items
// without the store naming its tables. Its items' accounts follow from
// their invoices: the table names no account.
type ItemSource struct {
	Kind     string // the items' account_items.source_kind
	Table    string // the documents' table (tenant-owned: tenant_id)
	Column   string // its column naming the item
	Amount   string // its column holding the item's amount
	ItemKind string // what such an item is: billing.ItemCharge or billing.ItemAllowance
}

var itemSourceTables struct {
	sync.Mutex
	list []ItemSource
}

// RegisterItemSource adds a wing's document table to the ledger check
// (ItemSource); the wing calls it from an init function, so every
// binary that links the wing checks its items. Without it such items are
// reported as of a source kind Kadens does not book.
func RegisterItemSource(t ItemSource) {
	itemSourceTables.Lock()
	defer itemSourceTables.Unlock()
	itemSourceTables.list = append(itemSourceTables.list, t)
}

func registeredItemSources() []ItemSource {
	itemSourceTables.Lock()
	defer itemSourceTables.Unlock()
	return slices.Clone(itemSourceTables.list)
}

// itemSources checks that every charge and allowance was booked by a
// document that names it back with the same amount (docs/BILLING.md,
// "Ledger check"): an item without one is money from nothing. A Manual
// item (booked through the API) has no document to check. The wings'
// documents come from RegisterItemSource.
func (r *ledgerRun) itemSources(ctx context.Context, q store.ReadTx) error {
	named := func(table, column, amount string) string {
		return `LEFT JOIN (SELECT ` + column + ` AS item_id, COUNT(*) AS n, MIN(CAST(id AS text)) AS doc, ` + sum(amount) +
			` AS amount, MIN(` + accountColumn(table) + `) AS account FROM ` + table + ` WHERE tenant_id = $1 AND ` + column + ` IS NOT NULL GROUP BY ` + column + `)`
	}
	wings := registeredItemSources()
	var wingColumns, wingJoins strings.Builder
	for i, w := range wings {
		x := "x" + strconv.Itoa(i)
		fmt.Fprintf(&wingColumns, ", COALESCE(%[1]s.n, 0), %[1]s.doc, %[1]s.amount", x)
		wingJoins.WriteString("\n\t\t" + named(w.Table, w.Column, w.Amount) + " " + x + " ON " + x + ".item_id = it.id")
	}
	// One set of scan targets for every row (Scan overwrites them all).
	var (
		id, kind, account, code                   string
		source, sourceID, invoice, invoiceAccount sql.NullString
		amount, cn, pn, rn                        int64
		cDoc, cAccount, pDoc, pAccount, rDoc      sql.NullString
		cAmount, pAmount, rAmount                 sql.NullInt64
		wn                                        = make([]int64, len(wings))
		wDoc                                      = make([]sql.NullString, len(wings))
		wAmount                                   = make([]sql.NullInt64, len(wings))
	)
	dest := []any{&id, &kind, &amount, &account, &code, &source, &sourceID, &cn, &cDoc, &cAmount, &cAccount,
		&pn, &pDoc, &pAmount, &pAccount, &rn, &rDoc, &rAmount, &invoice, &invoiceAccount}
	for i := range wings {
		dest = append(dest, &wn[i], &wDoc[i], &wAmount[i])
	}
	// The documents that name the item, by source kind.
	type namedBy struct {
		kind string
		n    *int64
	}
	docs := []namedBy{{store.ItemSourceCreditNote, &cn}, {store.ItemSourcePayment, &pn}, {store.ItemSourceReminder, &rn}}
	for i, w := range wings {
		docs = append(docs, namedBy{w.Kind, &wn[i]})
	}
	_, err := r.each(ctx, q, "account item sources", `SELECT it.id, it.kind, it.amount, it.account_id, a.currency, it.source_kind, it.source_id,
		COALESCE(c.n, 0), c.doc, c.amount, c.account, COALESCE(p.n, 0), p.doc, p.amount, p.account,
		COALESCE(rm.n, 0), rm.doc, rm.amount, inv.id, inv.account_id`+wingColumns.String()+`
		FROM account_items it
		JOIN subscriber_accounts a ON a.tenant_id = it.tenant_id AND a.id = it.account_id
		`+named("credit_notes", "allowance_item_id", "surplus")+` c ON c.item_id = it.id
		`+named("payments", "allowance_item_id", "surplus")+` p ON p.item_id = it.id
		`+named("reminders", "fee_item_id", "fee")+` rm ON rm.item_id = it.id`+wingJoins.String()+`
		LEFT JOIN invoices inv ON it.source_kind = 'Proration' AND inv.tenant_id = it.tenant_id AND inv.id = it.source_id
		WHERE it.tenant_id = $1 ORDER BY it.id`, func(rows *sql.Rows) error {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		const fix = "Every charge and allowance is booked by a document (docs/BILLING.md, \"Ledger check\"): find what inserted " +
			"this item (account_items.source_kind, source_id); if nothing entitles the subscriber to it, take it back with the " +
			"opposite item booked through the API"
		bad := func(format string, args ...any) {
			r.problem(RuleItemSource, "account_items", id, fix, "%s of %s: "+format, append([]any{kind, fmtMoney(amount, code)}, args...)...)
		}
		for _, d := range docs {
			if *d.n > 0 && d.kind != source.String {
				bad("%d %s documents name it, but its source is %q", *d.n, d.kind, source.String)
			}
		}
		// one checks the one document of the item's source kind.
		one := func(n int64, doc sql.NullString, docAmount sql.NullInt64, docAccount sql.NullString, wantKind string) {
			switch {
			case kind != wantKind:
				bad("a %s source books an item of kind %s", source.String, wantKind)
			case n != 1 || !doc.Valid || doc.String != sourceID.String:
				bad("its source is %s %s, but %d such documents name it", source.String, sourceID.String, n)
			case docAmount.Int64 != amount:
				bad("its source %s %s is for %s", source.String, sourceID.String, fmtMoney(docAmount.Int64, code))
			case docAccount.Valid && docAccount.String != account:
				bad("its source %s %s is on account %s", source.String, sourceID.String, docAccount.String)
			}
		}
		switch source.String {
		case store.ItemSourceManual:
		case store.ItemSourceCreditNote:
			one(cn, cDoc, cAmount, cAccount, billing.ItemAllowance)
		case store.ItemSourcePayment:
			one(pn, pDoc, pAmount, pAccount, billing.ItemAllowance)
		case store.ItemSourceReminder:
			one(rn, rDoc, rAmount, sql.NullString{}, billing.ItemCharge)
		case store.ItemSourceProration:
			switch {
			case kind != billing.ItemAllowance:
				bad("a Proration source books an item of kind %s", billing.ItemAllowance)
			case !invoice.Valid:
				bad("its source is invoice %s, which does not exist", sourceID.String)
			case invoiceAccount.String != account:
				bad("its source, invoice %s, is on account %s", invoice.String, invoiceAccount.String)
			}
		case store.ItemSourceBinding:
			if kind != billing.ItemCharge {
				bad("a Binding source books an item of kind %s", billing.ItemCharge)
			}
		case "":
			bad("it has no source document")
		default:
			for i, w := range wings {
				if w.Kind == source.String {
					one(wn[i], wDoc[i], wAmount[i], sql.NullString{}, w.ItemKind)
					return nil
				}
			}
			bad("its source kind %q is none Kadens books", source.String)
		}
		return nil
	})
	return err
}

// accountColumn is the column of table naming the subscriber account, or
// NULL for tables that do not name one (reminders and the wings' tables:
// their items' accounts follow from the invoice).
func accountColumn(table string) string {
	switch table {
	case "credit_notes", "payments":
		return "CAST(account_id AS text)"
	}
	return "CAST(NULL AS text)"
}

// entrySources checks that every entry names the document or item of its
// kind, on its own account (Invoice and Payment entries are checked by
// invoiceEntries and payments).
func (r *ledgerRun) entrySources(ctx context.Context, q store.ReadTx) error {
	_, err := r.each(ctx, q, "entry sources", `SELECT e.id, e.kind, e.amount FROM account_entries e
		LEFT JOIN credit_notes c ON c.tenant_id = e.tenant_id AND c.id = e.credit_note_id
		LEFT JOIN account_items it ON it.tenant_id = e.tenant_id AND it.id = e.item_id
		WHERE e.tenant_id = $1 AND (
			(e.kind = 'CreditNote' AND (c.id IS NULL OR c.account_id <> e.account_id))
			OR (e.credit_note_id IS NOT NULL AND e.kind <> 'CreditNote')
			OR (e.kind IN ('Charge', 'Allowance', 'ChargeInvoiced', 'AllowanceApplied') AND (it.id IS NULL OR it.account_id <> e.account_id))
			OR (e.item_id IS NOT NULL AND e.kind NOT IN ('Charge', 'Allowance', 'ChargeInvoiced', 'AllowanceApplied')))
		ORDER BY e.id`, func(rows *sql.Rows) error {
		var (
			id, kind string
			amount   int64
		)
		if err := rows.Scan(&id, &kind, &amount); err != nil {
			return err
		}
		r.problem(RuleEntrySource, "account_entries", id, fixEntries,
			"%s entry of %d minor units names no credit note or account item of its kind on its account", kind, amount)
		return nil
	})
	return err
}
