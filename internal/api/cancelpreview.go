package api

import (
	"net/http"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
)

// CancellationPreviewView is what a cancellation would do (POST
// /subscription/{id}/cancel/preview).
type CancellationPreviewView struct {
	At      time.Time             `json:"at" description:"The tenant's time the preview was computed at; a cancellation sent later may settle fewer unused days."`
	Periods []CancelledPeriodView `json:"periods" description:"Each period the cancellation would cancel, in the order it cancels them: a period a renewal created ahead first, then the one named."`
}

// CancelledPeriodView is one period a cancellation would cancel.
type CancelledPeriodView struct {
	SubscriptionID string                      `json:"subscriptionId" format:"uuid"`
	PeriodStart    time.Time                   `json:"periodStart"`
	PeriodEnd      time.Time                   `json:"periodEnd"`
	EffectiveAt    time.Time                   `json:"effectiveAt" description:"When access ends."`
	Deactivated    bool                        `json:"deactivated" description:"Access ends at once (SubscriptionDeactivated is recorded with the cancellation)."`
	Settlement     *CancellationSettlementView `json:"settlement" description:"What settling the period's invoice credits or gives back; null when nothing (an effect at the period's end, no invoice, NoProration, an invoice already credited)."`
}

// CancellationSettlementView is what cancelling a period settles on its
// invoice, as the cancellation will write it.
type CancellationSettlementView struct {
	InvoiceID     string                 `json:"invoiceId" format:"uuid"`
	InvoiceNumber int64                  `json:"invoiceNumber"`
	UsedDays      int                    `json:"usedDays" description:"Days of the period used before the cancellation takes effect (0: it never started)."`
	TotalDays     int                    `json:"totalDays"`
	Kind          string                 `json:"kind" enum:"CreditNote,Allowance" description:"CreditNote: the invoice is credited (a period that never started, or an unpaid one down to the used days); Allowance: a paid period's unused days become allowances on the subscriber account, applied to the next invoices."`
	Reason        *string                `json:"reason" enum:"Cancellation,Proration" description:"The credit note's reason."`
	CreditNote    *CreditNotePreviewView `json:"creditNote" description:"The credit note's lines and totals as it will be issued (without its number)."`
	Allowances    []AllowancePreviewView `json:"allowances" description:"The allowances booked, one per VAT rate."`
}

// CreditNotePreviewView is a credit note to be issued.
type CreditNotePreviewView struct {
	Currency  string               `json:"currency"`
	Lines     []billing.CreditLine `json:"lines"`
	VATTotals []billing.VATTotal   `json:"vatTotals"`
	Net       catalog.Amount       `json:"net"`
	VAT       catalog.Amount       `json:"vat"`
	Gross     catalog.Amount       `json:"gross"`
}

// AllowancePreviewView is an allowance to be booked.
type AllowancePreviewView struct {
	VATRate catalog.Percent `json:"vatRate"`
	Gross   catalog.Amount  `json:"gross"`
}

func (s *Server) cancelPreviewRoutes() {
	s.add(route{method: http.MethodPost, path: "/subscription/{id}/cancel/preview", id: "previewCancellation", tag: "Subscription",
		summary: "What a cancellation would credit or charge",
		desc: "Takes the body of POST /subscription/{id}/cancel and answers, writing nothing, what that cancellation would do now: " +
			"each period it cancels, when access ends, and what settling the period's invoice credits (a credit note's lines per VAT rate) " +
			"or gives back (allowances per VAT rate), computed by the same code the cancellation runs. The same refusals as the " +
			"cancellation (400, 404).",
		request: new(cancelRequest), responses: common(respOK(new(CancellationPreviewView)), respNotFound), handle: s.previewCancellation})
}

func (s *Server) previewCancellation(w http.ResponseWriter, r *http.Request) error {
	id, c, err := cancellationOf(r)
	if err != nil {
		return err
	}
	p, err := s.app.CancellationPreview(r.Context(), id, c)
	if err != nil {
		return err
	}
	v := CancellationPreviewView{At: p.At.UTC(), Periods: make([]CancelledPeriodView, len(p.Periods))}
	for i, cp := range p.Periods {
		pv := CancelledPeriodView{SubscriptionID: cp.SubscriptionID, PeriodStart: cp.PeriodStart.UTC(), PeriodEnd: cp.PeriodEnd.UTC(),
			EffectiveAt: cp.EffectiveAt.UTC(), Deactivated: cp.Deactivated}
		if st := cp.Settlement; st != nil {
			cur, _ := money.LookupCurrency(st.Currency)
			sv := CancellationSettlementView{InvoiceID: st.InvoiceID, InvoiceNumber: st.InvoiceNumber, UsedDays: st.UsedDays,
				TotalDays: st.TotalDays, Allowances: []AllowancePreviewView{}}
			switch {
			case st.Note != nil:
				sv.Kind = "CreditNote"
				reason := st.Reason
				sv.Reason = &reason
				sv.CreditNote = &CreditNotePreviewView{Currency: st.Currency, Lines: st.Note.Lines, VATTotals: st.Note.VATTotals,
					Net: catalog.NewAmount(st.Note.Net, cur), VAT: catalog.NewAmount(st.Note.VAT, cur), Gross: catalog.NewAmount(st.Note.Gross, cur)}
			case len(st.Allowances) > 0:
				sv.Kind = "Allowance"
				for _, a := range st.Allowances {
					sv.Allowances = append(sv.Allowances, AllowancePreviewView{VATRate: a.VATRate, Gross: catalog.NewAmount(a.Gross, cur)})
				}
			}
			if sv.Kind != "" {
				pv.Settlement = &sv
			}
		}
		v.Periods[i] = pv
	}
	apikit.WriteJSON(w, http.StatusOK, v)
	return nil
}
