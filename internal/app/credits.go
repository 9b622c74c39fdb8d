package app

import (
	"context"
	"fmt"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// NewCredit is a credit of an invoice (CreditInvoice): without lines,
// everything that can still be credited.
type NewCredit struct {
	InvoiceID string
	Reason    string
	Lines     []CreditLine
}

// CreditLine credits Amount (gross, a decimal in the invoice's currency)
// of invoice line LineNumber; without an amount, all that is left of it.
type CreditLine struct {
	LineNumber *int // nil: the surface got none (a validation error)
	Amount     string
}

// CreditInvoice issues a credit note for in, numbered in the
// organization's credit note series, at the tenant's time. A line or
// amount that cannot be credited (nothing left, more than is left, an
// amount the currency cannot hold) is a validation.Errors naming the line
// (lines[i].amount, lines[i].lineNumber) or lines; an unknown invoice is
// store.ErrNotFound.
func (a *App) CreditInvoice(ctx context.Context, in NewCredit) (store.CreditNote, error) {
	now, err := a.Now(ctx)
	if err != nil {
		return store.CreditNote{}, err
	}
	note, err := invoicing.CreditInvoice(ctx, a.store, in.InvoiceID, in.Reason, now, func(inv store.Invoice, credited map[int]int64) ([]billing.CreditRequest, error) {
		return creditRequests(inv, credited, in.Lines)
	})
	if err != nil {
		return store.CreditNote{}, err
	}
	if note.ID == "" {
		return store.CreditNote{}, validation.Field("lines", "nothing is left to credit") // nothing was written
	}
	return note, nil
}

// creditRequests turns the lines asked for into credit requests against
// inv: no lines → everything creditable; a line without amount → all that
// is left of it.
func creditRequests(inv store.Invoice, credited map[int]int64, lines []CreditLine) ([]billing.CreditRequest, error) {
	left := billing.Creditable(inv.Lines, credited)
	if len(lines) == 0 {
		var out []billing.CreditRequest
		for _, l := range inv.Lines {
			if left[l.LineNumber] > 0 {
				out = append(out, billing.CreditRequest{Line: l.LineNumber, Gross: left[l.LineNumber]})
			}
		}
		if len(out) == 0 {
			return nil, validation.Field("lines", "nothing is left to credit on invoice %d", inv.InvoiceNumber)
		}
		return out, nil
	}
	cur, ok := money.LookupCurrency(inv.Currency)
	if !ok {
		return nil, fmt.Errorf("app: invoice %s: unknown currency %s", inv.ID, inv.Currency)
	}
	var errs validation.Errors
	out := make([]billing.CreditRequest, 0, len(lines))
	for i, l := range lines {
		if l.LineNumber == nil {
			errs.Add(fmt.Sprintf("lines[%d].lineNumber", i), "is required")
			continue
		}
		req := billing.CreditRequest{Line: *l.LineNumber, Gross: left[*l.LineNumber]}
		if l.Amount != "" {
			minor, err := money.ParseMinor(l.Amount, cur)
			if err != nil {
				errs.Add(fmt.Sprintf("lines[%d].amount", i), "must be an amount in %s with at most %d decimals", cur.Code, cur.Digits)
				continue
			}
			req.Gross = minor
		}
		out = append(out, req)
	}
	return out, errs.Err()
}

// CreditNote returns a credit note of the tenant, or store.ErrNotFound.
func (a *App) CreditNote(ctx context.Context, id string) (store.CreditNote, error) {
	return a.store.CreditNote(ctx, id)
}

// CreditNotes lists the tenant's credit notes that f selects, a page at a
// time.
func (a *App) CreditNotes(ctx context.Context, f store.CreditNoteFilter, p store.Page) ([]store.CreditNote, string, error) {
	return a.store.ListCreditNotes(ctx, f, p)
}

// Reminders lists the reminders dunning issued that f selects, a page at a
// time.
func (a *App) Reminders(ctx context.Context, f invoicing.ReminderFilter, p store.Page) ([]invoicing.Reminder, string, error) {
	return invoicing.ListReminders(ctx, a.store, f, p)
}
