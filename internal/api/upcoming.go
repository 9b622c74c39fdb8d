package api

import (
	"net/http"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
)

// UpcomingInvoiceView is the invoice a subscription's next renewal will
// issue (GET /subscription/{id}/upcominginvoice).
type UpcomingInvoiceView struct {
	SubscriptionID         string `json:"subscriptionId" description:"The subscription period asked about."`
	RenewingSubscriptionID string `json:"renewingSubscriptionId" description:"The last period of its series, whose renewal this previews (the period asked about, or a later one the series renewed or changed plan into)."`
	WillRenew              bool   `json:"willRenew" description:"false when the series will not renew: then reason says why, and there are no period, dates, lines or totals."`
	Reason                 string `json:"reason,omitempty" enum:"Cancelled,Ended,AutomaticStop,PlanChange" description:"Why it will not renew: Cancelled (a cancellation takes effect at the period's end or a chosen time; see pendingChanges), Ended (cancelled or stopped already), AutomaticStop (the package stops by itself at the period's end), PlanChange (a plan change scheduled at or before the renewal replaces the period first; its new plan's first invoice is issued when it runs). Absent when willRenew."`
	// The new period and the invoice's dates.
	PeriodStart *time.Time `json:"periodStart" description:"Start of the period the invoice covers."`
	PeriodEnd   *time.Time `json:"periodEnd" description:"End of that period (exclusive)."`
	IssuedAt    *time.Time `json:"issuedAt" description:"When the renewal runs and the invoice is issued: minimumDueDays local days before the current period ends."`
	DueAt       *time.Time `json:"dueAt"`
	IssueDate   *string    `json:"issueDate" format:"date" description:"Issue date in the organization's time zone."`
	DueDate     *string    `json:"dueDate" format:"date" description:"Due date in the organization's time zone."`
	PackageName *string    `json:"packageName" description:"The new period's package: the current one, the next chain step's, or a plan change's target."`
	ChainStep   *int       `json:"chainStep" description:"The chain step the new period is on, when the renewal moves the series to its chain's next step; else null."`
	// PlanChangeID is the OnRenewal change that runs into the new period.
	PlanChangeID     *string              `json:"planChangeId" format:"uuid" description:"The plan change that takes effect at this renewal (its target's lines are the invoice's); null when none does."`
	Currency         string               `json:"currency"`
	PricesIncludeVAT bool                 `json:"pricesIncludeVat" description:"The lines' unitPrice and discount are gross (true) or net."`
	Lines            []billing.Line       `json:"lines" description:"The lines exactly as the renewal will write them: the package's products for the period, then the subscriber account's open charges and allowances booked by now. Empty when willRenew is false."`
	VATTotals        []billing.VATTotal   `json:"vatTotals"`
	Net              *catalog.Amount      `json:"net"`
	VAT              *catalog.Amount      `json:"vat"`
	Gross            *catalog.Amount      `json:"gross"`
	PendingChanges   []UpcomingChangeView `json:"pendingChanges" description:"What waits on the series: its registered plan change and a cancellation that has not taken effect yet (one waiting for the binding end included)."`
	Binding          *UpcomingBindingView `json:"binding" description:"The series' binding period while it lasts; null when none or ended."`
}

// UpcomingBindingView is a series' running binding period.
type UpcomingBindingView struct {
	EndsAt                time.Time `json:"endsAt" description:"When the binding period ends (the end of its last bound period)."`
	EarlyCancellation     string    `json:"earlyCancellation" enum:"EndOfBinding,ChargeRemainder" description:"What a cancellation before endsAt does."`
	PeriodsAfter          int       `json:"periodsAfter" description:"Bound periods after the series' current last period: what a ChargeRemainder cancellation at its end charges (each at the package's price per period)."`
	CancellationScheduled bool      `json:"cancellationScheduled" description:"A cancellation waits for endsAt (EndOfBinding): the series renews until then and ends then."`
}

// UpcomingChangeView is a change pending on a series.
type UpcomingChangeView struct {
	Kind              string     `json:"kind" enum:"PlanChange,Cancellation"`
	ID                string     `json:"id" description:"The plan change's id, or the cancelled period's."`
	Path              string     `json:"path" description:"Its resource path."`
	At                *time.Time `json:"at" description:"When it takes effect: a plan change's scheduledTime, or the renewal for an OnRenewal change that runs at it; a cancellation's effect. null for an OnRenewal change that waits for a later renewal (notBefore)."`
	AtRenewal         bool       `json:"atRenewal" description:"It takes effect at the previewed renewal (its lines are the invoice's)."`
	ProcessingType    *string    `json:"processingType,omitempty" enum:"OnScheduledTime,OnRenewal"`
	TemplatePackageID *string    `json:"templatePackageId,omitempty" format:"uuid"`
	NotBefore         *time.Time `json:"notBefore,omitempty" description:"A price change's plan change applies at the first renewal whose new period starts at or after this time."`
	Reason            *string    `json:"reason,omitempty" description:"A cancellation's reason; CannotRun for a plan change that will expire at the renewal instead of running."`
}

func (s *Server) upcomingRoutes() {
	s.add(route{method: http.MethodGet, path: "/subscription/{id}/upcominginvoice", id: "getUpcomingInvoice", tag: "Subscription",
		summary: "The invoice the next renewal will issue",
		desc: "Previews, without writing anything, the invoice the next renewal of the subscription's series will issue: the period it covers, " +
			"when it is issued and due, its lines (with a plan change or chain step that takes effect at that renewal, and the subscriber " +
			"account's open charges and allowances booked by now) and totals, computed by the same code the renewal runs. pendingChanges " +
			"lists the series' registered plan change and a cancellation still to take effect. A series that will not renew answers 200 " +
			"with willRenew false, its reason, and no lines. It can differ from what is billed only if something changes before the " +
			"renewal (a charge booked, a cancellation, a price change starting, another invoice of the account using its items first).",
		request: new(apikit.IDParam), responses: common(respOK(new(UpcomingInvoiceView)), respNotFound), handle: s.getUpcomingInvoice})
}

func (s *Server) getUpcomingInvoice(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	up, err := s.app.UpcomingInvoice(r.Context(), id)
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, upcomingView(up))
	return nil
}

func upcomingView(up app.UpcomingInvoice) UpcomingInvoiceView {
	v := UpcomingInvoiceView{SubscriptionID: up.SubscriptionID, RenewingSubscriptionID: up.RenewingID, WillRenew: up.WillRenew,
		Currency: up.Currency, PricesIncludeVAT: up.PricesIncludeVAT, Lines: up.Lines, VATTotals: up.VATTotals,
		PendingChanges: make([]UpcomingChangeView, len(up.PendingChanges))}
	if v.Lines == nil {
		v.Lines = []billing.Line{}
	}
	if v.VATTotals == nil {
		v.VATTotals = []billing.VATTotal{}
	}
	if up.WillRenew {
		ps, pe, ia, da := up.PeriodStart.UTC(), up.PeriodEnd.UTC(), up.IssuedAt.UTC(), up.DueAt.UTC()
		v.PeriodStart, v.PeriodEnd, v.IssuedAt, v.DueAt = &ps, &pe, &ia, &da
		v.IssueDate, v.DueDate, v.PackageName = &up.IssueDate, &up.DueDate, &up.Package.Name
		v.Net, v.VAT, v.Gross = &up.Net, &up.VAT, &up.Gross
		if up.ChainStep && up.Package.ChainStepOrder != nil {
			n := *up.Package.ChainStepOrder
			v.ChainStep = &n
		}
		if up.PlanChangeID != "" {
			v.PlanChangeID = &up.PlanChangeID
		}
	} else {
		v.Reason = up.Reason
	}
	if b := up.Binding; b != nil {
		v.Binding = &UpcomingBindingView{EndsAt: b.EndsAt.UTC(), EarlyCancellation: b.EarlyCancellation, PeriodsAfter: b.PeriodsAfter,
			CancellationScheduled: b.CancellationScheduled}
	}
	for i, c := range up.PendingChanges {
		cv := UpcomingChangeView{Kind: c.Kind, ID: c.ID, Path: c.Path, At: utcPtr(c.At), AtRenewal: c.AtRenewal, NotBefore: utcPtr(c.NotBefore)}
		if c.ProcessingType != "" {
			cv.ProcessingType = &c.ProcessingType
		}
		if c.TemplatePackageID != "" {
			cv.TemplatePackageID = &c.TemplatePackageID
		}
		if c.Reason != "" {
			cv.Reason = &c.Reason
		}
		v.PendingChanges[i] = cv
	}
	return v
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
