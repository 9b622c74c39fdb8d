package bookkeeping

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
)

// Journals: an organization's entries are numbered gap-free in each.
const (
	JournalSales       = "SALES" // invoices and credit notes
	JournalBank        = "BANK"  // payments
	JournalRecognition = "RECOG" // deferred revenue recognised
)

// Source kinds: what an entry was posted from.
const (
	SourceInvoice     = "Invoice"
	SourceCreditNote  = "CreditNote"
	SourcePayment     = "Payment"
	SourceRecognition = "Recognition"
)

// Entry is a journal entry: balanced lines, one date, one source document.
type Entry struct {
	ID             string `json:"id"`
	OrganizationID string `json:"organizationId"`
	Journal        string `json:"journal"`
	Number         int64  `json:"number"`
	// Date is the accounting date (the document's date in the
	// organization's time zone, or the first open day after a closed
	// period, which Note then explains).
	Date        string    `json:"accountingDate" format:"date"`
	SourceKind  string    `json:"sourceKind"`
	SourceID    string    `json:"sourceId"`
	Description string    `json:"description"`
	Note        string    `json:"note"`
	PostedAt    time.Time `json:"postedAt"`
	Lines       []Line    `json:"lines"`
}

// Line is one posting: Amount in minor units, a debit when positive.
type Line struct {
	Account    string `json:"account"`
	Amount     int64  `json:"amount"`
	Currency   string `json:"currency"`
	VATRate    string `json:"vatRate,omitempty"`
	TaxCode    string `json:"taxCode,omitempty"`
	ProductID  string `json:"productId,omitempty"`
	CustomerID string `json:"customerId,omitempty"`
}

// ErrUnbalanced is an entry whose debits and credits differ; it is never
// written.
var ErrUnbalanced = errors.New("bookkeeping: entry does not balance")

// balanced checks that the lines sum to zero per currency and drops lines
// of zero.
func (e *Entry) balanced() error {
	sums := map[string]int64{}
	kept := e.Lines[:0]
	for _, l := range e.Lines {
		sums[l.Currency] += l.Amount
		if l.Amount != 0 {
			kept = append(kept, l)
		}
	}
	e.Lines = kept
	for cur, s := range sums {
		if s != 0 {
			return fmt.Errorf("%w: %s %s %s is off by %d %s", ErrUnbalanced, e.SourceKind, e.SourceID, e.Journal, s, cur)
		}
	}
	return nil
}

// deferral is what an invoice line for a service period leaves unearned.
type deferral struct {
	InvoiceID, ProductID, VATRate, Currency string
	Line                                    int
	RevenueAccount, DeferredAccount         string
	Start, End                              string // local dates, End exclusive
	Amount                                  int64
	Recognized, Reversed                    int64
	Next                                    string
}

func localDate(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.DateOnly) }

// invoiceEntry builds the entry of an issued invoice: the customer owes
// the gross; every line's net goes to revenue, or to unearned revenue
// when it is for a service period (recognised later, day by day); VAT goes
// to the rate's output VAT account.
func invoiceEntry(c Chart, inv store.Invoice, loc *time.Location) (Entry, []deferral, error) {
	e := Entry{OrganizationID: inv.OrganizationID, Journal: JournalSales, Date: inv.IssueDate, SourceKind: SourceInvoice,
		SourceID: inv.ID, Description: fmt.Sprintf("Invoice %d", inv.InvoiceNumber)}
	e.Lines = append(e.Lines, Line{Account: c.ReceivableAccount, Amount: inv.Gross.Minor, Currency: inv.Currency, CustomerID: inv.SubscriberID})
	var defs []deferral
	for _, l := range inv.Lines {
		rate, product := normRate(l.VATRate.String()), ""
		if l.ProductID != nil {
			product = *l.ProductID
		}
		revenue := c.revenueAccount(product, rate, l.Kind)
		if revenue == "" {
			return Entry{}, nil, fmt.Errorf("bookkeeping: no revenue account for line %d of invoice %d", l.LineNumber, inv.InvoiceNumber)
		}
		account := revenue
		if d, ok := lineDeferral(l, loc); ok && l.Net.Minor > 0 {
			account = c.DeferredAccount
			d.InvoiceID, d.ProductID, d.VATRate, d.Currency, d.Line = inv.ID, product, rate, inv.Currency, l.LineNumber
			d.RevenueAccount, d.DeferredAccount, d.Amount = revenue, c.DeferredAccount, l.Net.Minor
			defs = append(defs, d)
		}
		e.Lines = append(e.Lines, Line{Account: account, Amount: -l.Net.Minor, Currency: inv.Currency, VATRate: rate, ProductID: product})
	}
	vat, err := vatLines(c, inv.VATTotals, inv.Currency, -1)
	if err != nil {
		return Entry{}, nil, fmt.Errorf("invoice %d: %w", inv.InvoiceNumber, err)
	}
	e.Lines = append(e.Lines, vat...)
	return e, defs, e.balanced()
}

// lineDeferral is the deferral of a product line with a service period.
// Charges and allowances carry no period and are earned when invoiced.
func lineDeferral(l billing.Line, loc *time.Location) (deferral, bool) {
	if l.PeriodStart == nil || l.PeriodEnd == nil || (l.Kind != "Product" && l.Kind != "AdditionalProduct") {
		return deferral{}, false
	}
	start, end := localDate(*l.PeriodStart, loc), localDate(*l.PeriodEnd, loc)
	if end <= start {
		return deferral{}, false
	}
	return deferral{Start: start, End: end, Next: start}, true
}

// vatLines books the VAT of each rate to its account with its tax code;
// sign −1 credits (an invoice), +1 debits (a credit note).
func vatLines(c Chart, totals []billing.VATTotal, currency string, sign int64) ([]Line, error) {
	var out []Line
	for _, t := range totals {
		rate := normRate(t.VATRate.String())
		code, ok := c.vatCode(rate)
		if !ok {
			return nil, fmt.Errorf("bookkeeping: the chart has no VAT code for rate %s", rate)
		}
		if t.VAT.Minor == 0 && t.Net.Minor == 0 {
			continue
		}
		out = append(out, Line{Account: code.Account, Amount: sign * t.VAT.Minor, Currency: currency, VATRate: rate, TaxCode: code.TaxCode})
	}
	return out, nil
}

// creditEntry builds the entry of a credit note: the reverse of the
// invoice's lines it credits, taking from unearned revenue first what is
// still unearned of the line (defs, by invoice line number, updated in
// place: their Reversed grows).
func creditEntry(c Chart, cn store.CreditNote, inv store.Invoice, defs map[int]*deferral) (Entry, error) {
	e := Entry{OrganizationID: cn.OrganizationID, Journal: JournalSales, Date: cn.IssueDate, SourceKind: SourceCreditNote,
		SourceID: cn.ID, Description: fmt.Sprintf("Credit note %d for invoice %d", cn.CreditNoteNumber, cn.InvoiceNumber)}
	e.Lines = append(e.Lines, Line{Account: c.ReceivableAccount, Amount: -cn.Gross.Minor, Currency: cn.Currency, CustomerID: cn.SubscriberID})
	lines := map[int]billing.Line{}
	for _, l := range inv.Lines {
		lines[l.LineNumber] = l
	}
	for _, cl := range cn.Lines {
		il := lines[cl.InvoiceLineNumber]
		rate, product := normRate(cl.VATRate.String()), ""
		if il.ProductID != nil {
			product = *il.ProductID
		}
		revenue := c.revenueAccount(product, rate, il.Kind)
		net := cl.Net.Minor
		if d := defs[cl.InvoiceLineNumber]; d != nil && net > 0 {
			take := min(net, d.Amount-d.Recognized-d.Reversed)
			if take > 0 {
				d.Reversed += take
				e.Lines = append(e.Lines, Line{Account: d.DeferredAccount, Amount: take, Currency: cn.Currency, VATRate: rate, ProductID: product})
				net -= take
			}
			revenue = d.RevenueAccount
		}
		if revenue == "" {
			return Entry{}, fmt.Errorf("bookkeeping: no revenue account for credit line %d", cl.LineNumber)
		}
		e.Lines = append(e.Lines, Line{Account: revenue, Amount: net, Currency: cn.Currency, VATRate: rate, ProductID: product})
	}
	vat, err := vatLines(c, cn.VATTotals, cn.Currency, 1)
	if err != nil {
		return Entry{}, fmt.Errorf("credit note %d: %w", cn.CreditNoteNumber, err)
	}
	e.Lines = append(e.Lines, vat...)
	return e, e.balanced()
}

// paymentEntry builds the entry of a payment received: the bank account
// of the payment's provider against the customer.
func paymentEntry(c Chart, p store.Payment, orgID string, loc *time.Location) (Entry, error) {
	bank := c.bankAccount(p.Provider)
	e := Entry{OrganizationID: orgID, Journal: JournalBank, Date: localDate(p.PaidAt, loc), SourceKind: SourcePayment,
		SourceID: p.ID, Description: fmt.Sprintf("Payment %s %s", p.Provider, p.ProviderReference)}
	e.Lines = []Line{
		{Account: bank, Amount: p.Amount.Minor, Currency: p.Currency},
		{Account: c.ReceivableAccount, Amount: -p.Amount.Minor, Currency: p.Currency, CustomerID: p.SubscriberID},
	}
	return e, e.balanced()
}

// days between two dates (b − a).
func days(a, b string) int64 {
	ta, _ := time.Parse(time.DateOnly, a)
	tb, _ := time.Parse(time.DateOnly, b)
	return int64(tb.Sub(ta).Hours()+0.5) / 24
}

func nextDay(d string) string {
	t, _ := time.Parse(time.DateOnly, d)
	return t.AddDate(0, 0, 1).Format(time.DateOnly)
}

// recognise moves what d earned from its next unrecognised day through
// the date through (inclusive) and returns the amount: the open part
// spread evenly over the days left, floored, so the last day takes the
// remainder and the whole amount is recognised exactly by the period's end.
func (d *deferral) recognise(through string) int64 {
	upto := nextDay(through)
	if upto > d.End {
		upto = d.End
	}
	if upto <= d.Next {
		return 0
	}
	open := d.Amount - d.Recognized - d.Reversed
	left, step := days(d.Next, d.End), days(d.Next, upto)
	inc := open
	if upto < d.End {
		inc = open * step / left
	}
	d.Recognized += inc
	d.Next = upto
	return inc
}

// recognitionEntry sums the deferrals' increments per revenue account,
// product and rate.
func recognitionEntry(orgID, through string, moved []deferral, amounts []int64) Entry {
	e := Entry{OrganizationID: orgID, Journal: JournalRecognition, Date: through, SourceKind: SourceRecognition,
		SourceID: through + "/" + store.NewID(), Description: "Revenue recognised through " + through}
	type key struct{ rev, def, product, rate, cur string }
	sums := map[key]int64{}
	for i, d := range moved {
		sums[key{d.RevenueAccount, d.DeferredAccount, d.ProductID, d.VATRate, d.Currency}] += amounts[i]
	}
	keys := make([]key, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.rev+a.product+a.rate+a.def+a.cur < b.rev+b.product+b.rate+b.def+b.cur
	})
	for _, k := range keys {
		e.Lines = append(e.Lines,
			Line{Account: k.def, Amount: sums[k], Currency: k.cur, VATRate: k.rate, ProductID: k.product},
			Line{Account: k.rev, Amount: -sums[k], Currency: k.cur, VATRate: k.rate, ProductID: k.product})
	}
	return e
}
