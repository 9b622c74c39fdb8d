package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/app"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

type accountListParams struct {
	apikit.ListParams
	SubscriberID string `query:"subscriberId" format:"uuid" description:"Only accounts of this subscriber."`
	Currency     string `query:"currency" description:"Only accounts in this ISO 4217 currency."`
}

// AccountItemInput is the body of POST /subscriberaccount/{id}/charge and
// /allowance.
type AccountItemInput struct {
	Amount      *apikit.Number `json:"amount" required:"true" description:"Gross amount (> 0) in the account's currency, with at most its minor-unit decimals." example:"49.00"`
	Description *string        `json:"description" required:"true" maxLength:"500" example:"Replacement of damaged paper"`
	VATRate     *apikit.Number `json:"vatRate" description:"VAT rate in percent (0..100) that splits the amount into net and VAT on the invoice line. Required unless productId is given; 0 must be said explicitly." example:"25"`
	ProductID   *string        `json:"productId" format:"uuid" description:"The product the charge or allowance is for: its VAT rate is used when vatRate is left out, and must equal vatRate when both are given."`
}

type accountItemRequest struct {
	apikit.IDParam
	AccountItemInput
}

func (s *Server) subscriberAccountRoutes() {
	const tag = "SubscriberAccount"
	s.add(route{method: http.MethodGet, path: "/subscriberaccount/{id}", id: "getSubscriberAccount", tag: tag,
		summary: "Get a subscriber account",
		desc: fmt.Sprintf("The balance (sum of the ledger entries), outstanding charges, available allowance and the newest entries (at most %d, newest first).",
			store.AccountEntriesShown),
		request: new(apikit.IDParam), responses: common(respOK(new(store.SubscriberAccount)), respNotFound), handle: apikit.GetOne(s.app.SubscriberAccount)})
	s.add(route{method: http.MethodGet, path: "/subscriberaccount", id: "listSubscriberAccounts", tag: tag,
		summary: "List subscriber accounts", desc: "Accounts with their balances; entries are left out.",
		request: new(accountListParams), responses: common(respOK(new([]store.SubscriberAccount))), handle: s.listSubscriberAccounts})
	s.add(route{method: http.MethodGet, path: "/subscriberaccount/{id}/entries", id: "listSubscriberAccountEntries", tag: tag,
		summary: "List the ledger entries of a subscriber account", desc: "Oldest first, paged.",
		request: &struct {
			apikit.IDParam
			apikit.ListParams
		}{}, responses: common(respOK(new([]store.AccountEntry)), respNotFound), handle: s.listAccountEntries})
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
	p := apikit.Page(r, &errs)
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
	as, next, err := s.app.SubscriberAccounts(r.Context(), f, p)
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
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	es, next, err := s.app.AccountEntries(r.Context(), id, p)
	if err != nil {
		return err
	}
	s.writeList(w, r, es, next)
	return nil
}

func (s *Server) accountItem(kind string) apikit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := apikit.PathID(r, "id")
		if err != nil {
			return err
		}
		var in AccountItemInput
		if err := apikit.DecodeJSON(r, &in); err != nil {
			return err
		}
		// The account's currency says how many decimals amount may have.
		code, err := s.app.AccountCurrency(r.Context(), id)
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
		} else if d, err := in.Amount.Decimal(); err != nil {
			errs.Add("amount", "%s", err)
		} else if d.Sign() <= 0 {
			errs.Add("amount", "must be more than 0")
		} else if amount, err = catalog.ParseAmount(d, cur); err != nil {
			errs.Add("amount", "%s", err)
		}
		desc := apikit.Text(&errs, "description", in.Description, 500, true)
		rate, product := itemVATRate(&errs, in)
		it, err := s.app.AddAccountItem(r.Context(), app.NewAccountItem{AccountID: id, Kind: kind, Amount: amount.Minor,
			Description: desc, VATRate: rate, ProductID: product, Invalid: errs})
		if err != nil {
			return err
		}
		s.created(w, "/subscriberaccount/"+id, it.ID)
		return nil
	}
}

// itemVATRate reads the VAT rate of a charge or allowance and the product
// whose rate applies (app.AddAccountItem checks it). Neither is a 400: a
// rate left out used to mean 0 %, which bills a taxable charge without its
// VAT and gives back more than was charged with an allowance.
func itemVATRate(errs *validation.Errors, in AccountItemInput) (*catalog.Percent, string) {
	var rate *catalog.Percent
	if in.VATRate != nil {
		if r, ok := percent(errs, "vatRate", *in.VATRate); ok {
			rate = &r
		}
	}
	product := ""
	if id := strings.ToLower(apikit.Trimmed(in.ProductID)); id != "" {
		if !store.ValidID(id) {
			errs.Add("productId", "must be a uuid")
		} else {
			product = apikit.Trimmed(in.ProductID)
		}
	}
	if in.VATRate == nil && apikit.Trimmed(in.ProductID) == "" {
		errs.Add("vatRate", "is required (or productId, whose VAT rate is used); give 0 for an item without VAT")
	}
	return rate, product
}
