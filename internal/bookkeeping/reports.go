package bookkeeping

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// DeferredBalance is what the organization's unearned revenue account
// holds at the end of date at (a credit balance, positive), per currency.
func DeferredBalance(ctx context.Context, st *store.Store, orgID, at string) (map[string]int64, error) {
	c, err := GetChart(ctx, st, orgID)
	if err != nil {
		return nil, err
	}
	tenant, _ := tenancy.From(ctx)
	rows, err := st.Reader().Query(ctx, `SELECT l.currency, COALESCE(SUM(l.amount), 0) FROM books_entries e
		JOIN books_lines l ON l.entry_id = e.id
		WHERE e.tenant_id = $1 AND e.organization_id = $2 AND e.accounting_date <= $3 AND l.account = $4
		GROUP BY l.currency`, tenant, orgID, at, c.DeferredAccount)
	if err != nil {
		return nil, fmt.Errorf("bookkeeping: deferred balance: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var cur string
		var sum int64
		if err := rows.Scan(&cur, &sum); err != nil {
			return nil, err
		}
		out[cur] = -sum
	}
	return out, rows.Err()
}

// RevenueRow is revenue of one month, product and VAT rate.
type RevenueRow struct {
	Month     string `json:"month"`
	ProductID string `json:"productId"`
	VATRate   string `json:"vatRate"`
	Currency  string `json:"currency"`
	Amount    int64  `json:"amountMinor" description:"Minor units of the currency; credits to revenue positive."`
}

// RevenueByMonth sums the revenue accounts' postings (credits positive)
// by month × product × VAT rate, dates in [from, to].
func RevenueByMonth(ctx context.Context, st *store.Store, orgID, from, to string) ([]RevenueRow, error) {
	c, err := GetChart(ctx, st, orgID)
	if err != nil {
		return nil, err
	}
	tenant, _ := tenancy.From(ctx)
	rows, err := st.Reader().Query(ctx, `SELECT SUBSTR(e.accounting_date, 1, 7), l.account, l.product_id, l.vat_rate, l.currency,
		SUM(l.amount) FROM books_entries e JOIN books_lines l ON l.entry_id = e.id
		WHERE e.tenant_id = $1 AND e.organization_id = $2 AND e.accounting_date >= $3 AND e.accounting_date <= $4
		GROUP BY SUBSTR(e.accounting_date, 1, 7), l.account, l.product_id, l.vat_rate, l.currency
		ORDER BY 1, 3, 4, 5`, tenant, orgID, from, to)
	if err != nil {
		return nil, fmt.Errorf("bookkeeping: revenue: %w", err)
	}
	defer rows.Close()
	var out []RevenueRow
	for rows.Next() {
		var r RevenueRow
		var account string
		var sum int64
		if err := rows.Scan(&r.Month, &account, &r.ProductID, &r.VATRate, &r.Currency, &sum); err != nil {
			return nil, err
		}
		if a, ok := c.account(account); !ok || a.Type != Revenue {
			continue
		}
		r.Amount = -sum
		if n := len(out); n > 0 && out[n-1].Month == r.Month && out[n-1].ProductID == r.ProductID &&
			out[n-1].VATRate == r.VATRate && out[n-1].Currency == r.Currency {
			out[n-1].Amount += r.Amount
			continue
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Reconciliation compares the ledger with the documents it was posted
// from; every difference must be zero.
type Reconciliation struct {
	// Receivable: the customers' account against invoices − credit notes −
	// payments received.
	ReceivableLedger, ReceivableDocuments int64
	// VAT: the output VAT accounts against the documents' VAT.
	VATLedger, VATDocuments int64
	// Net: revenue + unearned revenue against the documents' net.
	NetLedger, NetDocuments int64
	// Unposted counts documents without an entry.
	Unposted int64
}

// Differences is the sum of the absolute differences and the unposted
// documents: zero when the books agree with the documents.
func (r Reconciliation) Differences() int64 {
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	return abs(r.ReceivableLedger-r.ReceivableDocuments) + abs(r.VATLedger-r.VATDocuments) + abs(r.NetLedger-r.NetDocuments) + r.Unposted
}

// Reconcile computes the reconciliation of an organization in one read
// snapshot.
func Reconcile(ctx context.Context, st *store.Store, orgID string) (Reconciliation, error) {
	c, err := GetChart(ctx, st, orgID)
	if err != nil {
		return Reconciliation{}, err
	}
	vatAccounts := map[string]bool{}
	for _, v := range c.VATCodes {
		vatAccounts[v.Account] = true
	}
	var r Reconciliation
	err = st.InReadTx(ctx, func(q store.ReadTx) error {
		tenant, _ := tenancy.From(ctx)
		var invGross, invNet, invVAT, cnGross, cnNet, cnVAT, paid int64
		if err := q.QueryRow(ctx, `SELECT COALESCE(SUM(gross), 0), COALESCE(SUM(net), 0), COALESCE(SUM(vat), 0) FROM invoices
			WHERE tenant_id = $1 AND organization_id = $2`, tenant, orgID).Scan(&invGross, &invNet, &invVAT); err != nil {
			return err
		}
		if err := q.QueryRow(ctx, `SELECT COALESCE(SUM(gross), 0), COALESCE(SUM(net), 0), COALESCE(SUM(vat), 0) FROM credit_notes
			WHERE tenant_id = $1 AND organization_id = $2`, tenant, orgID).Scan(&cnGross, &cnNet, &cnVAT); err != nil {
			return err
		}
		if err := q.QueryRow(ctx, `SELECT COALESCE(SUM(p.amount), 0) FROM payments p JOIN invoices i ON i.tenant_id = p.tenant_id
			AND i.id = p.invoice_id WHERE p.tenant_id = $1 AND i.organization_id = $2 AND p.status = 'Succeeded'`, tenant, orgID).Scan(&paid); err != nil {
			return err
		}
		r.ReceivableDocuments, r.VATDocuments, r.NetDocuments = invGross-cnGross-paid, invVAT-cnVAT, invNet-cnNet
		rows, err := q.Query(ctx, `SELECT l.account, SUM(l.amount) FROM books_entries e JOIN books_lines l ON l.entry_id = e.id
			WHERE e.tenant_id = $1 AND e.organization_id = $2 GROUP BY l.account`, tenant, orgID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var account string
			var sum int64
			if err := rows.Scan(&account, &sum); err != nil {
				return err
			}
			a, _ := c.account(account)
			switch {
			case account == c.ReceivableAccount:
				r.ReceivableLedger += sum
			case vatAccounts[account]:
				r.VATLedger -= sum
			case account == c.DeferredAccount || a.Type == Revenue:
				r.NetLedger -= sum
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return q.QueryRow(ctx, `SELECT
			(SELECT COUNT(*) FROM invoices d WHERE d.tenant_id = $1 AND d.organization_id = $2 AND NOT EXISTS (SELECT 1 FROM books_entries e
				WHERE e.tenant_id = d.tenant_id AND e.organization_id = d.organization_id AND e.source_kind = 'Invoice' AND e.source_id = CAST(d.id AS TEXT)))
			+ (SELECT COUNT(*) FROM credit_notes d WHERE d.tenant_id = $1 AND d.organization_id = $2 AND NOT EXISTS (SELECT 1 FROM books_entries e
				WHERE e.tenant_id = d.tenant_id AND e.organization_id = d.organization_id AND e.source_kind = 'CreditNote' AND e.source_id = CAST(d.id AS TEXT)))
			+ (SELECT COUNT(*) FROM payments d JOIN invoices i ON i.tenant_id = d.tenant_id AND i.id = d.invoice_id
				WHERE d.tenant_id = $1 AND i.organization_id = $2 AND d.status = 'Succeeded' AND NOT EXISTS (SELECT 1 FROM books_entries e
				WHERE e.tenant_id = d.tenant_id AND e.organization_id = i.organization_id AND e.source_kind = 'Payment' AND e.source_id = CAST(d.id AS TEXT)))`,
			tenant, orgID).Scan(&r.Unposted)
	})
	return r, err
}

// WriteCSV writes the organization's journal, one line per posting, with
// a header; amounts in minor units, debit and credit apart.
func WriteCSV(ctx context.Context, st *store.Store, orgID, from, to string, w io.Writer) error {
	entries, err := Entries(ctx, st, orgID, from, to)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"journal", "number", "accountingDate", "account", "debit", "credit", "currency", "vatRate", "taxCode",
		"productId", "customerId", "sourceKind", "sourceId", "description", "note"})
	for _, e := range entries {
		for _, l := range e.Lines {
			debit, credit := "", ""
			if l.Amount >= 0 {
				debit = strconv.FormatInt(l.Amount, 10)
			} else {
				credit = strconv.FormatInt(-l.Amount, 10)
			}
			if err := cw.Write([]string{e.Journal, strconv.FormatInt(e.Number, 10), e.Date, l.Account, debit, credit, l.Currency,
				l.VATRate, l.TaxCode, l.ProductID, l.CustomerID, e.SourceKind, e.SourceID, e.Description, e.Note}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
