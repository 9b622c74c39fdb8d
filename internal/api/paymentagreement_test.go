package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store"
)

type validationResult struct {
	Errors []struct{ Field, Message string } `json:"errors"`
}

// fields returns the fields a 400 names, failing unless the answer is one.
func fields(t *testing.T, r *apitest.Response) []string {
	t.Helper()
	if r.Status != http.StatusBadRequest {
		t.Fatalf("want 400, got %d: %s", r.Status, r.Body)
	}
	var v validationResult
	r.JSON(t, &v)
	var out []string
	for _, e := range v.Errors {
		out = append(out, e.Field)
	}
	return out
}

func getAgreement(t *testing.T, tn apitest.Tenant, id string) store.PaymentAgreement {
	t.Helper()
	r := tn.Do("GET", "/paymentagreement/"+id, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /paymentagreement/%s: %d %s", id, r.Status, r.Body)
	}
	var a store.PaymentAgreement
	r.JSON(t, &a)
	return a
}

func getSubscription(t *testing.T, tn apitest.Tenant, id string) store.Subscription {
	t.Helper()
	r := tn.Do("GET", "/subscription/"+id, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /subscription/%s: %d %s", id, r.Status, r.Body)
	}
	var s store.Subscription
	r.JSON(t, &s)
	return s
}

func changeAgreement(t *testing.T, tn apitest.Tenant, sub, agreement string) {
	t.Helper()
	if r := tn.Do("POST", "/subscription/"+sub+"/changePaymentAgreement", map[string]any{"paymentAgreementId": agreement}); r.Status != http.StatusNoContent {
		t.Fatalf("changePaymentAgreement: %d %s", r.Status, r.Body)
	}
}

func ehfBody(sub, orgNumber string) map[string]any {
	return map[string]any{"subscriberId": sub, "providerType": "EHF", "providerAgreementReference": orgNumber, "paymentMethod": "eInvoice"}
}

// TestInvoiceNetworkAgreementFlow is the contract's flow: a subscriber
// with a subscription gets an EHF agreement, which is assigned to the
// subscription, and the next invoices carry it.
func TestInvoiceNetworkAgreementFlow(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.advance(osloDay(2027, 1, 10).Add(12 * time.Hour))
		start := osloDay(2027, 2, 1)
		first := f.order(&start)
		invoiceAgreement := *getSubscription(t, f.tn, first).PaymentAgreementID
		if a := getAgreement(t, f.tn, invoiceAgreement); a.ProviderType != "Invoice" || a.PaymentMethod != "BankTransfer" {
			t.Fatalf("order's default agreement %+v", a)
		}

		// 20 February: the March period was created (and invoiced) ahead
		// on 15 February with the Invoice agreement.
		f.advance(osloDay(2027, 2, 20))
		r := f.tn.Do("POST", "/paymentagreement", ehfBody(f.subscriber, "923609016"))
		ehf := r.ID(t)
		if loc := r.Header.Get("Location"); loc != apitest.BaseURL+"/paymentagreement/"+ehf {
			t.Fatalf("Location %q", loc)
		}
		if a := getAgreement(t, f.tn, ehf); a.ProviderType != "EHF" || a.ProviderAgreementReference != "923609016" ||
			a.PaymentMethod != "eInvoice" || a.SubscriberID != f.subscriber || a.DeletedAt != nil {
			t.Fatalf("agreement %+v", a)
		}
		march := getSubscription(t, f.tn, first).NextID
		if march == nil {
			t.Fatal("no period created ahead")
		}
		marchInvoices := f.invoices("subscriptionId=" + *march)
		if len(marchInvoices) != 1 || *marchInvoices[0].PaymentAgreementID != invoiceAgreement {
			t.Fatalf("March invoice before the change: %+v", marchInvoices)
		}

		changeAgreement(t, f.tn, first, ehf)
		for _, id := range []string{first, *march} {
			if got := getSubscription(t, f.tn, id).PaymentAgreementID; *got != ehf {
				t.Fatalf("period %s has agreement %s after the change", id, *got)
			}
		}
		// Issued invoices are documents: March's keeps its agreement.
		if inv := f.invoices("subscriptionId=" + *march)[0]; *inv.PaymentAgreementID != invoiceAgreement {
			t.Fatalf("issued invoice changed agreement to %s", *inv.PaymentAgreementID)
		}

		// The April renewal (issued 15 March) inherits the EHF agreement.
		f.advance(osloDay(2027, 3, 20))
		april := getSubscription(t, f.tn, *march).NextID
		if april == nil {
			t.Fatal("no April renewal")
		}
		if got := getSubscription(t, f.tn, *april).PaymentAgreementID; *got != ehf {
			t.Fatalf("renewal has agreement %s", *got)
		}
		invs := f.invoices("subscriptionId=" + *april)
		if len(invs) != 1 || invs[0].PaymentAgreementID == nil || *invs[0].PaymentAgreementID != ehf {
			t.Fatalf("renewal invoice: %+v", invs)
		}
		// Nothing recorded a Deleted event, and the EHF creation is recorded.
		var evs []store.Event
		f.tn.Do("GET", "/events?eventType=PaymentAgreementCreated", nil).JSON(t, &evs)
		if len(evs) != 2 || evs[1].Subject != "/paymentagreement/"+ehf {
			t.Fatalf("created events %+v", evs)
		}
	})
}

func TestPaymentAgreementValidation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		sub := create(t, tn, "/subscriber", map[string]any{"name": "Kari Nordmann"})
		body := func(typ, ref, method string) map[string]any {
			b := map[string]any{"subscriberId": sub, "providerType": typ}
			if ref != "" {
				b["providerAgreementReference"] = ref
			}
			if method != "" {
				b["paymentMethod"] = method
			}
			return b
		}
		for name, c := range map[string]struct {
			body any
			want []string
		}{
			"EHF bad check digit":    {body("EHF", "923609017", ""), []string{"providerAgreementReference"}},
			"EHF 8 digits":           {body("EHF", "92360901", ""), []string{"providerAgreementReference"}},
			"EHF check digit 10":     {body("EHF", "910000420", ""), []string{"providerAgreementReference"}},
			"EHF missing reference":  {body("EHF", "", ""), []string{"providerAgreementReference"}},
			"EHF wrong method":       {body("EHF", "923609016", "Card"), []string{"paymentMethod"}},
			"OIO bad CVR":            {body("OIO", "24256791", ""), []string{"providerAgreementReference"}},
			"OIO bad GLN":            {body("OIO", "5790000000013", ""), []string{"providerAgreementReference"}},
			"OIO 10 digits":          {body("OIO", "5790000000", ""), []string{"providerAgreementReference"}},
			"Invoice with reference": {body("Invoice", "123", ""), []string{"providerAgreementReference"}},
			"Invoice wrong method":   {body("Invoice", "", "eInvoice"), []string{"paymentMethod"}},
			"External no reference":  {body("External", "", "Card"), []string{"providerAgreementReference"}},
			"External too long":      {body("External", strings.Repeat("x", 201), ""), []string{"providerAgreementReference"}},
			"Autogiro no mandate":    {body("Autogiro", "1234", ""), []string{"providerAgreementReference"}},
			"AvtaleGiro no mandate":  {body("avtalegiro", "1234", ""), []string{"providerAgreementReference"}},
			"unknown type":           {body("Klarna", "1", ""), []string{"providerType"}},
			"missing subscriber":     {map[string]any{"providerType": "Invoice"}, []string{"subscriberId"}},
			"unknown subscriber":     {map[string]any{"subscriberId": store.NewID(), "providerType": "Invoice"}, []string{"subscriberId"}},
			"all at once": {map[string]any{"subscriberId": store.NewID(), "providerType": "EHF", "providerAgreementReference": "1",
				"paymentMethod": "x"}, []string{"providerAgreementReference", "paymentMethod", "subscriberId"}},
		} {
			if got := fields(t, tn.Do("POST", "/paymentagreement", c.body)); strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("%s: 400 names %v, want %v", name, got, c.want)
			}
		}

		// Provider types ignore case and come back canonical; spaces inside
		// numbers are removed; eInvoice is the invoice network's default.
		for _, c := range []struct{ typ, ref, wantType, wantRef, wantMethod string }{
			{"ehf", "923 609 016", "EHF", "923609016", "eInvoice"},
			{"oio", "24256790", "OIO", "24256790", "eInvoice"},
			{"OIO", "5790000000012", "OIO", "5790000000012", "eInvoice"},
			{"external", "psp-42", "External", "psp-42", "External"},
		} {
			a := getAgreement(t, tn, create(t, tn, "/paymentagreement", body(c.typ, c.ref, "")))
			if a.ProviderType != c.wantType || a.ProviderAgreementReference != c.wantRef || a.PaymentMethod != c.wantMethod {
				t.Errorf("%s %s: stored %+v", c.typ, c.ref, a)
			}
		}
		// External references are unique in the tenant.
		if got := fields(t, tn.Do("POST", "/paymentagreement", body("External", "psp-42", "Card"))); strings.Join(got, ",") != "providerAgreementReference" {
			t.Errorf("duplicate External: %v", got)
		}
		// A second Invoice agreement answers 200 with the first one's id.
		inv := create(t, tn, "/paymentagreement", body("invoice", "", ""))
		r := tn.Do("POST", "/paymentagreement", body("Invoice", "", "BankTransfer"))
		var again string
		r.JSON(t, &again)
		if r.Status != http.StatusOK || again != inv || r.Header.Get("Location") != apitest.BaseURL+"/paymentagreement/"+inv {
			t.Fatalf("second Invoice agreement: %d %s", r.Status, r.Body)
		}
	})
}

func TestPaymentAgreementDeleteFallsBackToInvoice(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		f.advance(osloDay(2027, 1, 10).Add(12 * time.Hour))
		start := osloDay(2027, 2, 1)
		sub := f.order(&start)
		invoiceAgreement := *getSubscription(t, f.tn, sub).PaymentAgreementID
		ext := create(t, f.tn, "/paymentagreement", map[string]any{"subscriberId": f.subscriber, "providerType": "External",
			"providerAgreementReference": "psp-7", "paymentMethod": "Card"})
		changeAgreement(t, f.tn, sub, ext)

		// The Invoice agreement is unused now, but stays the fallback.
		if r := f.tn.Do("DELETE", "/paymentagreement/"+ext, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if got := *getSubscription(t, f.tn, sub).PaymentAgreementID; got != invoiceAgreement {
			t.Fatalf("subscription fell back to %s, want the Invoice agreement %s", got, invoiceAgreement)
		}
		var evs []store.Event
		f.tn.Do("GET", "/events?eventType=PaymentAgreementDeleted", nil).JSON(t, &evs)
		if len(evs) != 1 || evs[0].Subject != "/paymentagreement/"+ext {
			t.Fatalf("deleted events %+v", evs)
		}
		var data map[string]string
		if err := json.Unmarshal(evs[0].Data, &data); err != nil || data["paymentAgreementId"] != ext ||
			data["subscriberId"] != f.subscriber || data["providerType"] != "External" {
			t.Fatalf("event data %s", evs[0].Data)
		}
		// Deleted agreements stay readable, leave the list, and cannot be
		// assigned; their reference is free again.
		if a := getAgreement(t, f.tn, ext); a.DeletedAt == nil {
			t.Fatal("no deletedAt")
		}
		var live []store.PaymentAgreement
		f.tn.Do("GET", "/paymentagreement?subscriberId="+f.subscriber, nil).JSON(t, &live)
		if len(live) != 1 || live[0].ID != invoiceAgreement {
			t.Fatalf("live agreements %+v", live)
		}
		if got := fields(t, f.tn.Do("POST", "/subscription/"+sub+"/changePaymentAgreement", map[string]any{"paymentAgreementId": ext})); strings.Join(got, ",") != "paymentAgreementId" {
			t.Fatalf("assign deleted: %v", got)
		}
		create(t, f.tn, "/paymentagreement", map[string]any{"subscriberId": f.subscriber, "providerType": "External", "providerAgreementReference": "psp-7"})
		if r := f.tn.Do("DELETE", "/paymentagreement/"+ext, nil); r.Status != http.StatusNoContent {
			t.Fatalf("second delete: %d", r.Status)
		}
		// The Invoice agreement the subscription uses cannot be deleted.
		if got := fields(t, f.tn.Do("DELETE", "/paymentagreement/"+invoiceAgreement, nil)); strings.Join(got, ",") != "id" {
			t.Fatalf("delete Invoice in use: %v", got)
		}
		// Without an Invoice agreement, the fallback is created.
		sub2 := create(t, f.tn, "/subscriber", map[string]any{"name": "Ola"})
		ehf := create(t, f.tn, "/paymentagreement", ehfBody(sub2, "984851006"))
		o := create(t, f.tn, "/order", map[string]any{"organizationId": f.org, "templatePackageId": f.pkg, "subscriberId": sub2, "paymentAgreementId": ehf})
		s2 := *completeOrder(t, f.tn, o).SubscriptionID
		if r := f.tn.Do("DELETE", "/paymentagreement/"+ehf, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete EHF: %d", r.Status)
		}
		fb := getAgreement(t, f.tn, *getSubscription(t, f.tn, s2).PaymentAgreementID)
		if fb.ProviderType != "Invoice" || fb.SubscriberID != sub2 || fb.ID == ehf {
			t.Fatalf("fallback %+v", fb)
		}
	})
}

func TestPaymentAgreementImport(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		a := create(t, tn, "/subscriber", map[string]any{"name": "A"})
		b := create(t, tn, "/subscriber", map[string]any{"name": "B"})
		existing := create(t, tn, "/paymentagreement", ehfBody(a, "923609016"))
		rows := fmt.Sprintf(`[
			{"subscriberId": %[1]q, "providerType": "EHF", "providerAgreementReference": "923609016"},
			{"subscriberId": %[1]q, "providerType": "External", "providerAgreementReference": "psp-1", "paymentMethod": "Card"},
			{"subscriberId": %[2]q, "providerType": "External", "providerAgreementReference": "psp-1"},
			{"subscriberId": %[2]q, "providerType": "OIO", "providerAgreementReference": "24256791"},
			{"subscriberId": %[3]q, "providerType": "Invoice"},
			{"subscriberId": 42, "providerType": "Invoice"},
			{"SUBSCRIBERID": %[2]q, "providertype": "oio", "providerAgreementReference": "5790000000012"},
			{"subscriberId": %[2]q, "providerType": "Autogiro", "providerAgreementReference": "1"}
		]`, a, b, store.NewID())
		type report struct {
			Created, Skipped, Rejected int
			Rows                       []struct {
				Index  int
				Status string
				ID     *string
				Errors []struct{ Field, Message string }
			}
		}
		send := func() report {
			t.Helper()
			r := tn.Do("POST", "/paymentagreement/import", rows)
			if r.Status != http.StatusOK {
				t.Fatalf("import: %d %s", r.Status, r.Body)
			}
			var rep report
			r.JSON(t, &rep)
			return rep
		}
		rep := send()
		want := []struct{ status, field string }{
			{"Skipped", ""}, {"Created", ""}, {"Rejected", "providerAgreementReference"}, {"Rejected", "providerAgreementReference"},
			{"Rejected", "subscriberId"}, {"Rejected", "subscriberId"}, {"Created", ""}, {"Rejected", "providerAgreementReference"},
		}
		if rep.Created != 2 || rep.Skipped != 1 || rep.Rejected != 5 || len(rep.Rows) != len(want) {
			t.Fatalf("report %+v", rep)
		}
		for i, w := range want {
			row := rep.Rows[i]
			field := ""
			if len(row.Errors) > 0 {
				field = row.Errors[0].Field
			}
			if row.Index != i || row.Status != w.status || field != w.field || (w.status == "Rejected") != (row.ID == nil) {
				t.Errorf("row %d: %+v, want %s %s", i, row, w.status, w.field)
			}
		}
		if *rep.Rows[0].ID != existing {
			t.Errorf("skipped row names %s, want %s", *rep.Rows[0].ID, existing)
		}
		if got := getAgreement(t, tn, *rep.Rows[6].ID); got.ProviderType != "OIO" || got.SubscriberID != b || got.PaymentMethod != "eInvoice" {
			t.Errorf("imported %+v", got)
		}
		// Sent again, nothing new: the same agreements, skipped.
		again := send()
		if again.Created != 0 || again.Skipped != 3 || again.Rejected != 5 {
			t.Fatalf("rerun %+v", again)
		}
		for _, i := range []int{1, 6} {
			if again.Rows[i].Status != "Skipped" || *again.Rows[i].ID != *rep.Rows[i].ID {
				t.Errorf("rerun row %d: %+v", i, again.Rows[i])
			}
		}
		if n := len(eventsOf(t, e, tn, "PaymentAgreementCreated")); n != 3 {
			t.Fatalf("%d PaymentAgreementCreated events, want 3", n)
		}
		// Too many rows, or not an array: 400.
		many := "[" + strings.Repeat(`{"providerType": "Invoice"},`, 1000) + `{"providerType": "Invoice"}]`
		if got := fields(t, tn.Do("POST", "/paymentagreement/import", many)); strings.Join(got, ",") != "body" {
			t.Fatalf("1001 rows: %v", got)
		}
		fields(t, tn.Do("POST", "/paymentagreement/import", map[string]any{"subscriberId": a}))
	})
}

func TestPaymentAgreementListAndTenantIsolation(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newBillingFixture(t, e, e.Tenant)
		sub := f.order(nil)
		ehf := create(t, f.tn, "/paymentagreement", ehfBody(f.subscriber, "923609016"))
		ext := create(t, f.tn, "/paymentagreement", map[string]any{"subscriberId": f.subscriber, "providerType": "External", "providerAgreementReference": "r"})

		list := func(tn apitest.Tenant, q string) []store.PaymentAgreement {
			t.Helper()
			r := tn.Do("GET", "/paymentagreement?"+q, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("list %s: %d %s", q, r.Status, r.Body)
			}
			var out []store.PaymentAgreement
			r.JSON(t, &out)
			return out
		}
		if got := list(f.tn, "providerType=ehf"); len(got) != 1 || got[0].ID != ehf {
			t.Fatalf("EHF: %+v", got)
		}
		if got := list(f.tn, "subscriberId="+f.subscriber); len(got) != 3 {
			t.Fatalf("of subscriber: %+v", got)
		}
		r := f.tn.Do("GET", "/paymentagreement?limit=2", nil)
		if link := r.Header.Get("Link"); !strings.Contains(link, `rel="next"`) {
			t.Fatalf("no next link: %q", link)
		}
		wantEmpty(t, f.tn.Do("GET", "/paymentagreement?subscriberId="+store.NewID(), nil), "unknown subscriber filter")
		fields(t, f.tn.Do("GET", "/paymentagreement?providerType=Cash", nil))

		other := e.NewTenant("tenant-b", true)
		if r := other.Do("GET", "/paymentagreement/"+ehf, nil); r.Status != http.StatusNotFound {
			t.Errorf("other tenant GET: %d", r.Status)
		}
		wantEmpty(t, other.Do("GET", "/paymentagreement?subscriberId="+f.subscriber, nil), "other tenant's subscriber as a filter")
		if r := other.Do("DELETE", "/paymentagreement/"+ext, nil); r.Status != http.StatusNotFound {
			t.Errorf("other tenant DELETE: %d", r.Status)
		}
		if got := list(other, ""); len(got) != 0 {
			t.Errorf("other tenant lists %+v", got)
		}
		if got := fields(t, other.Do("POST", "/paymentagreement", ehfBody(f.subscriber, "923609016"))); strings.Join(got, ",") != "subscriberId" {
			t.Errorf("other tenant's subscriber: %v", got)
		}
		if r := other.Do("POST", "/subscription/"+sub+"/changePaymentAgreement", map[string]any{"paymentAgreementId": ehf}); r.Status != http.StatusNotFound {
			t.Errorf("other tenant's subscription: %d", r.Status)
		}
		// Its own subscriber's subscription cannot take tenant A's agreement.
		g := newBillingFixture(t, e, other)
		otherSub := g.order(nil)
		if got := fields(t, other.Do("POST", "/subscription/"+otherSub+"/changePaymentAgreement", map[string]any{"paymentAgreementId": ehf})); strings.Join(got, ",") != "paymentAgreementId" {
			t.Errorf("A's agreement on B's subscription: %v", got)
		}
		// Nor another subscriber's agreement of the same tenant.
		sub2 := create(t, f.tn, "/subscriber", map[string]any{"name": "Ola"})
		foreign := create(t, f.tn, "/paymentagreement", ehfBody(sub2, "984851006"))
		if got := fields(t, f.tn.Do("POST", "/subscription/"+sub+"/changePaymentAgreement", map[string]any{"paymentAgreementId": foreign})); strings.Join(got, ",") != "paymentAgreementId" {
			t.Errorf("another subscriber's agreement: %v", got)
		}
		if got := fields(t, f.tn.Do("POST", "/subscription/"+sub+"/changePaymentAgreement", map[string]any{})); strings.Join(got, ",") != "paymentAgreementId" {
			t.Errorf("no agreement: %v", got)
		}
		if r := f.tn.Do("POST", "/subscription/"+store.NewID()+"/changePaymentAgreement", map[string]any{"paymentAgreementId": ehf}); r.Status != http.StatusNotFound {
			t.Errorf("missing subscription: %d", r.Status)
		}
	})
}

func TestOrderWithPaymentAgreementParameters(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		params := map[string]any{"providerType": "ehf", "providerAgreementReference": "923 609 016"}

		// Existing subscriber.
		body := f.order()
		body["paymentAgreement"] = params
		id := create(t, f.tn, "/order", body)
		o := getOrder(t, f.tn, id)
		if o.PaymentAgreementID != nil {
			t.Fatalf("agreement before completion: %s", *o.PaymentAgreementID)
		}
		var raw map[string]json.RawMessage
		f.tn.Do("GET", "/order/"+id, nil).JSON(t, &raw)
		if string(raw["paymentAgreement"]) != `{"providerType":"EHF","providerAgreementReference":"923609016","paymentMethod":"eInvoice"}` {
			t.Fatalf("order shows %s", raw["paymentAgreement"])
		}
		if n := len(eventsOf(t, e, f.tn, "PaymentAgreementCreated")); n != 0 {
			t.Fatalf("%d agreements created before completion", n)
		}
		done := completeOrder(t, f.tn, id)
		a := getAgreement(t, f.tn, *done.PaymentAgreementID)
		if a.ProviderType != "EHF" || a.ProviderAgreementReference != "923609016" || a.SubscriberID != f.subscriber {
			t.Fatalf("created %+v", a)
		}
		if got := *getSubscription(t, f.tn, *done.SubscriptionID).PaymentAgreementID; got != a.ID {
			t.Fatalf("subscription uses %s", got)
		}

		// New subscriber: created with the subscriber, in one transaction.
		body = f.order()
		delete(body, "subscriberId")
		body["subscriber"] = map[string]any{"name": "Ola Nordmann"}
		body["paymentAgreement"] = map[string]any{"providerType": "External", "providerAgreementReference": "psp-9", "paymentMethod": "Vipps"}
		done = completeOrder(t, f.tn, create(t, f.tn, "/order", body))
		a = getAgreement(t, f.tn, *done.PaymentAgreementID)
		if a.ProviderType != "External" || a.PaymentMethod != "Vipps" || a.SubscriberID != *done.SubscriberID {
			t.Fatalf("new subscriber's agreement %+v", a)
		}
		if n := len(eventsOf(t, e, f.tn, "PaymentAgreementCreated")); n != 2 {
			t.Fatalf("%d PaymentAgreementCreated events", n)
		}

		// Checked at creation, naming paymentAgreement.<field>.
		for name, c := range map[string]struct {
			agreement map[string]any
			id        bool
			want      string
		}{
			"bad org number":  {map[string]any{"providerType": "EHF", "providerAgreementReference": "923609017"}, false, "paymentAgreement.providerAgreementReference"},
			"bad GLN":         {map[string]any{"providerType": "OIO", "providerAgreementReference": "5790000000013"}, false, "paymentAgreement.providerAgreementReference"},
			"taken reference": {map[string]any{"providerType": "External", "providerAgreementReference": "psp-9"}, false, "paymentAgreement.providerAgreementReference"},
			"Autogiro":        {map[string]any{"providerType": "Autogiro"}, false, "paymentAgreement.providerAgreementReference"},
			"both given":      {map[string]any{"providerType": "Invoice"}, true, "paymentAgreement"},
		} {
			body := f.order()
			body["paymentAgreement"] = c.agreement
			if c.id {
				body["paymentAgreementId"] = a.ID
			}
			if got := fields(t, f.tn.Do("POST", "/order", body)); strings.Join(got, ",") != c.want {
				t.Errorf("%s: 400 names %v, want %s", name, got, c.want)
			}
		}

		// A reference taken between creation and completion: 400, and the
		// order stays open.
		body = f.order()
		body["paymentAgreement"] = map[string]any{"providerType": "External", "providerAgreementReference": "psp-10"}
		late := create(t, f.tn, "/order", body)
		create(t, f.tn, "/paymentagreement", map[string]any{"subscriberId": f.subscriber, "providerType": "External", "providerAgreementReference": "psp-10"})
		if got := fields(t, f.tn.Do("POST", "/order/"+late+"/complete", nil)); strings.Join(got, ",") != "paymentAgreement.providerAgreementReference" {
			t.Fatalf("late conflict: %v", got)
		}
		if o := getOrder(t, f.tn, late); o.Status != "Created" {
			t.Fatalf("order %s after a failed completion", o.Status)
		}
	})
}

// TestDeleteAgreementRacingOrderCompletions deletes an agreement while
// orders naming it are completed: each completion either commits first
// (and its subscription falls back to Invoice) or finds the agreement
// deleted (400); no unended period is left on the deleted agreement.
func TestDeleteAgreementRacingOrderCompletions(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		ehf := create(t, f.tn, "/paymentagreement", ehfBody(f.subscriber, "923609016"))
		const n = 12
		orders := make([]string, n)
		for i := range orders {
			body := f.order()
			body["paymentAgreementId"] = ehf
			orders[i] = create(t, f.tn, "/order", body)
		}
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i, id := range orders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = f.tn.Do("POST", "/order/"+id+"/complete", nil).Status
			}()
			if i == n/2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if r := f.tn.Do("DELETE", "/paymentagreement/"+ehf, nil); r.Status != http.StatusNoContent {
						t.Errorf("delete: %d %s", r.Status, r.Body)
					}
				}()
			}
		}
		wg.Wait()
		completed := 0
		for i, st := range statuses {
			o := getOrder(t, f.tn, orders[i])
			switch {
			case st == http.StatusOK && o.Status == "Completed":
				completed++
				if got := *getSubscription(t, f.tn, *o.SubscriptionID).PaymentAgreementID; got == ehf {
					t.Errorf("order %d: its subscription still uses the deleted agreement", i)
				}
			case st == http.StatusBadRequest && o.Status == "Created":
			default:
				t.Errorf("order %d: %d, status %s", i, st, o.Status)
			}
		}
		t.Logf("%d of %d completions committed before the delete", completed, n)
	})
}
