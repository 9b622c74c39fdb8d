package seed_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/catalogdb"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// The same options make the same records through the API and through the
// store, defaults included, in what the options name.
func TestWritersAgree(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		ctx := tenancy.With(context.Background(), e.Tenant.ID)
		api, direct := e.Tenant.Seed(t), seed.NewStore(t, e.Store, ctx, time.Now())
		same := func(what string, a, b any) {
			t.Helper()
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) {
				t.Errorf("%s differs:\nAPI   %s\nstore %s", what, ja, jb)
			}
		}
		for _, o := range []seed.Organization{seed.Nordavis, {Name: "Euro Oy", Country: "FI", Currency: "EUR", PricesIncludeVAT: seed.Bool(false)}} {
			a, err := e.Store.Organization(ctx, api.Organization(o))
			if err != nil {
				t.Fatal(err)
			}
			b := direct.Organization(o)
			same("organization "+o.Name, []any{a.Name, a.OrganizationNumber, a.Country, a.Currency, a.TimeZone, a.PricesIncludeVAT},
				[]any{b.Name, b.OrganizationNumber, b.Country, b.Currency, b.TimeZone, b.PricesIncludeVAT})
		}
		product := func(p catalog.Product) any { return []any{p.Name, p.Category, p.VATRate.String(), p.Active} }
		pa, err := catalogdb.Product(ctx, e.Store, api.Product(seed.Product{Name: "Avis", Category: "digital", VATRate: "12.5"}))
		if err != nil {
			t.Fatal(err)
		}
		pb := direct.Product(seed.Product{Name: "Avis", Category: "digital", VATRate: "12.5"})
		same("product", product(pa), product(pb))

		plan := func(p catalog.BillingPlan) any {
			return []any{p.Name, p.IntervalUnit, p.IntervalCount, p.MinimumDueDays, p.PaymentTermsDays}
		}
		var plans [2]string
		for i, o := range []seed.Plan{{Name: "Monthly", Unit: "month"}, {Name: "28 days", Unit: "Day", Count: 28, MinimumDueDays: seed.Days(0), PaymentTermsDays: seed.Days(20)}} {
			a, err := catalogdb.BillingPlan(ctx, e.Store, api.Plan(o))
			if err != nil {
				t.Fatal(err)
			}
			b := direct.Plan(o)
			same("plan "+o.Name, plan(a), plan(b))
			plans[i] = b.ID
		}

		pkg := func(p catalog.TemplatePackage) any {
			p.ID, p.CreatedAt, p.UpdatedAt = "", time.Time{}, time.Time{}
			return p
		}
		for _, o := range []seed.Package{
			{Name: "Digital", Price: "199.00", Products: []string{pb.ID}, Plans: plans[:1]},
			{Name: "Family", Currency: "SEK", Price: "129.50", Units: 2, AutomaticStop: true, PermanentDiscount: "12.5", MinUnits: 1, MaxUnits: 5,
				Products: []string{pb.ID}, Additional: []seed.Additional{{ProductID: pa.ID, Price: "19.90", SelectedByDefault: true}}, Plans: plans[1:]},
		} {
			a, err := catalogdb.Package(ctx, e.Store, api.Package(o))
			if err != nil {
				t.Fatal(err)
			}
			same("package "+o.Name, pkg(a), pkg(direct.Package(o)))
		}

		subscriber := func(s store.Subscriber) any { return []any{s.Name, s.Email, s.Country, s.ExternalID, s.Contacts} }
		// In another tenant: external ids are unique in a tenant.
		direct = seed.NewStore(t, e.Store, seed.Tenant(t, e.Store, "direct", time.Now()), time.Now())
		for _, o := range []seed.Subscriber{seed.Kari, {Name: "Ola", ExternalID: "crm-1"}} {
			a, err := e.Store.Subscriber(ctx, api.Subscriber(o))
			if err != nil {
				t.Fatal(err)
			}
			same("subscriber "+o.Name, subscriber(a), subscriber(direct.Subscriber(o)))
		}
	})
}
