package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/invoicedoc/pdftext"
	"github.com/kadens/kadens/internal/store"
)

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// TestInvoiceHTMLAndPDF renders a renewal invoice with a charge (amounts
// above a thousand, two VAT rates) as HTML and PDF through the API.
func TestInvoiceHTMLAndPDF(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		// The seller snapshot is taken at issue: rename first.
		if r := f.tn.Do("PUT", "/organization/"+f.org, map[string]any{"name": "Nordavis <script>alert(1)</script> AS",
			"organizationNumber": "923609016", "country": "NO", "currency": "NOK", "logoUrl": "https://cdn.example.com/nordavis.png"}); r.Status != http.StatusNoContent {
			t.Fatalf("PUT organization: %d %s", r.Status, r.Body)
		}
		f.advance(osloDay(2027, 1, 10).Add(12 * time.Hour))
		start := osloDay(2027, 2, 1)
		f.order(&start)
		account := f.invoices("")[0].SubscriberAccountID
		create(t, f.tn, "/subscriberaccount/"+account+"/charge", map[string]any{"amount": 1234.50, "description": "Ekstra levering – Tromsø", "vatRate": 25})
		f.advance(osloDay(2027, 2, 20)) // renewal issued 15 February, due 1 March
		inv := f.invoices("")[1]
		path := "/invoice/" + inv.ID

		r := f.tn.Do("GET", path, nil, "Accept", browserAccept)
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("HTML: %d %q %s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		if !slices.Contains(r.Header.Values("Vary"), "Accept") || !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("HTML headers: %v", r.Header)
		}
		page := string(r.Body)
		// VAT summary at 25 %: the add-on (39.20 + 9.80) and the charge
		// (987.60 + 246.90); at 0 %: the package, 199.00.
		for _, want := range []string{
			`<dd class="invoice-number">2</dd>`, `<div class="kid">` + inv.KID + `</div>`, `<dd class="due-date">2027-03-01</dd>`,
			`<dd class="issue-date">2027-02-15</dd>`, "Nordavis Digital", "Ekstra levering – Tromsø",
			`<tr><td class="num">25%</td><td class="num">1,026.80</td><td class="num">256.70</td><td class="num">1,283.50</td></tr>`,
			`<tr><td class="num">0%</td><td class="num">199.00</td><td class="num">0.00</td><td class="num">199.00</td></tr>`,
			`<div class="amount">NOK 1,482.50</div>`, `<div class="period">2027-03-01 – 2027-03-31</div>`,
			`<img class="logo" src="https://cdn.example.com/nordavis.png"`, `Nordavis &lt;script&gt;alert(1)&lt;/script&gt; AS`,
			`<span class="status issued">Issued</span>`, "Kari Nordmann",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("HTML lacks %q", want)
			}
		}
		if strings.Contains(page, "<script") {
			t.Fatal("the organization name became a script element")
		}

		nb := string(f.tn.Do("GET", path+"?lang=NB", nil, "Accept", "text/html").Body)
		for _, want := range []string{`<dd class="due-date">01.03.2027</dd>`, "1\u00a0026,80", "1\u00a0482,50", "Forfallsdato", "Utstedt"} {
			if !strings.Contains(nb, want) {
				t.Errorf("Norwegian HTML lacks %q", want)
			}
		}
		if got := f.tn.Do("GET", path+"?lang=de", nil, "Accept", "text/html").Fields(t); !slices.Equal(got, []string{"lang"}) {
			t.Errorf("lang=de: fields %v", got)
		}

		pdf := f.tn.Do("GET", path, nil, "Accept", "application/pdf")
		if pdf.Status != http.StatusOK || pdf.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(string(pdf.Body), "%PDF-") {
			t.Fatalf("PDF: %d %q %.40q", pdf.Status, pdf.Header.Get("Content-Type"), pdf.Body)
		}
		text, err := pdftext.Text(pdf.Body)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{inv.KID, "2027-03-01", "Ekstra levering – Tromsø", "1,283.50", "NOK 1,482.50", "Nordavis <script>alert(1)</script> AS"} {
			if !strings.Contains(text, want) {
				t.Errorf("PDF text lacks %q", want)
			}
		}

		// Overdue is derived for the documents as for JSON.
		f.advance(osloDay(2027, 3, 5))
		var j store.Invoice
		f.tn.Do("GET", path, nil).JSON(t, &j)
		if j.Status != billing.InvoiceOverdue {
			t.Fatalf("JSON status %s", j.Status)
		}
		if page := string(f.tn.Do("GET", path, nil, "Accept", "text/html").Body); !strings.Contains(page, `<span class="status overdue">Overdue</span>`) {
			t.Error("HTML does not show Overdue")
		}
	})
}

// TestInvoiceContentNegotiation: JSON stays the default; HTML and PDF on
// request; anything else is 406; another tenant's invoice is 404 in every
// format.
func TestInvoiceContentNegotiation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.order(nil)
		path := "/invoice/" + f.invoices("")[0].ID
		for _, tc := range []struct {
			accept string
			status int
			ctype  string
		}{
			{"", 200, "application/json; charset=utf-8"},
			{"*/*", 200, "application/json; charset=utf-8"},
			{"application/json", 200, "application/json; charset=utf-8"},
			{"application/*", 200, "application/json; charset=utf-8"},
			{"text/html", 200, "text/html; charset=utf-8"},
			{"TEXT/HTML; charset=utf-8", 200, "text/html; charset=utf-8"},
			{browserAccept, 200, "text/html; charset=utf-8"},
			{"application/json;q=0.5, application/pdf", 200, "application/pdf"},
			{"image/png", http.StatusNotAcceptable, ""},
			{"application/json;q=0", http.StatusNotAcceptable, ""},
			{"text/csv, application/xml", http.StatusNotAcceptable, ""},
		} {
			r := f.tn.Do("GET", path, nil, "Accept", tc.accept)
			if r.Status != tc.status || r.Header.Get("Content-Type") != tc.ctype {
				t.Errorf("Accept %q: %d %q, want %d %q", tc.accept, r.Status, r.Header.Get("Content-Type"), tc.status, tc.ctype)
			}
			if tc.status == http.StatusNotAcceptable && len(r.Body) != 0 {
				t.Errorf("Accept %q: 406 with a body: %s", tc.accept, r.Body)
			}
		}
		other := e.NewTenant("other", true)
		for _, accept := range []string{"text/html", "application/pdf", "application/json"} {
			if r := other.Do("GET", path, nil, "Accept", accept); r.Status != http.StatusNotFound || len(r.Body) != 0 {
				t.Errorf("other tenant, Accept %s: %d %s", accept, r.Status, r.Body)
			}
		}
		if r := f.tn.Do("GET", "/invoice/"+store.NewID(), nil, "Accept", "text/html"); r.Status != http.StatusNotFound {
			t.Errorf("missing invoice as HTML: %d", r.Status)
		}
	})
}

// TestOrganizationKIDAlgorithm: organizations choose MOD10 (default) or
// MOD11, and their invoices carry KIDs of that algorithm, including a
// MOD11 number whose plain body cannot carry a check digit (invoice 4).
func TestOrganizationKIDAlgorithm(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		org := func(id string) store.Organization {
			var o store.Organization
			if r := f.tn.Do("GET", "/organization/"+id, nil); r.Status != 200 {
				t.Fatalf("GET organization: %d", r.Status)
			} else {
				r.JSON(t, &o)
			}
			return o
		}
		if o := org(f.org); o.KIDAlgorithm != billing.KIDMod10 {
			t.Fatalf("default kidAlgorithm %q", o.KIDAlgorithm)
		}
		body := map[string]any{"name": "Nordavis AS", "country": "NO", "currency": "NOK", "kidAlgorithm": "mod11"}
		if r := f.tn.Do("PUT", "/organization/"+f.org, body); r.Status != http.StatusNoContent {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		if o := org(f.org); o.KIDAlgorithm != billing.KIDMod11 {
			t.Fatalf("kidAlgorithm after PUT %q", o.KIDAlgorithm)
		}
		mod10 := create(t, f.tn, "/organization", map[string]any{"name": "Sørvis AS", "country": "NO", "currency": "NOK", "kidAlgorithm": "MOD10"})
		if o := org(mod10); o.KIDAlgorithm != billing.KIDMod10 {
			t.Fatalf("created kidAlgorithm %q", o.KIDAlgorithm)
		}
		mod11 := create(t, f.tn, "/organization", map[string]any{"name": "Nordlys AS", "country": "NO", "currency": "NOK", "kidAlgorithm": "Mod11"})
		if o := org(mod11); o.KIDAlgorithm != billing.KIDMod11 {
			t.Fatalf("created kidAlgorithm %q", o.KIDAlgorithm)
		}
		var list []store.Organization
		f.tn.Do("GET", "/organization", nil).JSON(t, &list)
		for _, o := range list {
			if o.KIDAlgorithm == "" {
				t.Errorf("listed organization %s without kidAlgorithm", o.ID)
			}
		}
		for _, bad := range []any{"MOD97", "", 11} {
			b := map[string]any{"name": "X", "country": "NO", "currency": "NOK", "kidAlgorithm": bad}
			if bad == "" {
				continue // empty means the default
			}
			if got := f.tn.Do("POST", "/organization", b).Fields(t); !slices.Equal(got, []string{"kidAlgorithm"}) {
				t.Errorf("POST kidAlgorithm %v: fields %v", bad, got)
			}
			if got := f.tn.Do("PUT", "/organization/"+f.org, b).Fields(t); !slices.Equal(got, []string{"kidAlgorithm"}) {
				t.Errorf("PUT kidAlgorithm %v: fields %v", bad, got)
			}
		}

		// Four invoices of the MOD11 organization, one of the MOD10 one.
		for range 4 {
			f.order(nil)
		}
		f.org = mod10
		f.order(nil)
		kids := map[string][]string{}
		for _, inv := range f.invoices("limit=100") {
			alg := billing.KIDMod11
			if inv.OrganizationID == mod10 {
				alg = billing.KIDMod10
			}
			if !billing.ValidKID(inv.KID, alg) || inv.KID != billing.KID(inv.InvoiceNumber, alg) {
				t.Errorf("invoice %d of a %s organization: KID %s", inv.InvoiceNumber, alg, inv.KID)
			}
			kids[alg] = append(kids[alg], inv.KID)
		}
		// Invoice 4's body 00000000040 would need check digit 10: variant 1.
		if !slices.Equal(kids[billing.KIDMod11], []string{"000000000108", "000000000205", "000000000302", "000000000418"}) ||
			!slices.Equal(kids[billing.KIDMod10], []string{"00000000018"}) {
			t.Fatalf("KIDs %v", kids)
		}
	})
}
