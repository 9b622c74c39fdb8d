package bookkeeping

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// ErrNoChart: the organization has no chart, so it keeps no books in
// Kadens and its documents post nothing.
var ErrNoChart = errors.New("bookkeeping: the organization has no chart of accounts")

// SetChart validates and stores an organization's chart, replacing the
// one it had.
func SetChart(ctx context.Context, st *store.Store, orgID string, c Chart, now time.Time) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if _, err := st.Organization(ctx, orgID); err != nil {
		return fmt.Errorf("bookkeeping: chart of %s: %w", orgID, err)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO books_charts (tenant_id, organization_id, chart, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (tenant_id, organization_id) DO UPDATE SET chart = excluded.chart, updated_at = excluded.updated_at`,
			tx.TenantID(), orgID, string(raw), store.TimeParam(now))
		if err != nil {
			return fmt.Errorf("bookkeeping: set chart: %w", err)
		}
		return nil
	})
}

// GetChart reads an organization's chart (ErrNoChart when it has none).
func GetChart(ctx context.Context, st *store.Store, orgID string) (Chart, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Chart{}, err
	}
	return chartOf(ctx, st.Writer(), tenant, orgID)
}

type rowQuerier interface {
	QueryRow(ctx context.Context, query string, args ...any) *sql.Row
}

func chartOf(ctx context.Context, q rowQuerier, tenant, orgID string) (Chart, error) {
	var raw string
	err := q.QueryRow(ctx, `SELECT chart FROM books_charts WHERE tenant_id = $1 AND organization_id = $2`, tenant, orgID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return Chart{}, ErrNoChart
	}
	if err != nil {
		return Chart{}, fmt.Errorf("bookkeeping: read chart: %w", err)
	}
	var c Chart
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return Chart{}, fmt.Errorf("bookkeeping: chart of %s: %w", orgID, err)
	}
	return c, nil
}

// posted says whether the source document has its entry already.
func posted(ctx context.Context, tx *store.Tx, orgID, kind, id string) (bool, error) {
	var n int
	err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM books_entries WHERE tenant_id = $1 AND organization_id = $2
		AND source_kind = $3 AND source_id = $4`, tx.TenantID(), orgID, kind, id).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("bookkeeping: posted: %w", err)
	}
	return n > 0, nil
}

// openDate is the first day on or after date of an open period: date
// itself when its month is open, else the first day of the first open
// month after it, with a note saying so.
func openDate(ctx context.Context, tx *store.Tx, orgID, date string) (string, string, error) {
	rows, err := tx.Query(ctx, `SELECT month FROM books_closed_periods WHERE tenant_id = $1 AND organization_id = $2
		AND month >= $3 ORDER BY month`, tx.TenantID(), orgID, date[:7])
	if err != nil {
		return "", "", fmt.Errorf("bookkeeping: closed periods: %w", err)
	}
	defer rows.Close()
	closed := map[string]bool{}
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return "", "", err
		}
		closed[m] = true
	}
	if err := rows.Err(); err != nil {
		return "", "", err
	}
	if !closed[date[:7]] {
		return date, "", nil
	}
	t, _ := time.Parse(time.DateOnly, date[:7]+"-01")
	for closed[t.Format("2006-01")] {
		t = t.AddDate(0, 1, 0)
	}
	moved := t.Format(time.DateOnly)
	return moved, fmt.Sprintf("dated %s in the closed period %s; posted in the first open period", date, date[:7]), nil
}

// insertEntry checks the entry balances, dates it into an open period,
// takes its number from the journal's gap-free series and writes it. A
// concurrent posting of the same document loses on the unique source key
// (ErrPosted), rolling back its number with it.
func insertEntry(ctx context.Context, tx *store.Tx, e *Entry, now time.Time) error {
	if err := e.balanced(); err != nil {
		return err
	}
	date, note, err := openDate(ctx, tx, e.OrganizationID, e.Date)
	if err != nil {
		return err
	}
	e.Date, e.Note = date, note
	n, err := tx.ReserveNumbers(ctx, "books:"+e.OrganizationID+":"+e.Journal, 1)
	if err != nil {
		return err
	}
	e.ID, e.Number, e.PostedAt = store.NewID(), n, now.UTC().Truncate(time.Microsecond)
	if _, err := tx.Exec(ctx, `INSERT INTO books_entries (id, tenant_id, organization_id, journal, number, accounting_date,
		source_kind, source_id, description, note, posted_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		e.ID, tx.TenantID(), e.OrganizationID, e.Journal, e.Number, e.Date, e.SourceKind, e.SourceID, e.Description, e.Note,
		store.TimeParam(e.PostedAt)); err != nil {
		if store.IsUniqueViolation(err) {
			return ErrPosted
		}
		return fmt.Errorf("bookkeeping: insert entry: %w", err)
	}
	rows := make([][]any, len(e.Lines))
	for i, l := range e.Lines {
		rows[i] = []any{tx.TenantID(), e.ID, i + 1, l.Account, l.Amount, l.Currency, l.VATRate, l.TaxCode, l.ProductID, l.CustomerID}
	}
	if len(rows) > 0 {
		if err := tx.InsertRows(ctx, "books_lines", "tenant_id, entry_id, line_no, account, amount, currency, vat_rate, tax_code, product_id, customer_id", rows, ""); err != nil {
			return fmt.Errorf("bookkeeping: insert lines: %w", err)
		}
	}
	return nil
}

// ErrPosted: the document has its entry already (a redelivery).
var ErrPosted = errors.New("bookkeeping: posted already")

func insertDeferrals(ctx context.Context, tx *store.Tx, orgID string, defs []deferral) error {
	for _, d := range defs {
		if _, err := tx.Exec(ctx, `INSERT INTO books_deferrals (tenant_id, organization_id, invoice_id, line_number, product_id,
			vat_rate, currency, revenue_account, deferred_account, start_date, end_date, amount, recognized, reversed, next_date)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 0, 0, $10)`, tx.TenantID(), orgID, d.InvoiceID, d.Line,
			d.ProductID, d.VATRate, d.Currency, d.RevenueAccount, d.DeferredAccount, d.Start, d.End, d.Amount); err != nil {
			return fmt.Errorf("bookkeeping: insert deferral: %w", err)
		}
	}
	return nil
}

const deferralColumns = `invoice_id, line_number, product_id, vat_rate, currency, revenue_account, deferred_account,
	start_date, end_date, amount, recognized, reversed, next_date`

func scanDeferral(r store.Scanner) (deferral, error) {
	var d deferral
	err := r.Scan(&d.InvoiceID, &d.Line, &d.ProductID, &d.VATRate, &d.Currency, &d.RevenueAccount, &d.DeferredAccount,
		&d.Start, &d.End, &d.Amount, &d.Recognized, &d.Reversed, &d.Next)
	return d, err
}

// updateDeferral writes d's progress, guarded by the state it was read
// in, so two runs at once cannot both move the same days.
func updateDeferral(ctx context.Context, tx *store.Tx, d deferral, was deferral) error {
	res, err := tx.Exec(ctx, `UPDATE books_deferrals SET recognized = $4, reversed = $5, next_date = $6
		WHERE tenant_id = $1 AND invoice_id = $2 AND line_number = $3 AND recognized = $7 AND reversed = $8 AND next_date = $9`,
		tx.TenantID(), d.InvoiceID, d.Line, d.Recognized, d.Reversed, d.Next, was.Recognized, was.Reversed, was.Next)
	if err != nil {
		return fmt.Errorf("bookkeeping: update deferral: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("bookkeeping: deferral of invoice %s line %d changed meanwhile: %w", d.InvoiceID, d.Line, store.ErrConflict)
	}
	return nil
}

// ClosePeriod closes (or, with open, reopens) an organization's month
// (YYYY-MM).
func ClosePeriod(ctx context.Context, st *store.Store, orgID, month string, open bool, now time.Time) error {
	if _, err := time.Parse("2006-01", month); err != nil || len(month) != 7 {
		return fmt.Errorf("bookkeeping: month %q is not YYYY-MM", month)
	}
	return st.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if open {
			_, err = tx.Exec(ctx, `DELETE FROM books_closed_periods WHERE tenant_id = $1 AND organization_id = $2 AND month = $3`,
				tx.TenantID(), orgID, month)
		} else {
			_, err = tx.Exec(ctx, `INSERT INTO books_closed_periods (tenant_id, organization_id, month, closed_at)
				VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, organization_id, month) DO NOTHING`, tx.TenantID(), orgID, month, store.TimeParam(now))
		}
		if err != nil {
			return fmt.Errorf("bookkeeping: period %s: %w", month, err)
		}
		return nil
	})
}

// Entries lists an organization's entries with accounting dates in
// [from, to] (inclusive dates; empty for open ends), in journal and
// number order, lines included.
func Entries(ctx context.Context, st *store.Store, orgID, from, to string) ([]Entry, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	if from == "" {
		from = "0000-00-00"
	}
	if to == "" {
		to = "9999-99-99"
	}
	rows, err := st.Reader().Query(ctx, `SELECT e.id, e.journal, e.number, e.accounting_date, e.source_kind, e.source_id,
		e.description, e.note, l.account, l.amount, l.currency, l.vat_rate, l.tax_code, l.product_id, l.customer_id
		FROM books_entries e JOIN books_lines l ON l.entry_id = e.id
		WHERE e.tenant_id = $1 AND e.organization_id = $2 AND e.accounting_date >= $3 AND e.accounting_date <= $4
		ORDER BY e.journal, e.number, l.line_no`, tenant, orgID, from, to)
	if err != nil {
		return nil, fmt.Errorf("bookkeeping: entries: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var l Line
		if err := rows.Scan(&e.ID, &e.Journal, &e.Number, &e.Date, &e.SourceKind, &e.SourceID, &e.Description, &e.Note,
			&l.Account, &l.Amount, &l.Currency, &l.VATRate, &l.TaxCode, &l.ProductID, &l.CustomerID); err != nil {
			return nil, err
		}
		if n := len(out); n == 0 || out[n-1].ID != e.ID {
			e.OrganizationID = orgID
			out = append(out, e)
		}
		out[len(out)-1].Lines = append(out[len(out)-1].Lines, l)
	}
	return out, rows.Err()
}
