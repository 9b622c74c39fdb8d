package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/invoicedoc/pdftext"
	"github.com/kadens/kadens/internal/store"
)

// payableOrg is an organization with everything its invoices need to be
// paid, typed the way people write it.
func payableOrg() map[string]any {
	o := validOrg()
	o["address"] = map[string]any{"line1": "Akersgata 55", "postalCode": "0180", "city": "Oslo"}
	o["bankAccount"] = map[string]any{"accountNumber": "8601.11.17947", "iban": "no93 8601 1117 947", "bic": "dnbanokk"}
	return o
}

func TestOrganizationPayableFields(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		id := e.Do("POST", "/organization", payableOrg()).ID(t)
		var o store.Organization
		e.Do("GET", "/organization/"+id, nil).JSON(t, &o)
		want := store.Address{Line1: "Akersgata 55", PostalCode: "0180", City: "Oslo", Country: "NO"}
		if o.Address != want {
			t.Errorf("address %+v, want %+v (country defaults to the organization's)", o.Address, want)
		}
		if b := (store.BankAccount{AccountNumber: "86011117947", IBAN: "NO9386011117947", BIC: "DNBANOKK"}); o.BankAccount != b {
			t.Errorf("bank account %+v, want the canonical %+v", o.BankAccount, b)
		}
		// Defaults: VAT-registered; an AS is in Foretaksregisteret.
		if !o.VATRegistered || !o.BusinessRegister {
			t.Errorf("vatRegistered %v, businessRegister %v; want both true for a Norwegian AS", o.VATRegistered, o.BusinessRegister)
		}

		// Another tenant can neither read nor overwrite them.
		b := e.NewTenant("tenant-b", false)
		other := payableOrg()
		other["bankAccount"] = map[string]any{"iban": "GB82 WEST 1234 5698 7654 32"}
		if r := b.Do("PUT", "/organization/"+id, other); r.Status != http.StatusNotFound {
			t.Errorf("tenant B PUT: %d", r.Status)
		}
		if r := b.Do("GET", "/organization/"+id, nil); r.Status != http.StatusNotFound {
			t.Errorf("tenant B GET: %d", r.Status)
		}
		e.Do("GET", "/organization/"+id, nil).JSON(t, &o)
		if o.BankAccount.IBAN != "NO9386011117947" {
			t.Errorf("tenant B changed tenant A's account: %+v", o.BankAccount)
		}

		// PUT replaces: a Swedish organization with an IBAN only, not
		// VAT-registered; leaving address and account out clears them.
		upd := map[string]any{"name": "Nordavis Sverige AB", "country": "SE", "currency": "SEK", "vatRegistered": false,
			"bankAccount": map[string]any{"iban": "SE45 5000 0000 0583 9825 7466", "bic": "ESSESESS"}}
		if r := e.Do("PUT", "/organization/"+id, upd); r.Status != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		e.Do("GET", "/organization/"+id, nil).JSON(t, &o)
		if o.Address != (store.Address{}) || o.BankAccount != (store.BankAccount{IBAN: "SE4550000000058398257466", BIC: "ESSESESS"}) ||
			o.VATRegistered || o.BusinessRegister {
			t.Errorf("after PUT: %+v", o)
		}

		// GET-modify-PUT keeps every field.
		var again store.Organization
		if r := e.Do("PUT", "/organization/"+id, o); r.Status != http.StatusNoContent {
			t.Fatalf("PUT of what GET returned: %d %s", r.Status, r.Body)
		}
		e.Do("GET", "/organization/"+id, nil).JSON(t, &again)
		again.UpdatedAt = o.UpdatedAt
		if again != o {
			t.Errorf("GET-modify-PUT changed %+v to %+v", o, again)
		}

		// A Norwegian company not named AS may say it is registered.
		enk := map[string]any{"name": "Kari Nordmann Konsult", "country": "NO", "currency": "NOK", "organizationNumber": "974 760 673",
			"businessRegister": true}
		e.Do("GET", "/organization/"+e.Do("POST", "/organization", enk).ID(t), nil).JSON(t, &o)
		if !o.BusinessRegister || !o.VATRegistered || o.OrganizationNumber != "974760673" {
			t.Errorf("enterprise: %+v", o)
		}
	})
}

func TestOrganizationPayableValidation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		with := func(change func(map[string]any)) map[string]any {
			o := payableOrg()
			change(o)
			return o
		}
		account := func(a map[string]any) func(map[string]any) {
			return func(o map[string]any) { o["bankAccount"] = a }
		}
		for _, tc := range []struct {
			name   string
			body   map[string]any
			fields []string
		}{
			{"kontonummer check digit", with(account(map[string]any{"accountNumber": "8601.11.17948"})), []string{"bankAccount.accountNumber"}},
			{"kontonummer length", with(account(map[string]any{"accountNumber": "8601.11.1794"})), []string{"bankAccount.accountNumber"}},
			{"IBAN check digits", with(account(map[string]any{"iban": "NO94 8601 1117 947"})), []string{"bankAccount.iban"}},
			{"IBAN length of its country", with(account(map[string]any{"iban": "DE89 3704 0044 0532 0130 0"})), []string{"bankAccount.iban"}},
			{"BIC shape", with(account(map[string]any{"iban": "NO93 8601 1117 947", "bic": "DNBANOK"})), []string{"bankAccount.bic"}},
			{"BIC without IBAN", with(account(map[string]any{"accountNumber": "86011117947", "bic": "DNBANOKK"})), []string{"bankAccount.bic"}},
			{"Norwegian IBAN of another account", with(account(map[string]any{"accountNumber": "15033895213", "iban": "NO93 8601 1117 947"})),
				[]string{"bankAccount.iban"}},
			{"every account field at once", with(account(map[string]any{"accountNumber": "1", "iban": "XX", "bic": "1"})),
				[]string{"bankAccount.accountNumber", "bankAccount.bic", "bankAccount.iban"}},
			{"incomplete address", with(func(o map[string]any) { o["address"] = map[string]any{"line2": "c/o Økonomi"} }),
				[]string{"address.city", "address.line1", "address.postalCode"}},
			{"Norwegian postal code", with(func(o map[string]any) {
				o["address"] = map[string]any{"line1": "x", "postalCode": "01800", "city": "Oslo"}
			}),
				[]string{"address.postalCode"}},
			{"address country", with(func(o map[string]any) {
				o["address"] = map[string]any{"line1": "x", "postalCode": "1", "city": "y", "country": "XX"}
			}), []string{"address.country"}},
			{"Norwegian organization number", with(func(o map[string]any) { o["organizationNumber"] = "923609017" }), []string{"organizationNumber"}},
			{"VAT-registered without a number", with(func(o map[string]any) { delete(o, "organizationNumber"); o["vatRegistered"] = true }),
				[]string{"organizationNumber"}},
			{"an AS outside Foretaksregisteret", with(func(o map[string]any) { o["businessRegister"] = false }), []string{"businessRegister"}},
			{"Foretaksregisteret outside Norway", with(func(o map[string]any) {
				o["name"], o["country"], o["businessRegister"] = "Nordavis AB", "SE", true
				delete(o, "address")
			}), []string{"businessRegister"}},
			{"wrong JSON type", with(func(o map[string]any) { o["vatRegistered"] = "yes" }), []string{"vatRegistered"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got := e.Do("POST", "/organization", tc.body).Fields(t)
				slices.Sort(got)
				if !slices.Equal(got, tc.fields) {
					t.Errorf("400 names %v, want %v", got, tc.fields)
				}
			})
		}
		var list []store.Organization
		e.Do("GET", "/organization", nil).JSON(t, &list)
		if len(list) != 0 {
			t.Fatalf("invalid requests left %d organizations behind", len(list))
		}
	})
}

// TestAccountItemVATRate: a charge or allowance states its VAT rate or
// names the product whose rate it takes; neither is a 400, never 0 %.
func TestAccountItemVATRate(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.advance(osloDay(2027, 1, 10))
		start := osloDay(2027, 2, 1)
		f.order(&start)
		account := f.invoices("")[0].SubscriberAccountID
		product := create(t, f.tn, "/product", map[string]any{"name": "Ekstra levering", "category": "print", "vatRate": 15})
		foreign := create(t, e.NewTenant("other", true), "/product", map[string]any{"name": "Theirs", "category": "print", "vatRate": 25})
		path := "/subscriberaccount/" + account + "/charge"
		for _, tc := range []struct {
			name string
			body map[string]any
			want []string
		}{
			{"no rate, no product", map[string]any{"amount": 10, "description": "x"}, []string{"vatRate"}},
			{"rate null", map[string]any{"amount": 10, "description": "x", "vatRate": nil}, []string{"vatRate"}},
			{"unknown product", map[string]any{"amount": 10, "description": "x", "productId": store.NewID()}, []string{"productId"}},
			{"another tenant's product", map[string]any{"amount": 10, "description": "x", "productId": foreign}, []string{"productId"}},
			{"malformed product id", map[string]any{"amount": 10, "description": "x", "productId": "p-1"}, []string{"productId"}},
			{"rate differs from the product's", map[string]any{"amount": 10, "description": "x", "vatRate": 25, "productId": product}, []string{"vatRate"}},
		} {
			if got := f.tn.Do("POST", path, tc.body).Fields(t); !slices.Equal(got, tc.want) {
				t.Errorf("%s: 400 names %v, want %v", tc.name, got, tc.want)
			}
		}
		create(t, f.tn, path, map[string]any{"amount": 115, "description": "Ekstra levering", "productId": product})
		create(t, f.tn, path, map[string]any{"amount": 20, "description": "Porto", "vatRate": 0})
		create(t, f.tn, "/subscriberaccount/"+account+"/allowance", map[string]any{"amount": 23, "description": "Goodwill", "productId": product, "vatRate": 15})
		f.advance(osloDay(2027, 2, 20))
		inv := f.invoices("")[1]
		got := map[string]string{}
		for _, l := range inv.Lines {
			if l.Kind == billing.LineCharge || l.Kind == billing.LineAllowance {
				got[l.Description] = l.VATRate.String() + " " + l.VAT.String()
			}
		}
		// 115.00 at 15 % is 100.00 + 15.00; −23.00 at 15 % is −20.00 − 3.00.
		want := map[string]string{"Ekstra levering": "15 15.00", "Porto": "0 0.00", "Goodwill": "15 -3.00"}
		for d, w := range want {
			if got[d] != w {
				t.Errorf("line %q: rate and VAT %q, want %q (all: %v)", d, got[d], w, got)
			}
		}
	})
}

// TestInvoiceShowsBankAccount: an invoice issued by an organization with
// a bank account can be paid from what it prints: the account next to the
// KID and the amount, in HTML and PDF, and the organization's later
// changes do not rewrite it.
func TestInvoiceShowsBankAccount(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		org := payableOrg()
		org["currency"] = "NOK"
		if r := f.tn.Do("PUT", "/organization/"+f.org, org); r.Status != http.StatusNoContent {
			t.Fatalf("PUT organization: %d %s", r.Status, r.Body)
		}
		f.order(nil)
		inv := f.invoices("")[0]
		if inv.Seller.BankAccount.AccountNumber != "86011117947" || !inv.Seller.VATRegistered || inv.Seller.Address.City != "Oslo" {
			t.Fatalf("seller snapshot: %+v", inv.Seller)
		}
		// A later change of account applies to later invoices only.
		org["bankAccount"] = map[string]any{"accountNumber": "1503.38.95213"}
		if r := f.tn.Do("PUT", "/organization/"+f.org, org); r.Status != http.StatusNoContent {
			t.Fatalf("PUT organization: %d %s", r.Status, r.Body)
		}
		path := "/invoice/" + inv.ID + "?lang=nb"
		page := string(f.tn.Do("GET", path, nil, "Accept", "text/html").Body)
		pdf := f.tn.Do("GET", path, nil, "Accept", "application/pdf")
		text, err := pdftext.Text(pdf.Body)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{inv.KID, "Kontonummer", "8601.11.17947", "IBAN NO93 8601 1117 947", "BIC DNBANOKK",
			"Organisasjonsnummer 923609016 MVA", "Foretaksregisteret", "Akersgata 55", "0180 Oslo", "Norge"} {
			if !strings.Contains(page, want) {
				t.Errorf("HTML lacks %q", want)
			}
			if !strings.Contains(text, want) {
				t.Errorf("PDF lacks %q", want)
			}
		}
		if strings.Contains(page, "1503.38.95213") || strings.Contains(text, "1503.38.95213") {
			t.Error("an issued invoice shows the organization's later account")
		}
		other := e.NewTenant("other", true)
		for _, accept := range []string{"text/html", "application/pdf"} {
			if r := other.Do("GET", path, nil, "Accept", accept); r.Status != http.StatusNotFound || len(r.Body) != 0 {
				t.Errorf("other tenant %s: %d %q", accept, r.Status, r.Body)
			}
		}
	})
}

// TestBusinessRegisterDefault: a Norwegian AS or ASA is in
// Foretaksregisteret unless it says otherwise (which is refused); other
// organizations are not unless they say so.
func TestBusinessRegisterDefault(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		for _, tc := range []struct {
			name, country string
			want          bool
		}{
			{"Nordavis AS", "NO", true},
			{"Nordavis ASA", "NO", true},
			{"nordavis as", "NO", true},
			{"AS Nordavis", "NO", true},
			{"Nordavis Aksjeselskap", "NO", true},
			{"Nordavis", "NO", false},
			{"Assens Avis", "NO", false},
			{"Nordavis Sverige AB", "SE", false},
			{"Nordavis AS", "SE", false},
		} {
			id := create(t, e.Tenant, "/organization", map[string]any{"name": tc.name, "country": tc.country, "currency": "NOK"})
			var o store.Organization
			e.Do("GET", "/organization/"+id, nil).JSON(t, &o)
			if o.BusinessRegister != tc.want {
				t.Errorf("%s (%s): businessRegister %v, want %v", tc.name, tc.country, o.BusinessRegister, tc.want)
			}
		}
	})
}
