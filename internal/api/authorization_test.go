package api_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/subscriberuser"
)

// authzUser is a subscriber user as GET /authorizations/user answers it.
type authzUser struct {
	ID           string  `json:"id"`
	Email        string  `json:"email"`
	Disabled     bool    `json:"disabled"`
	HasPassword  bool    `json:"hasPassword"`
	SubscriberID *string `json:"subscriberId"`
}

func getUser(t *testing.T, tn apitest.Tenant, id string) authzUser {
	t.Helper()
	r := tn.Do("GET", "/authorizations/user/"+id, nil)
	wantStatus(t, r, http.StatusOK, "GET user")
	var u authzUser
	r.JSON(t, &u)
	return u
}

func want400(t *testing.T, r *apitest.Response, what string, fields ...string) {
	t.Helper()
	if got := r.Fields(t); !slices.Equal(got, fields) {
		t.Fatalf("%s: fields %v, want %v (%s)", what, got, fields, r.Body)
	}
}

func listIDs[T any](t *testing.T, tn apitest.Tenant, path string, id func(T) string) []string {
	t.Helper()
	r := tn.Do("GET", path, nil)
	wantStatus(t, r, http.StatusOK, "GET "+path)
	var items []T
	r.JSON(t, &items)
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = id(it)
	}
	return out
}

func TestSubscriberUsersAPI(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn, other := e.Tenant, e.NewTenant("tenant-b", false)
		sd := tn.Seed(t)
		kari := sd.Subscriber(seed.Kari)
		otherSub := other.Seed(t).Subscriber(seed.Subscriber{Name: "Per"})

		r := tn.Do("POST", "/authorizations/user", map[string]any{"email": "Kari@Example.no", "password": "correct horse", "subscriberId": kari})
		u := r.ID(t)
		if loc := r.Header.Get("Location"); loc != apitest.BaseURL+"/authorizations/user/"+u {
			t.Fatalf("Location %q", loc)
		}
		got := getUser(t, tn, u)
		if got.Email != "Kari@Example.no" || got.Disabled || !got.HasPassword || got.SubscriberID == nil || *got.SubscriberID != kari {
			t.Fatalf("created %+v", got)
		}
		if strings.Contains(string(tn.Do("GET", "/authorizations/user/"+u, nil).Body), "argon2") {
			t.Fatal("the password hash is shown")
		}
		plain := create(t, tn, "/authorizations/user", map[string]any{"email": "ola@example.no", "disabled": true})
		if g := getUser(t, tn, plain); g.HasPassword || !g.Disabled || g.SubscriberID != nil {
			t.Fatalf("passwordless disabled user: %+v", g)
		}

		// 400s name every field at once.
		for name, c := range map[string]struct {
			body   any
			fields []string
		}{
			"nothing":              {map[string]any{}, []string{"email"}},
			"bad everything":       {map[string]any{"email": "kari", "password": "short", "subscriberId": "x"}, []string{"email", "password", "subscriberId"}},
			"e-mail taken":         {map[string]any{"email": "KARI@example.NO"}, []string{"email"}},
			"unknown subscriber":   {map[string]any{"email": "x@example.no", "subscriberId": store.NewID()}, []string{"subscriberId"}},
			"other tenant's":       {map[string]any{"email": "x@example.no", "subscriberId": otherSub}, []string{"subscriberId"}},
			"unknown property":     {map[string]any{"email": "x@example.no", "passwort": "correct horse"}, []string{"passwort"}},
			"wrong type":           {map[string]any{"email": 7}, []string{"email"}},
			"read-only property":   {map[string]any{"email": "x@example.no", "hasPassword": true}, []string{"hasPassword"}},
			"password of one line": {map[string]any{"email": "x@example.no", "password": "two\nlines!"}, []string{"password"}},
		} {
			want400(t, tn.Do("POST", "/authorizations/user", c.body), name, c.fields...)
		}

		// Get: 400 on a path that is not a uuid, 404 on unknown and on
		// another tenant's user.
		want400(t, tn.Do("GET", "/authorizations/user/nope", nil), "bad id", "id")
		wantStatus(t, tn.Do("GET", "/authorizations/user/"+store.NewID(), nil), 404, "unknown user")
		wantStatus(t, other.Do("GET", "/authorizations/user/"+u, nil), 404, "other tenant's user")

		// List and filters.
		id := func(u authzUser) string { return u.ID }
		for q, want := range map[string][]string{
			"":                                     {u, plain},
			"?email=KARI@EXAMPLE.NO":               {u},
			"?subscriberId=" + kari:                {u},
			"?disabled=true":                       {plain},
			"?disabled=false&limit=1":              {u},
			"?email=nobody@example.no":             {},
			"?SubscriberId=" + kari:                {u},
			"?email=ola@example.no&disabled=false": {},
		} {
			if got := listIDs(t, tn, "/authorizations/user"+q, id); !slices.Equal(got, want) {
				t.Errorf("list %q: %v, want %v", q, got, want)
			}
		}
		if got := listIDs(t, other, "/authorizations/user", id); len(got) != 0 {
			t.Fatalf("other tenant lists %v", got)
		}
		want400(t, tn.Do("GET", "/authorizations/user?subscriberId=x", nil), "bad filter", "subscriberId")
		want400(t, tn.Do("GET", "/authorizations/user?disabled=maybe", nil), "bad disabled", "disabled")
		want400(t, tn.Do("GET", "/authorizations/user?mail=x", nil), "undeclared filter", "mail")
		wantEmpty(t, tn.Do("GET", "/authorizations/user?subscriberId="+store.NewID(), nil), "filter naming no subscriber")
		wantEmpty(t, tn.Do("GET", "/authorizations/user?subscriberId="+otherSub, nil), "filter naming another tenant's subscriber")

		// Disable and enable.
		wantStatus(t, tn.Do("POST", "/authorizations/user/"+u+"/disable", nil), 204, "disable")
		wantStatus(t, tn.Do("POST", "/authorizations/user/"+u+"/disable", nil), 204, "disable twice")
		if !getUser(t, tn, u).Disabled {
			t.Fatal("not disabled")
		}
		wantStatus(t, tn.Do("POST", "/authorizations/user/"+u+"/enable", nil), 204, "enable")
		if getUser(t, tn, u).Disabled {
			t.Fatal("not enabled")
		}
		wantStatus(t, other.Do("POST", "/authorizations/user/"+u+"/disable", nil), 404, "other tenant disables")
		wantStatus(t, tn.Do("POST", "/authorizations/user/"+store.NewID()+"/enable", nil), 404, "enable unknown")
		want400(t, tn.Do("POST", "/authorizations/user/x/enable", nil), "enable bad id", "id")

		// Link and unlink.
		wantStatus(t, tn.Do("PUT", "/authorizations/user/"+plain+"/subscriber", map[string]any{"subscriberId": kari}), 204, "link")
		if g := getUser(t, tn, plain); g.SubscriberID == nil || *g.SubscriberID != kari {
			t.Fatalf("linked: %+v", g)
		}
		wantStatus(t, tn.Do("PUT", "/authorizations/user/"+plain+"/subscriber", map[string]any{"subscriberId": nil}), 204, "unlink")
		if g := getUser(t, tn, plain); g.SubscriberID != nil {
			t.Fatalf("unlinked: %+v", g)
		}
		want400(t, tn.Do("PUT", "/authorizations/user/"+plain+"/subscriber", map[string]any{"subscriberId": otherSub}), "link to other tenant's", "subscriberId")
		want400(t, tn.Do("PUT", "/authorizations/user/"+plain+"/subscriber", map[string]any{"subscriberId": "x"}), "link to no uuid", "subscriberId")
		wantStatus(t, tn.Do("PUT", "/authorizations/user/"+store.NewID()+"/subscriber", map[string]any{"subscriberId": kari}), 404, "link unknown user")
		wantStatus(t, other.Do("PUT", "/authorizations/user/"+plain+"/subscriber", map[string]any{"subscriberId": otherSub}), 404, "other tenant links")

		// Password.
		wantStatus(t, tn.Do("PUT", "/authorizations/user/"+plain+"/password", map[string]any{"password": "a new secret"}), 204, "set password")
		if !getUser(t, tn, plain).HasPassword {
			t.Fatal("password not set")
		}
		want400(t, tn.Do("PUT", "/authorizations/user/"+plain+"/password", map[string]any{"password": "short"}), "short password", "password")
		wantStatus(t, tn.Do("PUT", "/authorizations/user/"+plain+"/password", map[string]any{}), 204, "remove password")
		if getUser(t, tn, plain).HasPassword {
			t.Fatal("password not removed")
		}
		wantStatus(t, other.Do("PUT", "/authorizations/user/"+plain+"/password", map[string]any{"password": "a new secret"}), 404, "other tenant sets password")

		// Delete.
		wantStatus(t, other.Do("DELETE", "/authorizations/user/"+plain, nil), 404, "other tenant deletes")
		wantStatus(t, tn.Do("DELETE", "/authorizations/user/"+plain, nil), 204, "delete")
		wantStatus(t, tn.Do("DELETE", "/authorizations/user/"+plain, nil), 404, "delete twice")
		want400(t, tn.Do("DELETE", "/authorizations/user/x", nil), "delete bad id", "id")

		// Deleting the subscriber unlinks its users.
		lone := sd.Subscriber(seed.Subscriber{Name: "Lone"})
		lu := create(t, tn, "/authorizations/user", map[string]any{"email": "lone@example.no", "subscriberId": lone})
		wantStatus(t, tn.Do("DELETE", "/subscriber/"+lone, nil), 204, "delete subscriber")
		if g := getUser(t, tn, lu); g.SubscriberID != nil {
			t.Fatalf("user of a deleted subscriber: %+v", g)
		}
	})
}

// accessFixture: a test tenant with two products, packages of one and of
// both, a subscriber, and users.
type accessFixture struct {
	*changeFixture
	digital, paper string
	oneProduct     string // package: digital
	twoProducts    string // package: digital + paper
}

func newAccessFixture(t *testing.T, tn apitest.Tenant) *accessFixture {
	t.Helper()
	f := &accessFixture{changeFixture: &changeFixture{billingFixture: &billingFixture{t: t, tn: tn}}}
	sd := tn.Seed(t)
	f.org = sd.Organization(seed.Organization{Name: "Bygdeposten AS", OrganizationNumber: "923609016", Country: "NO",
		Currency: "NOK", TimeZone: "Europe/Oslo", PricesIncludeVAT: seed.Bool(true)})
	f.digital = sd.Product(seed.Product{Name: "Digital", Category: "digital", VATRate: "0"})
	f.paper = sd.Product(seed.Product{Name: "Papir", Category: "print", VATRate: "0"})
	plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month", MinimumDueDays: seed.Days(0), PaymentTermsDays: seed.Days(10)})
	f.oneProduct = sd.Package(seed.Package{Name: "Digital", Price: "100.00", Products: []string{f.digital}, Plans: []string{plan}})
	f.twoProducts = sd.Package(seed.Package{Name: "Komplett", Price: "300.00", Products: []string{f.digital, f.paper}, Plans: []string{plan}})
	f.subscriber = sd.Subscriber(seed.Subscriber{Name: "Ola Nordmann", Email: "ola@example.no", Country: "NO"})
	return f
}

// access is the body of GET /authorizations/user/{id}/access.
type access struct {
	UserID   string    `json:"userId"`
	At       time.Time `json:"at"`
	Disabled bool      `json:"disabled"`
	Products []struct {
		ProductID      string    `json:"productId"`
		SubscriptionID string    `json:"subscriptionId"`
		Until          time.Time `json:"until"`
	} `json:"products"`
}

func (f *accessFixture) access(user string) access {
	f.t.Helper()
	r := f.tn.Do("GET", "/authorizations/user/"+user+"/access", nil)
	wantStatus(f.t, r, http.StatusOK, "access")
	var a access
	r.JSON(f.t, &a)
	return a
}

func (a access) products() []string {
	out := []string{}
	for _, p := range a.Products {
		out = append(out, p.ProductID)
	}
	return out
}

func (f *accessFixture) wantProducts(what, user string, want ...string) access {
	f.t.Helper()
	a := f.access(user)
	slices.Sort(want)
	if got := a.products(); !slices.Equal(got, append([]string{}, want...)) {
		f.t.Fatalf("%s: products %v, want %v (at %s)", what, got, want, a.At)
	}
	return a
}

// TestEntitlementsFollowSubscription walks a subscription through start,
// plan change, cancellation and end on a test clock and asks what its
// subscriber's users may use at each step: the linked user and a user
// whose access comes through an account source.
func TestEntitlementsFollowSubscription(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newAccessFixture(t, e.Tenant)
		tn := e.Tenant
		f.advance(osloDay(2027, 1, 1))
		linked := create(t, tn, "/authorizations/user", map[string]any{"email": "ola@example.no", "subscriberId": f.subscriber})
		viaAccount := create(t, tn, "/authorizations/user", map[string]any{"email": "family@example.no"})
		none := create(t, tn, "/authorizations/user", map[string]any{"email": "none@example.no"})

		// Ordered to start on 10 January: nothing before.
		f.pkg = f.oneProduct
		start := osloDay(2027, 1, 10)
		sub := f.order(&start)
		if a := f.wantProducts("before the start", linked); !a.At.Equal(osloDay(2027, 1, 1)) {
			t.Fatalf("evaluated at %s, not the tenant's clock", a.At)
		}

		// The account exists once the first invoice is issued; its users
		// get the subscriber's access in its currency.
		f.advance(start)
		var accounts []store.SubscriberAccount
		tn.Do("GET", "/subscriberaccount?subscriberId="+f.subscriber, nil).JSON(t, &accounts)
		if len(accounts) != 1 {
			t.Fatalf("accounts %+v", accounts)
		}
		create(t, tn, "/authorizations/source/account", map[string]any{"userId": viaAccount, "subscriberAccountId": accounts[0].ID})

		a := f.wantProducts("started", linked, f.digital)
		if a.Products[0].SubscriptionID != sub {
			t.Fatalf("granted by %s, want %s", a.Products[0].SubscriptionID, sub)
		}
		f.wantProducts("started, through the account", viaAccount, f.digital)
		f.wantProducts("started, user without links", none)

		// Plan change to the package with both products, now.
		f.advance(osloDay(2027, 1, 15))
		f.mustRegister(sub, map[string]any{"processingType": "Immediately", "templatePackageId": f.twoProducts})
		f.wantProducts("after the plan change", linked, f.digital, f.paper)
		f.wantProducts("after the plan change, through the account", viaAccount, f.digital, f.paper)

		// Renewals keep the access.
		f.advance(osloDay(2027, 3, 20))
		a = f.wantProducts("two renewals later", linked, f.digital, f.paper)
		current := a.Products[0].SubscriptionID

		// Disabled: nothing; enabled again: back.
		wantStatus(t, tn.Do("POST", "/authorizations/user/"+linked+"/disable", nil), 204, "disable")
		if a := f.wantProducts("disabled", linked); !a.Disabled {
			t.Fatal("disabled not said")
		}
		wantStatus(t, tn.Do("POST", "/authorizations/user/"+linked+"/enable", nil), 204, "enable")

		// Cancelled at the end of the period: access until then, none after.
		f.cancel(current, "EndOfPeriod")
		a = f.wantProducts("cancelled, period not over", linked, f.digital, f.paper)
		end := a.Products[0].Until
		f.advance(end.Add(-time.Minute))
		f.wantProducts("a minute before the end", linked, f.digital, f.paper)
		f.advance(end)
		f.wantProducts("ended", linked)
		f.wantProducts("ended, through the account", viaAccount)

		// A new subscription cancelled immediately ends access at once.
		f.pkg = f.oneProduct
		again := f.order(nil)
		f.wantProducts("subscribed again", linked, f.digital)
		f.cancel(again, "Immediately")
		f.wantProducts("cancelled immediately", linked)

		// 404 unknown user, 400 not a uuid, 404 another tenant's user.
		wantStatus(t, tn.Do("GET", "/authorizations/user/"+store.NewID()+"/access", nil), 404, "unknown user")
		want400(t, tn.Do("GET", "/authorizations/user/x/access", nil), "bad id", "userId")
		other := e.NewTenant("other", true)
		wantStatus(t, other.Do("GET", "/authorizations/user/"+linked+"/access", nil), 404, "other tenant's user")
	})
}

// TestEntitlementsSubscriberTokens: a subscriber's token of Kadens' own
// identity provider (kind subscriber, subject = the user id; the login
// page issues them, internal/idp) reads its own user's access only, and no
// administrative route.
func TestEntitlementsSubscriberTokens(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		me := create(t, tn, "/authorizations/user", map[string]any{"email": "me@example.no"})
		you := create(t, tn, "/authorizations/user", map[string]any{"email": "you@example.no"})
		c := subscriberClaims(tn.ID)
		c["sub"] = me
		tok := sign(t, e, c)
		as := func(token, path string) int {
			return e.Raw("GET", path, nil, "Authorization", "Bearer "+token, "S4-TenantId", tn.ID).Status
		}
		if st := as(tok, "/authorizations/user/"+me+"/access"); st != 200 {
			t.Fatalf("own access: %d", st)
		}
		if st := as(tok, "/authorizations/user/"+you+"/access"); st != 403 {
			t.Fatalf("another user's access: %d", st)
		}
		if st := as(tok, "/authorizations/user/"+store.NewID()+"/access"); st != 403 {
			t.Fatalf("an unknown user's access: %d (must not tell unknown from forbidden)", st)
		}
		for _, path := range []string{"/authorizations/user", "/authorizations/user/" + me, "/subscriber", "/authorizations/source/account"} {
			if st := as(tok, path); st != 403 {
				t.Errorf("subscriber token on %s: %d", path, st)
			}
		}
		// A token of Kadens' own issuer without the API scope that is not a
		// subscriber's (no kind claim) speaks for nobody.
		c = claims(tn.ID)
		c["sub"], c["scope"] = me, "openid"
		if st := as(sign(t, e, c), "/authorizations/user/"+me+"/access"); st != 403 {
			t.Fatalf("token without the api scope or the subscriber kind: %d", st)
		}
		// Another tenant's subscriber token: 403 at the tenant check.
		other := e.NewTenant("other", false)
		c = subscriberClaims(other.ID)
		c["sub"] = me
		if st := as(sign(t, e, c), "/authorizations/user/"+me+"/access"); st != 403 {
			t.Fatalf("token of another tenant: %d", st)
		}
	})
}

func TestAccountSourcesAPI(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn, other := e.Tenant, e.NewTenant("tenant-b", true)
		f := newAccessFixture(t, tn)
		f.pkg = f.oneProduct
		f.order(nil)
		var accounts []store.SubscriberAccount
		tn.Do("GET", "/subscriberaccount?subscriberId="+f.subscriber, nil).JSON(t, &accounts)
		acc := accounts[0].ID
		g := newAccessFixture(t, other)
		g.pkg = g.oneProduct
		g.order(nil)
		other.Do("GET", "/subscriberaccount?subscriberId="+g.subscriber, nil).JSON(t, &accounts)
		otherAcc := accounts[0].ID

		u := create(t, tn, "/authorizations/user", map[string]any{"email": "u@example.no"})
		v := create(t, tn, "/authorizations/user", map[string]any{"email": "v@example.no"})
		ou := create(t, other, "/authorizations/user", map[string]any{"email": "u@example.no"})

		r := tn.Do("POST", "/authorizations/source/account", map[string]any{"UserId": u, "SubscriberAccountId": acc})
		a := r.ID(t)
		if r.Header.Get("Location") != apitest.BaseURL+"/authorizations/source/account/"+a {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}
		b := create(t, tn, "/authorizations/source/account", map[string]any{"userId": v, "subscriberAccountId": acc})

		for name, c := range map[string]struct {
			body   any
			fields []string
		}{
			"nothing":                {map[string]any{}, []string{"userId", "subscriberAccountId"}},
			"not uuids":              {map[string]any{"userId": "x", "subscriberAccountId": "y"}, []string{"userId", "subscriberAccountId"}},
			"unknown user":           {map[string]any{"userId": store.NewID(), "subscriberAccountId": acc}, []string{"userId"}},
			"other tenant's user":    {map[string]any{"userId": ou, "subscriberAccountId": acc}, []string{"userId"}},
			"unknown account":        {map[string]any{"userId": u, "subscriberAccountId": store.NewID()}, []string{"subscriberAccountId"}},
			"other tenant's account": {map[string]any{"userId": u, "subscriberAccountId": otherAcc}, []string{"subscriberAccountId"}},
			"twice":                  {map[string]any{"userId": u, "subscriberAccountId": acc}, []string{"subscriberAccountId"}},
			"unknown property":       {map[string]any{"userId": u, "subscriberAccountId": acc, "role": "x"}, []string{"role"}},
		} {
			want400(t, tn.Do("POST", "/authorizations/source/account", c.body), name, c.fields...)
		}

		var one subscriberuser.AccountSource
		r = tn.Do("GET", "/authorizations/source/account/"+a, nil)
		wantStatus(t, r, 200, "get")
		r.JSON(t, &one)
		if one.ID != a || one.UserID != u || one.SubscriberAccountID != acc || one.SubscriberID != f.subscriber {
			t.Fatalf("got %+v", one)
		}
		want400(t, tn.Do("GET", "/authorizations/source/account/x", nil), "get bad id", "id")
		wantStatus(t, tn.Do("GET", "/authorizations/source/account/"+store.NewID(), nil), 404, "get unknown")
		wantStatus(t, other.Do("GET", "/authorizations/source/account/"+a, nil), 404, "other tenant gets")

		id := func(s subscriberuser.AccountSource) string { return s.ID }
		for q, want := range map[string][]string{
			"":                            {a, b},
			"?UserId=" + u:                {a},
			"?userid=" + v:                {b},
			"?SubscriberAccountId=" + acc: {a, b},
			"?UserId=" + u + "&limit=1":   {a},
			"?SubscriberAccountId=" + acc + "&UserId=" + v: {b},
		} {
			if got := listIDs(t, tn, "/authorizations/source/account"+q, id); !slices.Equal(got, want) {
				t.Errorf("list %q: %v, want %v", q, got, want)
			}
		}
		if got := listIDs(t, other, "/authorizations/source/account", id); len(got) != 0 {
			t.Fatalf("other tenant lists %v", got)
		}
		// A bad query is a 400 without a body (the contract); a filter
		// naming nothing in the tenant is a 404.
		for _, q := range []string{"?UserId=x", "?SubscriberAccountId=1", "?limit=0", "?cursor=zz", "?User=x"} {
			r := tn.Do("GET", "/authorizations/source/account"+q, nil)
			if r.Status != 400 || len(r.Body) != 0 {
				t.Errorf("list %q: %d %q, want 400 without a body", q, r.Status, r.Body)
			}
		}
		// The contract's table lists 200 and 400 only: a filter naming a
		// user or account of no one (or of another tenant) matches nothing.
		for _, q := range []string{"?UserId=" + store.NewID(), "?UserId=" + ou, "?SubscriberAccountId=" + otherAcc} {
			wantEmpty(t, tn.Do("GET", "/authorizations/source/account"+q, nil), "list "+q)
		}
		// Even a missing tenant header: every 400 of this operation is bare.
		if r := e.Raw("GET", "/authorizations/source/account", nil, "Authorization", "Bearer "+tn.Token); r.Status != 400 || len(r.Body) != 0 {
			t.Fatalf("no tenant header: %d %q", r.Status, r.Body)
		}

		wantStatus(t, other.Do("DELETE", "/authorizations/source/account/"+a, nil), 404, "other tenant deletes")
		wantStatus(t, tn.Do("DELETE", "/authorizations/source/account/"+a, nil), 204, "delete")
		wantStatus(t, tn.Do("DELETE", "/authorizations/source/account/"+a, nil), 404, "delete twice")
		want400(t, tn.Do("DELETE", "/authorizations/source/account/x", nil), "delete bad id", "id")
		// Deleting the user deletes its sources.
		wantStatus(t, tn.Do("DELETE", "/authorizations/user/"+v, nil), 204, "delete user")
		wantStatus(t, tn.Do("GET", "/authorizations/source/account/"+b, nil), 404, "source of a deleted user")
	})
}

// idpAccount is an identity-provider account as the API answers it.
type idpAccount struct {
	ID         string `json:"id"`
	Identifier string `json:"identifier"`
	Issuer     string `json:"issuer"`
	UserID     string `json:"userId"`
}

// TestIdentityProviderAccounts: both kinds' operations with their status
// codes, and what each does: an idp-a identifier is a login name of its
// user; an idp-b subject of a trusted external issuer reads its user's
// access with the issuer's own token.
func TestIdentityProviderAccounts(t *testing.T) {
	t.Parallel()
	issuer, mint := externalIssuer(t)
	issuers := `[{"issuer":"` + issuer + `","jwksUrl":"` + issuer + `/jwks","audience":"kadens-api","tenantClaim":"tid",` +
		`"requiredScope":"billing","subscriberTokens":true},` +
		`{"issuer":"https://admin-only.example","jwksUrl":"` + issuer + `/jwks","audience":"kadens-api","tenantClaim":"tid","requiredScope":"billing"}]`
	for _, eng := range engines() {
		t.Run(string(eng), func(t *testing.T) {
			t.Parallel()
			e := apitest.Start(t, eng, map[string]string{"KADENS_TRUSTED_ISSUERS": issuers,
				"KADENS_EGRESS_ALLOW_PRIVATE": "true"}) // the key set is on loopback
			tn, other := e.Tenant, e.NewTenant("tenant-b", false)
			u := create(t, tn, "/authorizations/user", map[string]any{"email": "kari@example.no", "password": "correct horse"})
			v := create(t, tn, "/authorizations/user", map[string]any{"email": "ola@example.no"})
			ou := create(t, other, "/authorizations/user", map[string]any{"email": "per@example.no"})
			base := "/authorizations/identityprovider/account/"

			// idp-a: the path id is a login name; matched ignoring case.
			r := tn.Do("POST", base+"idp-a/Kari.N", map[string]any{"userId": u})
			a := r.ID(t)
			if r.Header.Get("Location") != apitest.BaseURL+base+"idp-a/Kari.N" {
				t.Fatalf("Location %q", r.Header.Get("Location"))
			}
			var got idpAccount
			r = tn.Do("GET", base+"idp-a/kari.n", nil)
			wantStatus(t, r, 200, "get idp-a")
			r.JSON(t, &got)
			if got.ID != a || got.Identifier != "Kari.N" || got.UserID != u {
				t.Fatalf("idp-a account %+v", got)
			}
			if login, err := subscriberuser.SubscriberUserByLogin(tenantCtx(tn), e.Store, "KARI.N"); err != nil || login.ID != u {
				t.Fatalf("login by the idp-a identifier: %+v %v", login, err)
			}
			// Identifiers with characters that need escaping in a path.
			escaped := base + "idp-a/" + url.PathEscape("kari nordmann/2")
			create(t, tn, escaped, map[string]any{"userId": u})
			wantStatus(t, tn.Do("GET", escaped, nil), 200, "get escaped identifier")

			for name, c := range map[string]struct {
				path   string
				body   any
				fields []string
			}{
				"idp-a twice":           {base + "idp-a/KARI.N", map[string]any{"userId": v}, []string{"id"}},
				"idp-a no user":         {base + "idp-a/x", map[string]any{}, []string{"userId"}},
				"idp-a unknown user":    {base + "idp-a/x", map[string]any{"userId": store.NewID()}, []string{"userId"}},
				"idp-a other's user":    {base + "idp-a/x", map[string]any{"userId": ou}, []string{"userId"}},
				"idp-a issuer given":    {base + "idp-a/x", map[string]any{"userId": u, "issuer": issuer}, []string{"issuer"}},
				"idp-b no issuer":       {base + "idp-b/s", map[string]any{"userId": u}, []string{"issuer"}},
				"idp-b untrusted":       {base + "idp-b/s", map[string]any{"userId": u, "issuer": "https://evil.example"}, []string{"issuer"}},
				"idp-b admin-only":      {base + "idp-b/s", map[string]any{"userId": u, "issuer": "https://admin-only.example"}, []string{"issuer"}},
				"idp-b bad user":        {base + "idp-b/s", map[string]any{"userId": "x", "issuer": issuer}, []string{"userId"}},
				"identifier too long":   {base + "idp-a/" + strings.Repeat("x", 256), map[string]any{"userId": u}, []string{"id"}},
				"identifier with a tab": {base + "idp-a/a%09b", map[string]any{"userId": u}, []string{"id"}},
			} {
				want400(t, tn.Do("POST", c.path, c.body), name, c.fields...)
			}

			// idp-b: subjects are exact.
			b := create(t, tn, base+"idp-b/ext-1", map[string]any{"userId": u, "issuer": issuer})
			r = tn.Do("GET", base+"idp-b/ext-1", nil)
			wantStatus(t, r, 200, "get idp-b")
			r.JSON(t, &got)
			if got.ID != b || got.Issuer != issuer || got.UserID != u || got.Identifier != "ext-1" {
				t.Fatalf("idp-b account %+v", got)
			}
			wantStatus(t, tn.Do("GET", base+"idp-b/EXT-1", nil), 404, "idp-b subject in other case")
			wantStatus(t, tn.Do("GET", base+"idp-a/ext-1", nil), 404, "the other kind")
			wantStatus(t, other.Do("GET", base+"idp-b/ext-1", nil), 404, "other tenant gets")

			// The external issuer's token for ext-1 acts as u on the
			// entitlement endpoint only.
			as := func(sub, scope, path string) int {
				return e.Raw("GET", path, nil, "Authorization", "Bearer "+mint(map[string]any{"sub": sub, "tid": tn.ID, "scope": scope, "aud": "kadens-api"}),
					"S4-TenantId", tn.ID).Status
			}
			if st := as("ext-1", "openid", "/authorizations/user/"+u+"/access"); st != 200 {
				t.Fatalf("external subscriber token, own user: %d", st)
			}
			if st := as("ext-1", "openid", "/authorizations/user/"+v+"/access"); st != 403 {
				t.Fatalf("external subscriber token, other user: %d", st)
			}
			if st := as("ext-2", "openid", "/authorizations/user/"+u+"/access"); st != 403 {
				t.Fatalf("unbound subject: %d", st)
			}
			if st := as("ext-1", "openid api", "/subscriber"); st != 403 {
				t.Fatalf("external subscriber token (claiming api) on an admin route: %d", st)
			}
			if st := as("ext-1", "billing", "/subscriber"); st != 200 {
				t.Fatalf("external admin token: %d", st)
			}

			// PUT rebinds (202, no body); the token follows.
			r = tn.Do("PUT", base+"idp-b/ext-1", map[string]any{"userId": v, "issuer": issuer})
			if r.Status != 202 || len(r.Body) != 0 {
				t.Fatalf("PUT: %d %q", r.Status, r.Body)
			}
			if st := as("ext-1", "openid", "/authorizations/user/"+v+"/access"); st != 200 {
				t.Fatalf("after the rebind: %d", st)
			}
			// GET-modify-PUT works: the representation's fields are accepted.
			wantStatus(t, tn.Do("PUT", base+"idp-b/ext-1", map[string]any{"id": b, "identifier": "ext-1", "userId": v, "issuer": issuer,
				"createdAt": "2027-01-01T00:00:00Z", "updatedAt": "2027-01-01T00:00:00Z"}), 202, "PUT of the GET body")
			wantStatus(t, tn.Do("PUT", base+"idp-b/nope", map[string]any{"userId": v, "issuer": issuer}), 404, "PUT unknown")
			wantStatus(t, other.Do("PUT", base+"idp-b/ext-1", map[string]any{"userId": ou, "issuer": issuer}), 404, "other tenant PUTs")
			want400(t, tn.Do("PUT", base+"idp-b/ext-1", map[string]any{"userId": ou, "issuer": issuer}), "PUT other tenant's user", "userId")
			want400(t, tn.Do("PUT", base+"idp-a/kari.n", map[string]any{}), "PUT no user", "userId")
			wantStatus(t, tn.Do("PUT", base+"idp-a/kari.n", map[string]any{"userId": v}), 202, "PUT idp-a")
			// GET-modify-PUT of idp-a, and an unknown property refused.
			var ga map[string]any
			tn.Do("GET", base+"idp-a/kari.n", nil).JSON(t, &ga)
			ga["userId"] = u
			wantStatus(t, tn.Do("PUT", base+"idp-a/kari.n", ga), 202, "PUT idp-a of its GET body")
			if g := getIdP(t, tn, base+"idp-a/kari.n"); g.UserID != u {
				t.Fatalf("after GET-modify-PUT: %+v", g)
			}
			ga["colour"] = "blue"
			want400(t, tn.Do("PUT", base+"idp-a/kari.n", ga), "PUT with an unknown property", "colour")
			ga["userId"] = v
			delete(ga, "colour")
			wantStatus(t, tn.Do("PUT", base+"idp-a/kari.n", ga), 202, "PUT idp-a back")

			// Lists per kind.
			aid := func(x idpAccount) string { return x.ID }
			if got := listIDs(t, tn, base+"idp-a", aid); len(got) != 2 || got[0] != a {
				t.Fatalf("idp-a list %v", got)
			}
			if got := listIDs(t, tn, base+"idp-b", aid); !slices.Equal(got, []string{b}) {
				t.Fatalf("idp-b list %v", got)
			}
			if got := listIDs(t, other, base+"idp-b", aid); len(got) != 0 {
				t.Fatalf("other tenant's idp-b list %v", got)
			}
			want400(t, tn.Do("GET", base+"idp-b?limit=x", nil), "bad limit", "limit")

			// DELETE: 204, then 404; the token speaks for nobody.
			wantStatus(t, other.Do("DELETE", base+"idp-b/ext-1", nil), 404, "other tenant deletes")
			wantStatus(t, tn.Do("DELETE", base+"idp-b/ext-1", nil), 204, "delete")
			wantStatus(t, tn.Do("DELETE", base+"idp-b/ext-1", nil), 404, "delete twice")
			wantStatus(t, tn.Do("GET", base+"idp-b/ext-1", nil), 404, "get deleted")
			if st := as("ext-1", "openid", "/authorizations/user/"+v+"/access"); st != 403 {
				t.Fatalf("after the delete: %d", st)
			}
			// Deleting a user deletes its accounts.
			wantStatus(t, tn.Do("DELETE", "/authorizations/user/"+v, nil), 204, "delete user")
			wantStatus(t, tn.Do("GET", base+"idp-a/kari.n", nil), 404, "idp-a account of a deleted user")
		})
	}
}

func getIdP(t *testing.T, tn apitest.Tenant, path string) idpAccount {
	t.Helper()
	r := tn.Do("GET", path, nil)
	wantStatus(t, r, http.StatusOK, "GET "+path)
	var a idpAccount
	r.JSON(t, &a)
	return a
}

// externalIssuer runs a JWKS endpoint for an external issuer and returns
// the issuer address and a function that signs claims as it.
func externalIssuer(t *testing.T) (string, func(map[string]any) string) {
	t.Helper()
	key := newRSAKey(t)
	srv := jwksServer(t, key)
	return srv, func(c map[string]any) string {
		c["iss"] = srv
		c["exp"] = time.Now().Add(time.Hour).Unix()
		c["iat"] = time.Now().Unix()
		return signRS256(t, key, c)
	}
}

func newRSAKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// jwksServer serves key's public half at /jwks and returns its address.
func jwksServer(t *testing.T, key *rsa.PrivateKey) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "ext1", Algorithm: "RS256", Use: "sig"}}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func signRS256(t *testing.T, key *rsa.PrivateKey, c map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: "ext1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(c)
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := jws.CompactSerialize()
	return out
}

func engines() []store.Engine { return storetest.Engines() }
