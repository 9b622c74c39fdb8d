package api

import (
	"net/http"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

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
		request: new(idParam), responses: common(ok(new(store.PaymentDemand)), respNotFound), handle: s.getPaymentDemand})
	s.add(route{method: http.MethodGet, path: "/paymentdemand", id: "listPaymentDemands", tag: tag,
		summary: "List payment demands", request: new(demandListParams),
		responses: common(ok(new([]store.PaymentDemand)), respNotFound), handle: s.listPaymentDemands})
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
	writeJSON(w, http.StatusOK, d)
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
	for i := range ds {
		ds[i].Status = billing.Status(ds[i].Status, ds[i].DueAt, now)
	}
	s.writeList(w, r, ds, next)
	return nil
}
