package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/kadens/kadens/internal/apikit"
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

// demandViews adds to ds what INFO-Subscription clients read. It reads
// the page's subscriptions, succeeded payments and invoices' allowance
// lines with one statement each (per chunk of ids), not per demand.
func (s *Server) demandViews(ctx context.Context, ds []store.PaymentDemand) ([]PaymentDemandView, error) {
	subIDs := make([]string, 0, len(ds))
	demandIDs := make([]string, len(ds))
	invoiceIDs := make([]string, len(ds))
	for i, d := range ds {
		if d.SubscriptionID != nil {
			subIDs = append(subIDs, *d.SubscriptionID)
		}
		demandIDs[i], invoiceIDs[i] = d.ID, d.InvoiceID
	}
	settled, err := s.app.DemandSettlements(ctx, subIDs, demandIDs, invoiceIDs)
	if err != nil {
		return nil, err
	}
	subs, pays, allowances := settled.Origins, settled.Payments, settled.Allowances
	out := make([]PaymentDemandView, len(ds))
	for i, d := range ds {
		v := PaymentDemandView{PaymentDemand: d, IsCredited: d.Status == billing.DemandCredited,
			SettlementTransactions: SettlementTransactions{Payments: []SettlementPayment{}, ConsumedAllowances: []SettlementAllowance{},
				GeneratedCharges: []SettlementAllowance{}}}
		if id := d.SubscriptionID; id != nil {
			sub, ok := subs[*id]
			if !ok {
				return nil, fmt.Errorf("payment demand %s: subscription %s: %w", d.ID, *id, store.ErrNotFound)
			}
			v.OrderID = sub.OrderID
			if plan := sub.BillingPlanID; plan != "" {
				v.BillingPlanID = &plan
			}
		}
		for _, p := range pays[d.ID] {
			if p.Applied.Minor == 0 {
				continue
			}
			v.SettlementTransactions.Payments = append(v.SettlementTransactions.Payments,
				SettlementPayment{PaymentID: p.PaymentID, Amount: p.Applied, PaidAt: p.PaidAt})
			if d.Status == billing.DemandPaid && (v.SettleDate == nil || p.PaidAt.After(*v.SettleDate)) {
				t := p.PaidAt
				v.SettleDate = &t
			}
		}
		lines, ok := allowances[d.InvoiceID]
		if !ok {
			return nil, fmt.Errorf("payment demand %s: invoice %s: %w", d.ID, d.InvoiceID, store.ErrNotFound)
		}
		for _, l := range lines {
			a := l.Gross
			a.Minor = -a.Minor
			v.SettlementTransactions.ConsumedAllowances = append(v.SettlementTransactions.ConsumedAllowances,
				SettlementAllowance{AccountItemID: l.AccountItemID, Amount: a})
		}
		out[i] = v
	}
	return out, nil
}

type demandListParams struct {
	apikit.ListParams
	SubscriberID string `query:"subscriberId" format:"uuid" description:"Only demands of this subscriber."`
	Status       string `query:"status" enum:"Open,PartiallyPaid,Paid,Overdue,Credited"`
}

func (s *Server) paymentDemandRoutes() {
	const tag = "PaymentDemand"
	s.add(route{method: http.MethodGet, path: "/paymentdemand/{id}", id: "getPaymentDemand", tag: tag,
		summary: "Get a payment demand", desc: "The claim to be paid; `invoiceId` is its one invoice.",
		request: new(apikit.IDParam), responses: common(respOK(new(PaymentDemandView)), respNotFound), handle: s.getPaymentDemand})
	s.add(route{method: http.MethodGet, path: "/paymentdemand", id: "listPaymentDemands", tag: tag,
		summary: "List payment demands", request: new(demandListParams),
		responses: common(respOK(new([]PaymentDemandView))), handle: s.listPaymentDemands})
}

func (s *Server) getPaymentDemand(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	d, err := s.app.PaymentDemand(r.Context(), id)
	if err != nil {
		return err
	}
	d.Status = billing.Status(d.Status, d.DueAt, now)
	vs, err := s.demandViews(r.Context(), []store.PaymentDemand{d})
	if err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, vs[0])
	return nil
}

func (s *Server) listPaymentDemands(w http.ResponseWriter, r *http.Request) error {
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	f := documentFilter(r, &errs, billing.DemandStatuses, now)
	if err := errs.Err(); err != nil {
		return err
	}
	ds, next, err := s.app.PaymentDemands(r.Context(), store.DocumentFilter{SubscriberID: f.SubscriberID, Status: f.Status, Now: now}, p)
	if err != nil {
		return err
	}
	for i := range ds {
		ds[i].Status = billing.Status(ds[i].Status, ds[i].DueAt, now)
	}
	out, err := s.demandViews(r.Context(), ds)
	if err != nil {
		return err
	}
	s.writeList(w, r, out, next)
	return nil
}
