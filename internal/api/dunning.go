package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// ProrationPolicyInput is the body of POST and PUT /prorationpolicy. Both
// settings default to prorating.
type ProrationPolicyInput struct {
	Name             *string `json:"name" required:"true" minLength:"1" maxLength:"200" example:"Standard"`
	PaidProration    *string `json:"paidProration" enum:"GenerateAllowanceForRemainingTime,NoProration" default:"GenerateAllowanceForRemainingTime" description:"A paid period that ends early: an allowance for the remaining days, or nothing."`
	NotPaidProration *string `json:"notPaidProration" enum:"GenerateChargeForConsumedTime,NoProration" default:"GenerateChargeForConsumedTime" description:"An unpaid period that ends early: its invoice is credited down to the consumed days, or stays as it is."`
}

func (in ProrationPolicyInput) policy() (invoicing.ProrationPolicy, error) {
	var errs validation.Errors
	p := invoicing.ProrationPolicy{Name: apikit.Text(&errs, "name", in.Name, 200, true)}
	p.PaidProration = apikit.OneOf(&errs, "paidProration", in.PaidProration, billing.ProrateAllowanceForRemaining,
		billing.ProrateAllowanceForRemaining, billing.NoProration)
	p.NotPaidProration = apikit.OneOf(&errs, "notPaidProration", in.NotPaidProration, billing.ProrateChargeForConsumed,
		billing.ProrateChargeForConsumed, billing.NoProration)
	return p, errs.Err()
}

// DunningProcessInput is the body of POST and PUT /dunningprocess.
type DunningProcessInput struct {
	Name              *string     `json:"name" required:"true" minLength:"1" maxLength:"200" example:"Two reminders"`
	ReminderDays      []int       `json:"reminderDays" required:"true" minItems:"1" maxItems:"10" description:"Days after the due date that reminders go out, strictly ascending, each from 1 to 365." example:"[7,21]"`
	ReminderFee       json.Number `json:"reminderFee" description:"Fee per reminder in the invoice's currency (at most 2 decimals), billed on the next invoice. Default 0." example:"35.00"`
	PaymentStopDays   *int        `json:"paymentStopDays" minimum:"0" maximum:"365" description:"Days after the last reminder that the subscription is cancelled (payment stop), settled by the proration policy. Left out: no payment stop."`
	ProrationPolicyID *string     `json:"prorationPolicyId" format:"uuid" description:"How cancellations and plan changes of periods invoiced under this process are prorated. Left out: prorate both ways."`
	IsDefault         *bool       `json:"isDefault" description:"The process for invoices whose billing plan names none. One per tenant: a new default replaces the old."`
	// CancellationProrationID is INFO-Subscription's name for
	// ProrationPolicyID (docs/MIGRATION.md).
	CancellationProrationID *string `json:"cancellationProrationId" format:"uuid" description:"The same as prorationPolicyId, under the name INFO-Subscription clients use; give one of them."`
}

func (s *Server) dunningProcess(r *http.Request, in DunningProcessInput) (invoicing.DunningProcess, error) {
	var errs validation.Errors
	d := invoicing.DunningProcess{Name: apikit.Text(&errs, "name", in.Name, 200, true), ReminderDays: in.ReminderDays, ReminderFee: "0"}
	if len(in.ReminderDays) == 0 || len(in.ReminderDays) > 10 {
		errs.Add("reminderDays", "must list 1 to 10 days")
	}
	for i, day := range in.ReminderDays {
		// At least a day after the due date keeps every reminder after the
		// engine batch that issued its invoice (see engine.step).
		if day < 1 || day > 365 || i > 0 && day <= in.ReminderDays[i-1] {
			errs.Add("reminderDays", "must be strictly ascending days from 1 to 365")
			break
		}
	}
	if in.ReminderFee != "" {
		fee, err := decimal.NewFromString(string(in.ReminderFee))
		switch {
		case err != nil:
			errs.Add("reminderFee", "must be a number")
		case fee.Sign() < 0 || fee.Exponent() < -2 || fee.GreaterThan(decimal.NewFromInt(100000)):
			errs.Add("reminderFee", "must be from 0 to 100000 with at most 2 decimals")
		default:
			d.ReminderFee = json.Number(fee.StringFixed(2))
		}
	}
	if in.PaymentStopDays != nil {
		if *in.PaymentStopDays < 0 || *in.PaymentStopDays > 365 {
			errs.Add("paymentStopDays", "must be from 0 to 365")
		}
		d.PaymentStopDays = in.PaymentStopDays
	}
	policyField, policy := "prorationPolicyId", in.ProrationPolicyID
	if alias := normID(in.CancellationProrationID); alias != "" {
		if id := normID(policy); id != "" && id != alias {
			errs.Add("cancellationProrationId", "is another name for prorationPolicyId and differs from it; give one of them")
		}
		policyField, policy = "cancellationProrationId", in.CancellationProrationID
	}
	if id := normID(policy); id != "" {
		if !store.ValidID(id) {
			errs.Add(policyField, "must be a uuid")
		} else if _, err := s.app.ProrationPolicy(r.Context(), id); err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				return d, err
			}
			errs.Add(policyField, "there is no proration policy %s", id)
		}
		d.ProrationPolicyID = &id
	}
	d.IsDefault = in.IsDefault != nil && *in.IsDefault
	return d, errs.Err()
}

type prorationPolicyUpdate struct {
	apikit.IDParam
	ProrationPolicyInput
}

type dunningProcessUpdate struct {
	apikit.IDParam
	DunningProcessInput
}

func (s *Server) dunningRoutes() {
	const ptag = "ProrationPolicy"
	s.add(route{method: http.MethodPost, path: "/prorationpolicy", id: "createProrationPolicy", tag: ptag,
		summary: "Create a proration policy",
		desc: "Day-based: amount × remaining days / period days, rounded per invoice line. A dunning process refers to it; " +
			"invoices issued under that process are prorated by it when their period ends early.",
		request: new(ProrationPolicyInput), responses: common(respCreated), handle: s.createProrationPolicy})
	s.add(route{method: http.MethodGet, path: "/prorationpolicy", id: "listProrationPolicies", tag: ptag,
		summary: "List proration policies", request: new(apikit.ListParams),
		responses: common(respList(new([]invoicing.ProrationPolicy))), handle: listAll(s, s.app.ProrationPolicies)})
	s.add(route{method: http.MethodGet, path: "/prorationpolicy/{id}", id: "getProrationPolicy", tag: ptag,
		summary: "Get a proration policy", request: new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, body: new(invoicing.ProrationPolicy)}, respNotFound), handle: apikit.GetOne(s.app.ProrationPolicy)})
	s.add(route{method: http.MethodPut, path: "/prorationpolicy/{id}", id: "updateProrationPolicy", tag: ptag,
		summary: "Replace a proration policy's fields", request: new(prorationPolicyUpdate),
		responses: common(respNoContent, respNotFound), handle: s.updateProrationPolicy})
	s.add(route{method: http.MethodDelete, path: "/prorationpolicy/{id}", id: "deleteProrationPolicy", tag: ptag,
		summary: "Delete a proration policy", desc: "A policy a dunning process refers to is not deleted (400 naming `id`).",
		request: new(apikit.IDParam), responses: common(respNoContent, respNotFound), handle: s.deleteProrationPolicy})

	const dtag = "DunningProcess"
	s.add(route{method: http.MethodPost, path: "/dunningprocess", id: "createDunningProcess", tag: dtag,
		summary: "Create a dunning process",
		desc: "Reminders go out the given days after an unpaid invoice's due date, each with the fee (a charge billed on the " +
			"next invoice); paymentStopDays after the last one the subscription is cancelled. An invoice follows the process " +
			"of its billing plan (`dunningProcessId`), else the tenant's default, chosen when it is issued. Paying or crediting " +
			"the invoice in full stops its reminders.",
		request: new(DunningProcessInput), responses: common(respCreated), handle: s.createDunningProcess})
	s.add(route{method: http.MethodGet, path: "/dunningprocess", id: "listDunningProcesses", tag: dtag,
		summary: "List dunning processes", request: new(apikit.ListParams),
		responses: common(respList(new([]invoicing.DunningProcess))), handle: listAll(s, s.app.DunningProcesses)})
	s.add(route{method: http.MethodGet, path: "/dunningprocess/{id}", id: "getDunningProcess", tag: dtag,
		summary: "Get a dunning process", request: new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, body: new(invoicing.DunningProcess)}, respNotFound), handle: apikit.GetOne(s.app.DunningProcess)})
	s.add(route{method: http.MethodPut, path: "/dunningprocess/{id}", id: "updateDunningProcess", tag: dtag,
		summary: "Replace a dunning process's fields",
		desc:    "Invoices already in dunning follow the new schedule from their next action on.",
		request: new(dunningProcessUpdate), responses: common(respNoContent, respNotFound), handle: s.updateDunningProcess})
	s.add(route{method: http.MethodDelete, path: "/dunningprocess/{id}", id: "deleteDunningProcess", tag: dtag,
		summary: "Delete a dunning process",
		desc:    "A process a billing plan refers to is not deleted (400 naming `id`). Invoices in dunning under it stop dunning.",
		request: new(apikit.IDParam), responses: common(respNoContent, respNotFound), handle: s.deleteDunningProcess})
}

func (s *Server) createProrationPolicy(w http.ResponseWriter, r *http.Request) error {
	var in ProrationPolicyInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	p, err := in.policy()
	if err != nil {
		return err
	}
	if p, err = s.app.CreateProrationPolicy(r.Context(), p); err != nil {
		return err
	}
	s.created(w, "/prorationpolicy/"+p.ID, p.ID)
	return nil
}

func (s *Server) updateProrationPolicy(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in ProrationPolicyInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	p, err := in.policy()
	if err != nil {
		return err
	}
	p.ID = id
	if err := s.app.UpdateProrationPolicy(r.Context(), p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteProrationPolicy(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.app.DeleteProrationPolicy(r.Context(), id); err != nil {
		return catalogError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) createDunningProcess(w http.ResponseWriter, r *http.Request) error {
	var in DunningProcessInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	d, err := s.dunningProcess(r, in)
	if err != nil {
		return err
	}
	if d, err = s.app.CreateDunningProcess(r.Context(), d); err != nil {
		return catalogError(err)
	}
	s.created(w, "/dunningprocess/"+d.ID, d.ID)
	return nil
}

func (s *Server) updateDunningProcess(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := s.app.DunningProcess(r.Context(), id); err != nil {
		return err
	}
	var in DunningProcessInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	d, err := s.dunningProcess(r, in)
	if err != nil {
		return err
	}
	d.ID = id
	if err := s.app.UpdateDunningProcess(r.Context(), d); err != nil {
		return catalogError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteDunningProcess(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.app.DeleteDunningProcess(r.Context(), id); err != nil {
		return catalogError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
