package analytics_test

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
)

type client struct {
	t  *testing.T
	e  *apitest.Env
	tn apitest.Tenant
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (c client) get(path string, headers ...string) answer {
	return c.do("GET", path, headers...)
}

func (c client) do(method, path string, headers ...string) answer {
	c.t.Helper()
	u := path
	if !strings.HasPrefix(u, "http") {
		u = c.e.URL + "/analytics" + path
	} else {
		// nextLinks carry the public address; send them to the real listener.
		u = c.e.URL + strings.TrimPrefix(u, apitest.BaseURL)
	}
	u = strings.ReplaceAll(u, " ", "%20")
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.tn.Token)
	req.Header.Set("S4-TenantId", c.tn.ID)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

type page struct {
	Context  string           `json:"@odata.context"`
	Count    *int64           `json:"@odata.count"`
	Value    []map[string]any `json:"value"`
	NextLink string           `json:"@odata.nextLink"`
}

func (c client) page(path string, headers ...string) page {
	c.t.Helper()
	a := c.get(path, headers...)
	if a.status != 200 {
		c.t.Fatalf("GET %s: %d %s", path, a.status, a.body)
	}
	var p page
	if err := json.Unmarshal(a.body, &p); err != nil {
		c.t.Fatalf("GET %s: %v: %s", path, err, a.body)
	}
	return p
}

func q(s string) string { return url.PathEscape(s) }

func names(p page, prop string) []string {
	var out []string
	for _, v := range p.Value {
		out = append(out, fmt.Sprint(v[prop]))
	}
	return out
}

// seedTenant writes an organization, a product, a plan, a package and the
// given subscribers.
func seedTenant(t *testing.T, tn apitest.Tenant, subs []seed.Subscriber) []string {
	s := tn.Seed(t)
	var ids []string
	for _, sub := range subs {
		ids = append(ids, s.Subscriber(sub))
	}
	return ids
}

var people = []seed.Subscriber{
	{Name: "Kari Nordmann", Email: "kari@example.no", Country: "NO", ExternalID: "k-1"},
	{Name: "Ola Nordmann", Email: "ola@example.no", Country: "NO"},
	{Name: "Sven Svensson", Email: "sven@example.se", Country: "SE", ExternalID: "s-1"},
	{Name: "Mette Hansen", Email: "mette@example.dk", Country: "DK"},
	{Name: "O'Brien", Email: "ob@example.ie", Country: "IE"},
}

func TestAnalytics(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := client{t: t, e: e, tn: e.Tenant}
		ids := seedTenant(t, e.Tenant, people)
		other := e.NewTenant("other", false)
		otherIDs := seedTenant(t, other, []seed.Subscriber{{Name: "Intruder", Email: "x@example.no", Country: "NO"}})

		t.Run("service document and metadata", func(t *testing.T) {
			c := client{t: t, e: e, tn: e.Tenant}
			a := c.get("/")
			if a.status != 200 || !strings.Contains(string(a.body), `"Subscribers"`) {
				t.Fatalf("%d %s", a.status, a.body)
			}
			a = c.get("/$metadata")
			if a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "application/xml") {
				t.Fatalf("%d %s", a.status, a.header)
			}
			d := xml.NewDecoder(strings.NewReader(string(a.body)))
			for {
				if _, err := d.Token(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("metadata is not well-formed: %v", err)
				}
			}
			for _, want := range []string{`<EntitySet Name="Payments"`, `<NavigationProperty Name="Subscriber" Type="Kadens.Analytics.Subscriber" Partner="Payments"/>`} {
				if !strings.Contains(string(a.body), want) {
					t.Errorf("metadata lacks %s", want)
				}
			}
		})

		filters := []struct {
			filter string
			want   []string
		}{
			{"Country eq 'NO'", []string{"Kari Nordmann", "Ola Nordmann"}},
			{"Country eq 'NO' and startswith(Name,'Kari')", []string{"Kari Nordmann"}},
			{"(Country eq 'SE' or Country eq 'DK') and not (Name eq 'Sven Svensson')", []string{"Mette Hansen"}},
			{"Country in ('SE','IE')", []string{"O'Brien", "Sven Svensson"}},
			{"contains(tolower(Name),'nordmann')", []string{"Kari Nordmann", "Ola Nordmann"}},
			{"contains(Name,'nordmann')", nil},
			{"endswith(Email,'.dk')", []string{"Mette Hansen"}},
			{"Name eq 'O''Brien'", []string{"O'Brien"}},
			{"ExternalId eq null and Country eq 'DK'", []string{"Mette Hansen"}},
			{"ExternalId ne 'x' and Country eq 'DK'", []string{"Mette Hansen"}},
			{"year(CreatedAt) ge 2000 and Country eq 'IE'", []string{"O'Brien"}},
			{"date(CreatedAt) gt 2000-01-01 and Country eq 'IE'", []string{"O'Brien"}},
			{"CreatedAt lt 2000-01-01T00:00:00Z", nil},
			{"SubscriberNumber ge 1 and Country eq 'SE'", []string{"Sven Svensson"}},
			{"Id eq " + ids[0], []string{"Kari Nordmann"}},
			{"Id eq " + otherIDs[0], nil},
			{"Name eq 'Intruder'", nil},
		}
		for _, f := range filters {
			p := c.page("/Subscribers?$filter=" + q(f.filter))
			got := names(p, "Name")
			sort.Strings(got)
			if strings.Join(got, "|") != strings.Join(f.want, "|") {
				t.Errorf("%s: got %v, want %v", f.filter, got, f.want)
			}
		}

		t.Run("orderby select top skip count", func(t *testing.T) {
			c := client{t: t, e: e, tn: e.Tenant}
			p := c.page("/Subscribers?$orderby=Country desc,Name&$select=Name,Country&$top=3&$skip=1&$count=true")
			if got := strings.Join(names(p, "Name"), "|"); got != "Kari Nordmann|Ola Nordmann|O'Brien" {
				t.Errorf("got %s", got)
			}
			if p.Count == nil || *p.Count != 5 || len(p.Value[0]) != 2 {
				t.Errorf("count %v, row %v", p.Count, p.Value[0])
			}
			a := c.get("/Subscribers/$count?$filter=" + q("Country eq 'NO'"))
			if string(a.body) != "2" {
				t.Errorf("$count: %s", a.body)
			}
		})

		t.Run("key lookup and tenants", func(t *testing.T) {
			c := client{t: t, e: e, tn: e.Tenant}
			a := c.get("/Subscribers(" + ids[0] + ")")
			if a.status != 200 || !strings.Contains(string(a.body), "Kari Nordmann") {
				t.Fatalf("%d %s", a.status, a.body)
			}
			if a := c.get("/Subscribers(" + otherIDs[0] + ")"); a.status != 404 {
				t.Errorf("other tenant's subscriber: %d %s", a.status, a.body)
			}
			if a := c.get("/Subscribers(" + otherIDs[0] + ")/Payments"); a.status != 404 {
				t.Errorf("other tenant's navigation: %d %s", a.status, a.body)
			}
			p := c.page("/Subscribers(" + ids[0] + ")/SubscriberAccounts")
			if len(p.Value) != 0 {
				t.Errorf("accounts: %v", p.Value)
			}
			p = c.page("/Subscribers?$expand=" + q("Payments($top=2;$select=Amount),SubscriberAccounts") + "&$filter=" + q("Country eq 'NO'"))
			if len(p.Value) != 2 {
				t.Errorf("expand: %v", p.Value)
			}
			p = c.page("/Subscribers?$apply=" + q("groupby((Country),aggregate($count as N))"))
			if len(p.Value) != 4 {
				t.Errorf("apply: %v", p.Value)
			}
		})

		t.Run("paging", func(t *testing.T) {
			c := client{t: t, e: e, tn: e.Tenant}
			for _, order := range []string{"", "&$orderby=Country", "&$orderby=Country desc,ExternalId", "&$orderby=ExternalId",
				"&$orderby=ExternalId desc", "&$orderby=ExternalId,Country desc", "&$orderby=Country,ExternalId", "&$orderby=ExternalId desc,Country desc"} {
				seen := map[string]int{}
				var inOrder []string
				next := "/Subscribers?$select=Id" + order
				pages := 0
				for next != "" {
					p := c.page(next, "Prefer", "odata.maxpagesize=2")
					for _, v := range p.Value {
						seen[v["Id"].(string)]++
						inOrder = append(inOrder, v["Id"].(string))
					}
					next = p.NextLink
					pages++
					if pages > 10 {
						t.Fatal("paging does not end")
					}
				}
				// The pages, in order, are the one-page answer.
				whole := c.page("/Subscribers?$select=Id" + order)
				var ids []string
				for _, v := range whole.Value {
					ids = append(ids, v["Id"].(string))
				}
				if strings.Join(ids, ",") != strings.Join(inOrder, ",") {
					t.Errorf("%s: pages gave %v, one page %v", order, inOrder, ids)
				}
				if len(seen) != 5 || pages != 3 {
					t.Errorf("%s: seen %v in %d pages", order, seen, pages)
				}
				for id, n := range seen {
					if n != 1 {
						t.Errorf("%s seen %d times", id, n)
					}
				}
			}
			// A nullable key with ties (three subscribers have no ExternalId):
			// nulls sort as the largest values on both engines — last
			// ascending, first descending — and pages of two split the tie.
			for order, want := range map[string]string{"ExternalId": "k-1,s-1,<nil>,<nil>,<nil>", "ExternalId desc": "<nil>,<nil>,<nil>,s-1,k-1",
				"ExternalId desc,Name": "<nil>,<nil>,<nil>,s-1,k-1", "Country,ExternalId desc": "DK <nil>,IE <nil>,NO <nil>,NO k-1,SE s-1"} {
				var got []string
				for next := "/Subscribers?$select=ExternalId,Country&$orderby=" + q(order); next != ""; {
					p := c.page(next, "Prefer", "odata.maxpagesize=2")
					for _, v := range p.Value {
						if strings.HasPrefix(order, "Country") {
							got = append(got, fmt.Sprint(v["Country"], " ", v["ExternalId"]))
						} else {
							got = append(got, fmt.Sprint(v["ExternalId"]))
						}
					}
					next = p.NextLink
				}
				if strings.Join(got, ",") != want {
					t.Errorf("$orderby=%s: %s, want %s", order, strings.Join(got, ","), want)
				}
			}
			// $top counts across pages; $skip applies once; $expand pages too.
			var got []string
			next := "/Subscribers?$top=3&$skip=1&$orderby=Country&$select=Name&$expand=Payments"
			for next != "" {
				p := c.page(next, "Prefer", "odata.maxpagesize=2")
				got = append(got, names(p, "Name")...)
				next = p.NextLink
			}
			if strings.Join(got, "|") != "O'Brien|Kari Nordmann|Ola Nordmann" && strings.Join(got, "|") != "O'Brien|Ola Nordmann|Kari Nordmann" {
				t.Errorf("$top across pages: %v", got)
			}
			if p := c.page("/Subscribers?$top=1", "Accept", "application/json;odata.metadata=none"); p.Context != "" || len(p.Value) != 1 {
				t.Errorf("metadata=none: %+v", p)
			}
			if p := c.page("/Subscribers?$top=1"); p.Context != apitest.BaseURL+"/analytics/$metadata#Subscribers" {
				t.Errorf("context: %q", p.Context)
			}
			a := c.get("/Subscribers", "Prefer", "odata.maxpagesize=2")
			if a.header.Get("Preference-Applied") != "odata.maxpagesize=2" {
				t.Errorf("Preference-Applied: %q", a.header.Get("Preference-Applied"))
			}
		})

		t.Run("bad queries are 400", func(t *testing.T) {
			c := client{t: t, e: e, tn: e.Tenant}
			for _, bad := range []string{
				"$filter=" + q("Name eq 'x"), "$filter=" + q("Nope eq 1"), "$filter=" + q("Name eq 1"),
				"$filter=" + q("Name eq 'x'; DROP TABLE subscribers --"), "$filter=" + q("Name eq 'x' /* c */"),
				"$filter=" + q(strings.Repeat("(", 200)+"Name eq 'x'"+strings.Repeat(")", 200)),
				"$top=99999999999999999999", "$top=-1", "$top=100000000", "$skip=abc", "$orderby=" + q("Name; DROP"),
				"$select=" + q("Name,\"x\""), "$expand=Nope", "$apply=" + q("groupby((Nope))"), "$count=maybe",
				"$filter=" + q("Name eq '\u00e9\u0000'"), "$skiptoken=garbage", "$bogus=1", "$filter=" + q("year(Name) eq 1"),
				"$filter=" + q("CreatedAt gt 2026-13-01T00:00:00Z"), "$apply=" + q("aggregate(Id with max as M)"),
				"$expand=" + q("Payments,Payments"), "$apply=" + q("groupby((Country))/filter(Country eq 'NO')"),
				"$filter=" + q("Name eq 'x' or 1 eq 1"), "$filter=" + q("Name"), "$orderby=" + q("Payments"), "$filter=" + q("SubscriberNumber eq 1.5"),
			} {
				a := c.get("/Subscribers?" + bad)
				var body struct {
					Error struct{ Code, Message, Target string } `json:"error"`
				}
				if a.status != 400 || json.Unmarshal(a.body, &body) != nil || body.Error.Message == "" {
					t.Errorf("%s: %d %s", bad, a.status, a.body)
				}
			}
			// Unicode in a value is a value, not an error.
			if p := c.page("/Subscribers?$filter=" + q("Name eq 'Ærlig Øst'")); len(p.Value) != 0 {
				t.Errorf("unicode: %v", p.Value)
			}
		})

		t.Run("every set, expand and apply answer", func(t *testing.T) {
			c := client{t: t, e: e, tn: e.Tenant}
			for _, set := range []string{"Organizations", "Products", "BillingPlans", "Packages", "Subscribers", "SubscriberAccounts",
				"Subscriptions", "Orders", "Invoices", "InvoiceLines", "PaymentDemands", "Payments", "CreditNotes", "Reminders",
				"PaymentAgreements", "Events", "CanceledSubscriptions", "DailyPaidAmounts"} {
				c.page("/" + set + "?$count=true")
			}
			c.page("/Subscriptions?$filter=" + q("Status eq 'Active' and Price gt 10.5 and ChainStep eq null") + "&$expand=Subscriber,BillingPlan,Invoices($expand=Lines)")
			c.page("/InvoiceLines?$apply=" + q("filter(Kind eq 'Product')/compute(year(IssueDate) as Year,month(IssueDate) as Month)/groupby((Year,Month,ProductId),aggregate(Net with sum as Revenue,Gross with average as AvgGross,$count as Lines))"))
			c.page("/Subscriptions?$apply=" + q("filter(Status eq 'Active')/groupby((BillingPlanId),aggregate($count as Active))"))
			c.page("/Payments?$apply=" + q("filter(Status eq 'Succeeded')/compute(year(PaidAt) as Year,month(PaidAt) as Month)/groupby((Year,Month),aggregate(Amount with sum as Revenue,Amount with max as Largest))"))
			c.page("/Payments?$filter=" + q("Subscriber/Country eq 'NO' and Amount ge 100") + "&$orderby=Subscriber/Name,PaidAt desc")
			c.page("/Subscriptions?$apply=" + q("compute(contains(CancelReason,'x') as C,date(PeriodStart) as D)/groupby((Status,C,D,Currency),aggregate(Price with min as Lo,Price with max as Hi,PeriodEnd with max as Last,SubscriberId with countdistinct as Subs))") + "&$orderby=Lo desc&$top=5")
			c.page("/Products?$filter=" + q("Active and not (Active eq false)") + "&$orderby=Active,Category desc")
			c.page("/Subscribers?$select=Name,Name,Payments&$expand=Payments")
		})

		t.Run("read-only", func(t *testing.T) {
			c := client{t: t, e: e, tn: e.Tenant}
			for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
				a := c.do(m, "/Subscribers")
				if a.status != 405 || a.header.Get("Allow") != "GET" {
					t.Errorf("%s: %d %v", m, a.status, a.header)
				}
			}
		})

		t.Run("authentication", func(t *testing.T) {
			c := client{t: t, e: e, tn: e.Tenant}
			cc := c
			cc.tn.ID = other.ID
			if a := cc.get("/Subscribers"); a.status != 403 {
				t.Errorf("token of another tenant: %d", a.status)
			}
			cc.tn.Token = "nope"
			if a := cc.get("/Subscribers"); a.status != 401 {
				t.Errorf("bad token: %d", a.status)
			}
		})
	})
}
