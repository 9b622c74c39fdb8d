package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

type accountListParams struct {
	ListParams
	SubscriberID string `query:"subscriberId" format:"uuid" description:"Only accounts of this subscriber."`
	Currency     string `query:"currency" description:"Only accounts in this ISO 4217 currency."`
}

// AccountItemInput is the body of POST /subscriberaccount/{id}/charge and
// /allowance.
type AccountItemInput struct {
	Amount      *number `json:"amount" required:"true" description:"Gross amount (> 0) in the account's currency, with at most its minor-unit decimals." example:"49.00"`
	Description *string `json:"description" required:"true" maxLength:"500" example:"Replacement of damaged paper"`
	VATRate     *number `json:"vatRate" description:"VAT rate in percent (0..100) that splits the amount into net and VAT on the invoice line. Required unless productId is given; 0 must be said explicitly." example:"25"`
	ProductID   *string `json:"productId" format:"uuid" description:"The product the charge or allowance is for: its VAT rate is used when vatRate is left out, and must equal vatRate when both are given."`
}

type accountItemRequest struct {
	idParam
	AccountItemInput
}

func (s *Server) subscriberAccountRoutes() {
	const tag = "SubscriberAccount"
	ok := func(body any) response { return response{status: http.StatusOK, body: body} }
	s.add(route{method: http.MethodGet, path: "/subscriberaccount/{id}", id: "getSubscriberAccount", tag: tag,
		summary: "Get a subscriber account",
		desc: fmt.Sprintf("The balance (sum of the ledger entries), outstanding charges, available allowance and the newest entries (at most %d, newest first).",
			store.AccountEntriesShown),
		request: new(idParam), responses: common(ok(new(store.SubscriberAccount)), respNotFound), handle: getOne(s.store.SubscriberAccount)})
	s.add(route{method: http.MethodGet, path: "/subscriberaccount", id: "listSubscriberAccounts", tag: tag,
		summary: "List subscriber accounts", desc: "Accounts with their balances; entries are left out.",
		request: new(accountListParams), responses: common(ok(new([]store.SubscriberAccount))), handle: s.listSubscriberAccounts})
	s.add(route{method: http.MethodGet, path: "/subscriberaccount/{id}/entries", id: "listSubscriberAccountEntries", tag: tag,
		summary: "List the ledger entries of a subscriber account", desc: "Oldest first, paged.",
		request: &struct {
			idParam
			ListParams
		}{}, responses: common(ok(new([]store.AccountEntry)), respNotFound), handle: s.listAccountEntries})
	s.add(route{method: http.MethodPost, path: "/subscriberaccount/{id}/charge", id: "createCharge", tag: tag,
		summary: "Charge a subscriber account",
		desc:    "Books a charge now; the next invoice of the account bills it as an extra line (in arrears).",
		request: new(accountItemRequest), responses: common(respCreated, respNotFound), handle: s.accountItem(billing.ItemCharge)})
	s.add(route{method: http.MethodPost, path: "/subscriberaccount/{id}/allowance", id: "createAllowance", tag: tag,
		summary: "Give a subscriber account an allowance",
		desc: "Books an allowance now; the next invoices apply it as a negative line, never taking an invoice below zero; " +
			"what is left carries forward.",
		request: new(accountItemRequest), responses: common(respCreated, respNotFound), handle: s.accountItem(billing.ItemAllowance)})
}

func (s *Server) listSubscriberAccounts(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := page(r, &errs)
	q := r.URL.Query()
	f := store.AccountFilter{SubscriberID: strings.ToLower(strings.TrimSpace(q.Get("subscriberId"))), Currency: strings.ToUpper(strings.TrimSpace(q.Get("currency")))}
	if f.SubscriberID != "" && !store.ValidID(f.SubscriberID) {
		errs.Add("subscriberId", "must be a uuid")
	}
	if f.Currency != "" {
		if _, ok := money.LookupCurrency(f.Currency); !ok {
			errs.Add("currency", "%q is not an ISO 4217 currency code", f.Currency)
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	as, next, err := s.store.ListSubscriberAccounts(r.Context(), f, p)
	if err != nil {
		return err
	}
	if as == nil {
		as = []store.SubscriberAccount{}
	}
	s.writeList(w, r, as, next)
	return nil
}

func (s *Server) listAccountEntries(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var errs validation.Errors
	p := page(r, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	es, next, err := s.store.AccountEntries(r.Context(), id, p)
	if err != nil {
		return err
	}
	s.writeList(w, r, es, next)
	return nil
}

func (s *Server) accountItem(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathID(r, "id")
		if err != nil {
			return err
		}
		var in AccountItemInput
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		// The account's currency says how many decimals amount may have.
		code, err := s.store.AccountCurrency(r.Context(), id)
		if err != nil {
			return err
		}
		cur, _ := money.LookupCurrency(code)
		var (
			errs   validation.Errors
			amount catalog.Amount
		)
		if in.Amount == nil {
			errs.Add("amount", "is required")
		} else if d, err := in.Amount.decimal(); err != nil {
			errs.Add("amount", "%s", err)
		} else if d.Sign() <= 0 {
			errs.Add("amount", "must be more than 0")
		} else if amount, err = catalog.ParseAmount(d, cur); err != nil {
			errs.Add("amount", "%s", err)
		}
		desc := text(&errs, "description", in.Description, 500, true)
		rate, err := s.itemVATRate(r.Context(), &errs, in)
		if err != nil {
			return err
		}
		if err := errs.Err(); err != nil {
			return err
		}
		now, err := s.tenantNow(r.Context())
		if err != nil {
			return err
		}
		it, err := invoicing.AddAccountItem(r.Context(), s.store, id, kind, desc, amount.Minor, rate, now)
		if err != nil {
			return err
		}
		s.created(w, "/subscriberaccount/"+id, it.ID)
		return nil
	}
}

// itemVATRate is the VAT rate of a charge or allowance: the given vatRate,
// else the rate of the named product. Neither is a 400: a rate left out
// used to mean 0 %, which bills a taxable charge without its VAT and
// gives back more than was charged with an allowance.
func (s *Server) itemVATRate(ctx context.Context, errs *validation.Errors, in AccountItemInput) (catalog.Percent, error) {
	var (
		rate, product       catalog.Percent
		hasRate, hasProduct bool
	)
	if in.VATRate != nil {
		rate, hasRate = percent(errs, "vatRate", *in.VATRate)
	}
	if id := strings.ToLower(trimmed(in.ProductID)); id != "" {
		if !store.ValidID(id) {
			errs.Add("productId", "must be a uuid")
		} else if p, err := s.app.Product(ctx, id); errors.Is(err, store.ErrNotFound) {
			errs.Add("productId", "no product %s in this tenant", id)
		} else if err != nil {
			return catalog.Percent{}, err
		} else {
			product, hasProduct = p.VATRate, true
		}
	}
	switch {
	case hasRate && hasProduct && !rate.Equal(product):
		errs.Add("vatRate", "is %s%%, but product %s has %s%%", rate, trimmed(in.ProductID), product)
	case hasRate:
		return rate, nil
	case hasProduct:
		return product, nil
	case in.VATRate == nil && trimmed(in.ProductID) == "":
		errs.Add("vatRate", "is required (or productId, whose VAT rate is used); give 0 for an item without VAT")
	}
	return rate, nil
}
