package api

import (
	"context"
	"net/http"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// PaymentDemandView is a payment demand with the fields INFO-Subscription
// clients read beside Kadens' own (docs/MIGRATION.md).
type PaymentDemandView struct {
	store.PaymentDemand
	OrderID                *string                `json:"orderId" description:"The order whose completion created the subscription series; null for a demand without a subscription."`
	BillingPlanID          *string                `json:"billingPlanId" description:"The billing plan of the billed subscription period's package."`
	SettleDate             *time.Time             `json:"settleDate" description:"When the demand was settled: the value time of the payment that made it Paid; null while it is not Paid."`
	IsCredited             bool                   `json:"isCredited" description:"true when credit notes cancelled the whole demand (status Credited)."`
	SettlementTransactions SettlementTransactions `json:"settlementTransactions" description:"How the demand was settled: the payments applied, the allowances the invoice consumed, the charges settlement left (Kadens settles only in full, so none)."`
}

// SettlementTransactions records what settled a demand.
type SettlementTransactions struct {
	Payments           []SettlementPayment   `json:"payments"`
	ConsumedAllowances []SettlementAllowance `json:"consumedAllowances"`
	GeneratedCharges   []SettlementAllowance `json:"generatedCharges"`
}

// SettlementPayment is a succeeded payment applied to a demand.
type SettlementPayment struct {
	PaymentID string         `json:"paymentId"`
	Amount    catalog.Amount `json:"amount" description:"The part of the payment applied to this demand."`
	PaidAt    time.Time      `json:"paidAt"`
}

// SettlementAllowance is an account item used by (or left by) settlement.
type SettlementAllowance struct {
	AccountItemID *string        `json:"accountItemId"`
	Amount        catalog.Amount `json:"amount"`
}

// demandView adds to d what INFO-Subscription clients read. subs caches
// subscription reads across a page.
func (s *Server) demandView(ctx context.Context, d store.PaymentDemand, subs map[string]store.Subscription) (PaymentDemandView, error) {
	v := PaymentDemandView{PaymentDemand: d, IsCredited: d.Status == billing.DemandCredited,
		SettlementTransactions: SettlementTransactions{Payments: []SettlementPayment{}, ConsumedAllowances: []SettlementAllowance{},
			GeneratedCharges: []SettlementAllowance{}}}
	if id := d.SubscriptionID; id != nil {
		sub, ok := subs[*id]
		if !ok {
			var err error
			if sub, err = s.store.Subscription(ctx, *id); err != nil {
				return v, err
			}
			subs[*id] = sub
		}
		v.OrderID = sub.OrderID
		if plan := sub.Package.BillingPlan.BillingPlanID; plan != "" {
			v.BillingPlanID = &plan
		}
	}
	pays, _, err := s.store.ListPayments(ctx, store.PaymentFilter{PaymentDemandID: d.ID, Status: store.PaymentSucceeded}, store.Page{Limit: 1000})
	if err != nil {
		return v, err
	}
	for _, p := range pays {
		if p.Applied.Minor == 0 {
			continue
		}
		v.SettlementTransactions.Payments = append(v.SettlementTransactions.Payments, SettlementPayment{PaymentID: p.ID, Amount: p.Applied, PaidAt: p.PaidAt})
		if d.Status == billing.DemandPaid && (v.SettleDate == nil || p.PaidAt.After(*v.SettleDate)) {
			t := p.PaidAt
			v.SettleDate = &t
		}
	}
	inv, err := s.store.Invoice(ctx, d.InvoiceID)
	if err != nil {
		return v, err
	}
	for _, l := range inv.Lines {
		if l.Kind == billing.LineAllowance {
			a := l.Gross
			a.Minor = -a.Minor
			v.SettlementTransactions.ConsumedAllowances = append(v.SettlementTransactions.ConsumedAllowances,
				SettlementAllowance{AccountItemID: l.AccountItemID, Amount: a})
		}
	}
	return v, nil
}

type demandListParams struct {
	ListParams
	SubscriberID string `query:"subscriberId" format:"uuid" description:"Only demands of this subscriber (404 if there is no such subscriber)."`
	Status       string `query:"status" enum:"Open,PartiallyPaid,Paid,Overdue,Credited"`
}

func (s *Server) paymentDemandRoutes() {
	const tag = "PaymentDemand"
	ok := func(body any) response { return response{status: http.StatusOK, body: body} }
	s.add(route{method: http.MethodGet, path: "/paymentdemand/{id}", id: "getPaymentDemand", tag: tag,
		summary: "Get a payment demand", desc: "The claim to be paid; `invoiceId` is its one invoice.",
		request: new(idParam), responses: common(ok(new(PaymentDemandView)), respNotFound), handle: s.getPaymentDemand})
	s.add(route{method: http.MethodGet, path: "/paymentdemand", id: "listPaymentDemands", tag: tag,
		summary: "List payment demands", request: new(demandListParams),
		responses: common(ok(new([]PaymentDemandView)), respNotFound), handle: s.listPaymentDemands})
}

func (s *Server) getPaymentDemand(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	d, err := s.store.PaymentDemand(r.Context(), id)
	if err != nil {
		return err
	}
	d.Status = billing.Status(d.Status, d.DueAt, now)
	v, err := s.demandView(r.Context(), d, map[string]store.Subscription{})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) listPaymentDemands(w http.ResponseWriter, r *http.Request) error {
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	var errs validation.Errors
	p := page(r, &errs)
	f := documentFilter(r, &errs, billing.DemandStatuses, now)
	if err := errs.Err(); err != nil {
		return err
	}
	if err := s.store.RequireParents(r.Context(), store.Parents{Subscriber: f.SubscriberID}); err != nil {
		return err
	}
	ds, next, err := s.store.ListPaymentDemands(r.Context(), store.DocumentFilter{SubscriberID: f.SubscriberID, Status: f.Status, Now: now}, p)
	if err != nil {
		return err
	}
	out := make([]PaymentDemandView, len(ds))
	subs := map[string]store.Subscription{}
	for i := range ds {
		ds[i].Status = billing.Status(ds[i].Status, ds[i].DueAt, now)
		if out[i], err = s.demandView(r.Context(), ds[i], subs); err != nil {
			return err
		}
	}
	s.writeList(w, r, out, next)
	return nil
}
