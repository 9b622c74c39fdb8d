// Package bookkeeping is Kadens' general ledger (docs/BOOKKEEPING.md): an
// organization's chart of accounts with its SAF-T codes and mapping rules,
// journal entries posted from billing documents by an outbox consumer,
// deferred revenue and its recognition, closed accounting periods, the
// reports and the exports. The billing balances' own consistency check is
// internal/ledger; this wing derives the bookkeeping from the documents and
// never decides anything about money itself.
package bookkeeping

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/validation"
)

// Account types, the SAF-T AccountType's classes of the chart.
const (
	Asset     = "Asset"
	Liability = "Liability"
	Equity    = "Equity"
	Revenue   = "Revenue"
	Expense   = "Expense"
)

// Roles of mapping rules: which account a posting line goes to.
const (
	RoleRevenue = "revenue"
	RoleBank    = "bank"
)

// Chart is an organization's chart of accounts, set whole by the merchant.
type Chart struct {
	Accounts []BooksAccount `json:"accounts" required:"true"`
	// VATCodes map each VAT rate the organization invoices with to its
	// SAF-T standard tax code and its output VAT account.
	VATCodes []BooksVATCode `json:"vatCodes" required:"true"`
	// ReceivableAccount is the customers' account (the subscriber
	// accounts' balances); DeferredAccount holds unearned revenue.
	ReceivableAccount string `json:"receivableAccount" required:"true"`
	DeferredAccount   string `json:"deferredAccount" required:"true"`
	// Rules choose the revenue account of an invoice line and the bank
	// account of a payment; the most specific matching rule wins.
	Rules []BooksRule `json:"rules" required:"true"`
}

// BooksAccount is one account of the chart.
type BooksAccount struct {
	Number string `json:"number" required:"true"`
	Name   string `json:"name" required:"true"`
	Type   string `json:"type" required:"true" enum:"Asset,Liability,Equity,Revenue,Expense"`
	// GroupingCategory and GroupingCode are the SAF-T grouping
	// (næringsspesifikasjon) the account reports under.
	GroupingCategory string `json:"groupingCategory" required:"true"`
	GroupingCode     string `json:"groupingCode" required:"true"`
}

// BooksVATCode maps a VAT rate to its SAF-T standard tax code.
type BooksVATCode struct {
	Rate    string `json:"rate" required:"true" description:"The VAT rate in percent, as on invoice lines (25, 12.5, 0)."`
	TaxCode string `json:"taxCode" required:"true" description:"The SAF-T standard tax code of output VAT at this rate."`
	Account string `json:"account" required:"true" description:"The output VAT account."`
}

// BooksRule maps a posting to an account. Empty criteria match anything.
type BooksRule struct {
	Role      string `json:"role" required:"true" enum:"revenue,bank"`
	ProductID string `json:"productId,omitempty"`
	VATRate   string `json:"vatRate,omitempty"`
	LineKind  string `json:"lineKind,omitempty" description:"An invoice line's kind: Product, AdditionalProduct, Charge, Allowance."`
	Provider  string `json:"provider,omitempty" description:"A payment's provider (bank rules)."`
	Account   string `json:"account" required:"true"`
}

var accountNumber = regexp.MustCompile(`^[0-9]{1,10}$`)

// Validate checks the chart as a whole: every account referred to exists,
// every rate has one code, and there is a fallback rule for revenue and
// for the bank, so that every document can post.
func (c Chart) Validate() error {
	var errs validation.Errors
	known := map[string]BooksAccount{}
	for i, a := range c.Accounts {
		f := fmt.Sprintf("accounts[%d]", i)
		if !accountNumber.MatchString(a.Number) {
			errs.Add(f+".number", "must be 1 to 10 digits")
		} else if _, dup := known[a.Number]; dup {
			errs.Add(f+".number", "account %s appears twice", a.Number)
		}
		if strings.TrimSpace(a.Name) == "" || validation.TextProblem(a.Name, false) != "" {
			errs.Add(f+".name", "is required, one line of text")
		}
		switch a.Type {
		case Asset, Liability, Equity, Revenue, Expense:
		default:
			errs.Add(f+".type", "must be Asset, Liability, Equity, Revenue or Expense")
		}
		if (a.GroupingCode == "") != (a.GroupingCategory == "") {
			errs.Add(f+".groupingCode", "groupingCategory and groupingCode go together")
		}
		known[a.Number] = a
	}
	ref := func(field, number string, types ...string) {
		a, ok := known[number]
		if !ok {
			errs.Add(field, "names no account of the chart (%q)", number)
			return
		}
		for _, t := range types {
			if a.Type == t {
				return
			}
		}
		errs.Add(field, "account %s is of type %s, not %s", number, a.Type, strings.Join(types, " or "))
	}
	ref("receivableAccount", c.ReceivableAccount, Asset)
	ref("deferredAccount", c.DeferredAccount, Liability)
	rates := map[string]bool{}
	for i, v := range c.VATCodes {
		f := fmt.Sprintf("vatCodes[%d]", i)
		d, err := decimal.NewFromString(v.Rate)
		if err != nil || d.IsNegative() || d.GreaterThan(decimal.NewFromInt(100)) {
			errs.Add(f+".rate", "must be a percentage from 0 to 100")
		} else if rates[d.String()] {
			errs.Add(f+".rate", "rate %s appears twice", d.String())
		} else {
			rates[d.String()] = true
		}
		if !regexp.MustCompile(`^[0-9]{1,4}$`).MatchString(v.TaxCode) {
			errs.Add(f+".taxCode", "must be a SAF-T standard tax code (digits)")
		}
		ref(f+".account", v.Account, Liability)
	}
	fallback := map[string]bool{}
	for i, r := range c.Rules {
		f := fmt.Sprintf("rules[%d]", i)
		switch r.Role {
		case RoleRevenue:
			ref(f+".account", r.Account, Revenue)
			if r.Provider != "" {
				errs.Add(f+".provider", "applies to bank rules only")
			}
		case RoleBank:
			ref(f+".account", r.Account, Asset)
			if r.ProductID != "" || r.VATRate != "" || r.LineKind != "" {
				errs.Add(f+".role", "a bank rule matches on provider only")
			}
		default:
			errs.Add(f+".role", "must be revenue or bank")
			continue
		}
		if r.VATRate != "" {
			if _, err := decimal.NewFromString(r.VATRate); err != nil {
				errs.Add(f+".vatRate", "must be a percentage")
			}
		}
		switch r.LineKind {
		case "", "Product", "AdditionalProduct", "Charge", "Allowance":
		default:
			errs.Add(f+".lineKind", "must be Product, AdditionalProduct, Charge or Allowance")
		}
		if r.ProductID == "" && r.VATRate == "" && r.LineKind == "" && r.Provider == "" {
			fallback[r.Role] = true
		}
	}
	for _, role := range []string{RoleRevenue, RoleBank} {
		if !fallback[role] {
			errs.Add("rules", "needs a %s rule without criteria, the fallback", role)
		}
	}
	return errs.Err()
}

// normRate is a rate's canonical text (25.00 → 25), the key rates are
// compared by.
func normRate(s string) string {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return s
	}
	return d.String()
}

// vatCode finds the code of rate; ok is false when the chart has none.
func (c Chart) vatCode(rate string) (BooksVATCode, bool) {
	for _, v := range c.VATCodes {
		if normRate(v.Rate) == normRate(rate) {
			return v, true
		}
	}
	return BooksVATCode{}, false
}

// revenueAccount is the account of an invoice line: the matching revenue
// rule with the most criteria (the first of equals).
func (c Chart) revenueAccount(productID, rate, kind string) string {
	best, score := "", -1
	for _, r := range c.Rules {
		if r.Role != RoleRevenue {
			continue
		}
		n := 0
		if r.ProductID != "" {
			if r.ProductID != productID {
				continue
			}
			n += 4 // a product is more specific than a rate or a kind
		}
		if r.VATRate != "" {
			if normRate(r.VATRate) != normRate(rate) {
				continue
			}
			n++
		}
		if r.LineKind != "" {
			if r.LineKind != kind {
				continue
			}
			n += 2
		}
		if n > score {
			best, score = r.Account, n
		}
	}
	return best
}

// bankAccount is the account a payment through provider is booked to.
func (c Chart) bankAccount(provider string) string {
	best := ""
	for _, r := range c.Rules {
		if r.Role != RoleBank {
			continue
		}
		if r.Provider == provider {
			return r.Account
		}
		if r.Provider == "" && best == "" {
			best = r.Account
		}
	}
	return best
}

// account returns the chart's account of number.
func (c Chart) account(number string) (BooksAccount, bool) {
	for _, a := range c.Accounts {
		if a.Number == number {
			return a, true
		}
	}
	return BooksAccount{}, false
}
