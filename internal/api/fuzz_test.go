package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store/storetest"
)

// FuzzAPI sends arbitrary requests to the main API on a real listener of
// a server per engine (PostgreSQL too when KADENS_TEST_POSTGRES_URL is
// set), over a tenant with a record behind every route family: the
// operation is one of the served routes ("METHOD /path/{param}"; an input
// that names none is mapped onto one), its path parameters real ids of the
// route's family, of another family or another tenant, a new uuid, or the
// input's own text; the query and the body are the input's, as JSON or
// not. Most requests act as the tenant's machine client, the rest without
// a token or with another tenant's (or a broken) tenant header.
//
// Asserted of every answer: no 5xx (507 says the disk is full, which it is
// not here), everything /openapi.json documents as it describes (apitest
// checks each exchange against the served document), a JSON body whole
// JSON and a 400's body a ValidationResultModel; and one request never
// poisons the next: after each input a fixed one (create a subscriber,
// read it back, list subscribers) still succeeds.
//
// In the operation, the query and the body, {family} (a route's path up
// to its id without slashes: {subscriber}, {autogiromandate}) stands for
// a real id of that family, so the corpus reaches records and not only
// 404s. The seed corpus below runs in every go test; go test -run '^$'
// -fuzz '^FuzzAPI$' ./internal/api explores.
func FuzzAPI(f *testing.F) {
	var targets []*fuzzAPITarget
	for _, eng := range storetest.Engines() {
		targets = append(targets, newFuzzAPITarget(f, apitest.Start(f, eng, map[string]string{
			"KADENS_EGRESS_ALLOW_PRIVATE": "true", "KADENS_WEBHOOK_RETRY_SCHEDULE": "50ms"})))
	}
	// pick: bits 0-1 who (0, 1 the tenant; 2 no token; 3 a wrong tenant
	// header), bits 2-4 where path ids come from (fuzzIDSources), bit 5 a
	// body sent as text/plain, bit 6 the second id of a family, bit 7 the
	// operation's path sent as it is when it names no route.
	for _, sd := range []struct {
		op    string
		pick  uint8
		id    string
		query string
		body  string
	}{
		// subscribers
		{"POST /subscriber", 0, "", "", `{"name":"Kari","email":"kari@example.no","country":"NO"}`},
		{"POST /subscriber", 0, "", "", `{"name":"\u0000","email":"a@@b","country":"XX","subscriberNumber":-1}`},
		{"POST /subscriber", 0, "", "", `{"name":"x","subscriberNumber":99999999999999999999}`},
		{"POST /subscriber", 0, "", "", `[1,2`},
		{"POST /subscriber", 0x20, "", "", `name=x`},
		{"GET /subscriber", 0, "", "name=%00&limit=0", ""},
		{"GET /subscriber", 0, "", "limit=1000000&cursor=Zm9v", ""},
		{"GET /subscriber", 0, "", "subscriberNumber=-1&email=%ff", ""},
		{"GET /subscriber/{id}", 0, "", "", ""},
		{"GET /subscriber/{id}", 6 << 2, "nope", "", ""},
		{"GET /subscriber/{id}", 6 << 2, "0190A0A0-0000-7000-8000-00000000000G", "", ""},
		{"GET /subscriber/{id}", 5 << 2, "", "", ""},
		{"GET /subscriber/{id}", 7 << 2, "", "", ""},
		{"PUT /subscriber/{id}", 0, "", "", `{"name":"Kari N","email":null,"country":"SE","id":"{order}"}`},
		{"PUT /subscriber/{id}", 0, "", "", `{"name":{"a":1}}`},
		// organizations and the catalog
		{"POST /organization", 0, "", "", `{"name":"N","country":"NO","currency":"NOK","timeZone":"Mars/Olympus"}`},
		{"PUT /organization/{id}", 0, "", "", `{"name":"N","country":"NO","currency":"XBT","timeZone":"Europe/Oslo"}`},
		{"POST /product", 0, "", "", `{"name":"P","category":"digital","vatRate":"1e400"}`},
		{"POST /billingplan", 0, "", "", `{"name":"B","intervalUnit":"Month","intervalCount":0}`},
		{"POST /package", 0, "", "", `{"name":"P","price":"-1","productIds":["{product}"],"billingPlanIds":["{billingplan}","{billingplan}"]}`},
		{"POST /package/{id}/preview", 0, "", "", `{"subscriberId":"{subscriber}","start":"9999-12-31T23:59:59Z"}`},
		{"POST /package/{id}/pricechange", 0, "", "", `{"targetTemplatePackageId":"{package}","effectiveFrom":"0001-01-01T00:00:00Z","noticeDays":-5}`},
		{"POST /package/{id}/pricechange/preview", 0, "", "", `{}`},
		{"GET /package/{id}/pricechange/{priceChangeId}", 5 << 2, "", "", ""},
		{"POST /packagechain", 0, "", "", `{"name":"c","packageChain":{"steps":[{"step":1,"nextPackageId":"{package}","periods":-1},{"step":1}]}}`},
		{"POST /prorationpolicy", 0, "", "", `{"name":"x","paidProration":"Sometimes"}`},
		{"POST /dunningprocess", 0, "", "", `{"name":"D","reminderDays":[-1,99999],"reminderFee":1e308,"paymentStopDays":0}`},
		// orders and subscriptions
		{"POST /order", 0, "", "", `{"organizationId":"{organization}","templatePackageId":"{package}","subscriberId":"{subscriber}","paymentAgreementId":"{paymentagreement}","requestedStart":"2027-02-01T00:00:00+01:00"}`},
		{"POST /order", 0, "", "", `{"organizationId":"{organization}","templatePackageId":"{package}","subscriberId":"{subscriber}","requestedStart":"10000-01-01T00:00:00Z"}`},
		{"POST /order/{id}/complete", 0, "", "", ""},
		{"POST /order/{id}/cancel", 0x40, "", "", `{"reason":"\u0000"}`},
		{"GET /order", 0, "", "subscriberId={subscriber}&status=Nope", ""},
		{"GET /subscription", 0, "", "status=Active&subscriberId=x", ""},
		{"GET /subscription/scheduled", 0, "", "", ""},
		{"POST /subscription/{id}/scheduledchange", 0, "", "", `{"processingType":"OnRenewal","templatePackageId":"{package}"}`},
		{"POST /subscription/{id}/scheduledchange", 0, "", "", `{"processingType":"Immediately","templatePackageId":"{subscription}"}`},
		{"POST /subscription/{id}/changePaymentAgreement", 0, "", "", `{"paymentAgreementId":"{autogiromandate}"}`},
		{"POST /subscription/{id}/cancel", 0x40, "", "", `{"mode":"AtDate","date":"0000-00-00"}`},
		{"GET /subscription/{id}/packagechain", 0, "", "", ""},
		// invoices, credits, payments
		{"GET /invoice", 0, "", "status=Issued&expand=lines&limit=2", ""},
		{"GET /invoice/{id}", 0, "", "", ""},
		{"GET /invoice/{id}/ubl", 0, "", "", ""},
		{"GET /invoice/{id}/peppoldelivery", 0, "", "", ""},
		{"POST /invoice/{id}/credit", 0, "", "", `{"lines":[{"invoiceLineId":"{invoice}","amount":-1}]}`},
		{"POST /invoice/{id}/credit", 0x40, "", "", `{}`},
		{"POST /invoice/documentnetworklookup", 0, "", "", `{"participantId":"0192:\u0000"}`},
		{"GET /creditnote/{id}/ubl", 0, "", "", ""},
		{"POST /payment", 0, "", "", `{"invoiceId":"{invoice}","amount":1e-30,"currency":"NOK","provider":"External","status":"Succeeded","providerReference":"r","paidAt":"2027-02-03T10:00:00+01:00"}`},
		{"POST /payment", 0, "", "", `{"invoiceId":"{invoice}","amount":"99999999999999999999999999.99","currency":"SEK","provider":"External","status":"Failed"}`},
		{"GET /payment", 0, "", "invoiceId={invoice}", ""},
		{"POST /paymentagreement", 0, "", "", `{"subscriberId":"{subscriber}","providerType":"Nope"}`},
		{"POST /paymentagreement/import", 0, "", "", `[{"subscriberId":"{subscriber}","providerType":"Invoice"},{}]`},
		{"GET /paymentdemand", 0, "", "invoiceId={invoice}", ""},
		{"GET /reminder", 0, "", "", ""},
		{"POST /subscriberaccount/{id}/allowance", 0, "", "", `{"amount":5,"description":"Goodwill","vatRate":25}`},
		{"POST /subscriberaccount/{id}/charge", 0, "", "", `{"amount":-5,"description":"","vatRate":250}`},
		{"GET /subscriberaccount/{id}/entries", 0, "", "limit=1", ""},
		// events and webhooks
		{"GET /events", 0, "", "after=zzz&limit=5", ""},
		{"POST /webhook", 0, "", "", `{"url":"{receiver}","eventTypes":["SubscriberCreated","InvoiceIssued"]}`},
		{"POST /webhook", 0, "", "", `{"url":"http://[::1","eventTypes":[]}`},
		{"PUT /webhook/{id}", 0, "", "", `{"url":"{receiver}","eventTypes":["SubscriberCreated"]}`},
		{"PUT /webhook/{id}", 0, "", "", `{"eventTypes":["Nope"],"format":"Nope"}`},
		{"GET /webhook/{id}/deliveries", 0, "", "status=Failed", ""},
		{"POST /webhook/{id}/deliveries/{deliveryId}/redeliver", 0, "", "", ""},
		// login clients and authorizations
		{"POST /loginclient", 0, "", "", `{"name":"Web","redirectUris":["https://news.example/cb","javascript:alert(1)"]}`},
		{"PUT /loginclient/{id}", 0, "", "", `{"name":"Web"}`},
		{"POST /authorizations/user", 0, "", "", `{"email":"ola@example.no","password":"correct horse","subscriberId":"{subscriber}"}`},
		{"PUT /authorizations/user/{id}/password", 0, "", "", `{"password":""}`},
		{"POST /authorizations/identityprovider/account/idp-a/{id}", 6 << 2, "ola.n\u0000", "", `{"userId":"{authorizationsuser}"}`},
		{"GET /authorizations/user/{userId}/access", 0, "", "", ""},
		// Autogiro and AvtaleGiro
		{"POST /autogiro/account", 0, "", "", `{"organizationId":"{organization}","bankgiroCustomerNumber":"x","bankgiroNumber":"5432-1097"}`},
		{"POST /autogiro/mandate", 0, "", "", `{"accountId":"{autogiroaccount}","subscriberId":"{subscriber}","clearingNumber":"3300","bankAccountNumber":"121212-1212","payerId":"19121212-1212"}`},
		{"POST /autogiro/transaction", 0, "", "", `{"mandateId":"{autogiromandate}","amount":0.001,"paymentDate":"2027-13-40"}`},
		{"POST /autogiro/export/mandate/{organizationId}", 0, "", "", ""},
		{"POST /autogiro/import", 0x20, "", "", "01" + strings.Repeat("x", 78) + "\n"},
		{"GET /autogiro/export/file/{fileId}", 5 << 2, "", "", ""},
		{"POST /avtalegiro/account", 0, "", "", `{"name":"A","bankAccountNumber":"1234.56.78903","customerUnitId":"1","kidAlgorithm":"mod12","kidLength":99,"baseComboApiEndpointUrl":"ftp://x"}`},
		{"POST /avtalegiro/account/{id}/organizations", 0, "", "", `[{"id":"{organization}"},{"id":"x"}]`},
		{"POST /avtalegiro/mandate", 0, "", "", `{"accountId":"{avtalegiroaccount}","kid":"000123400001013"}`},
		{"POST /avtalegiro/claim", 0, "", "", `{"mandateId":"{avtalegiromandate}","amount":49.5,"dueDate":"2027-04-15"}`},
		{"POST /avtalegiro/claim/{id}/cancel", 0, "", "", ""},
		{"POST /avtalegiro/account/{id}/export", 0, "", "", ""},
		{"POST /avtalegiro/import", 0x20, "", "", "NY000010" + strings.Repeat("0", 72) + "\n"},
		// test clocks
		{"GET /testclock", 0, "", "", ""},
		{"POST /testclock/advance", 0, "", "", `{"to":"2026-01-01T00:00:00Z"}`},
		{"POST /testclock/advance", 0, "", "", `{"to":"not a time"}`},
		// whoever sends it
		{"GET /subscriber", 2, "", "", ""},
		{"POST /subscriber", 3, "", "", `{"name":"x"}`},
		{"GET /invoice/{id}", 3, "", "", ""},
		{"DELETE /webhook/{id}", 2, "", "", ""},
		// paths no route has
		{"GET /subscriber/{subscriber}/nope", 0x80, "", "", ""},
		{"PATCH /Subscriber/", 0x80, "", "", ""},
		{"GET /subscriber//x", 0x80, "", "", ""},
		{"POST /%2e%2e/subscriber", 0x80, "", "", ""},
		// removals, last: the records they delete are the ones later
		// seeds name
		{"DELETE /subscription/{id}/scheduledchange/{changeId}", 0, "", "", ""},
		{"DELETE /package/{id}/pricechange/{priceChangeId}", 0, "", "", ""},
		{"DELETE /webhook/{id}", 0x40, "", "", ""},
		{"DELETE /loginclient/{id}", 0, "", "", ""},
		{"DELETE /autogiro/mandate/{id}", 0x40, "", "", ""},
		{"DELETE /avtalegiro/account/{id}/organizations/{organizationId}", 0, "", "", ""},
		{"DELETE /paymentagreement/{id}", 0x40, "", "", ""},
		{"DELETE /subscriber/{id}", 0x40, "", "", ""},
		{"DELETE /organization/{id}", 0, "", "", ""},
	} {
		f.Add(sd.op, sd.pick, sd.id, sd.query, []byte(sd.body))
	}
	f.Fuzz(func(t *testing.T, op string, pick uint8, id, query string, body []byte) {
		for _, tg := range targets {
			tg.exchange(t, op, pick, id, query, body)
			tg.sane(t, op)
			// Work a request started after its answer (an event's fan-out,
			// a delivery's outcome) fails only in the log: the fan-out's
			// races with a deletion were found there.
			if errs := tg.e.ServerErrors(); len(errs) > 0 {
				t.Fatalf("%s: the server logged errors:\n%s", op, strings.Join(errs, "\n"))
			}
		}
	})
}

// fuzzAPITarget is one engine's server for FuzzAPI, with a record behind
// every route family of its tenant and one record of another tenant.
type fuzzAPITarget struct {
	e      *apitest.Env
	other  apitest.Tenant
	routes []string // "METHOD /path/{param}", as Routes lists them
	// ids of each family ({family} in the input), and the other tenant's.
	ids      map[string][]string
	foreign  string
	all      []string
	replacer *strings.Replacer
}

func newFuzzAPITarget(f *testing.F, e *apitest.Env) *fuzzAPITarget {
	f.Helper()
	tg := &fuzzAPITarget{e: e, routes: e.Server.API.Routes(), ids: map[string][]string{}}
	tn := e.Tenant
	do := func(method, path string, body any, want ...int) *apitest.Response {
		f.Helper()
		r := tn.Do(method, path, body)
		if !slices.Contains(want, r.Status) {
			f.Fatalf("setup: %s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r
	}
	create := func(path string, body any) string {
		f.Helper()
		return do("POST", path, body, http.StatusCreated).ID(f)
	}
	// A receiver that validates webhook registrations and takes their
	// deliveries, so the event fan-out runs beside the requests.
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var evs []struct {
			EventType string
			Data      struct{ ValidationCode string }
		}
		if json.NewDecoder(r.Body).Decode(&evs) == nil && len(evs) == 1 && evs[0].Data.ValidationCode != "" {
			_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": evs[0].Data.ValidationCode})
		}
	}))
	f.Cleanup(rcv.Close)

	do("POST", "/testclock/advance", map[string]any{"to": "2027-01-04T09:00:00Z"}, http.StatusOK)
	sd := tn.Seed(f)
	org := sd.Organization(seed.Nordavis)
	se := create("/organization", map[string]any{"name": "Nordavis AB", "country": "SE", "currency": "SEK",
		"timeZone": "Europe/Stockholm", "organizationNumber": "556123-4567"})
	digital := sd.Product(seed.Product{Name: "Digital", Category: "digital", VATRate: "0"})
	magazine := sd.Product(seed.Product{Name: "Magasin", Category: "magazine", VATRate: "25"})
	plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
	pkg := sd.Package(seed.Package{Name: "Digital", Price: "199.00", Products: []string{digital},
		Additional: []seed.Additional{{ProductID: magazine, Price: "49.00", SelectedByDefault: true}}, Plans: []string{plan}})
	dearer := sd.Package(seed.Package{Name: "Digital+", Price: "299.00", Products: []string{digital}, Plans: []string{plan}})
	subscriber := sd.Subscriber(seed.Subscriber{Name: "Kari", Email: "kari@example.no", Country: "NO"})
	sd.Subscriber(seed.Subscriber{Name: "Tolvan Tolvansson", Country: "SE"})
	create("/dunningprocess", map[string]any{"name": "Standard", "reminderDays": []int{7}, "reminderFee": 35,
		"paymentStopDays": 60, "isDefault": true})
	create("/prorationpolicy", map[string]any{"name": "P"})
	create("/packagechain", map[string]any{"name": "c", "packageChain": map[string]any{
		"steps": []map[string]any{{"step": 1, "nextPackageId": dearer, "periods": 3}}}})
	var agreement string
	do("POST", "/paymentagreement", map[string]any{"subscriberId": subscriber, "providerType": "Invoice"},
		http.StatusCreated, http.StatusOK).JSON(f, &agreement)
	for range 3 {
		order := create("/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": subscriber,
			"paymentAgreementId": agreement, "requestedStart": "2027-02-01T00:00:00+01:00"})
		do("POST", "/order/"+order+"/complete", nil, http.StatusOK)
	}
	create("/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": subscriber,
		"paymentAgreementId": agreement, "requestedStart": "2027-02-01T00:00:00+01:00"})
	create("/package/"+pkg+"/pricechange", map[string]any{"targetTemplatePackageId": dearer,
		"effectiveFrom": "2027-06-01T00:00:00+02:00", "noticeDays": 30})
	do("POST", "/testclock/advance", map[string]any{"to": "2027-03-05T09:00:00Z"}, http.StatusOK)
	var invs []struct {
		ID    string      `json:"id"`
		Gross json.Number `json:"gross"`
	}
	do("GET", "/invoice", nil, http.StatusOK).JSON(f, &invs)
	if len(invs) < 2 {
		f.Fatalf("setup: %d invoices, want at least 2", len(invs))
	}
	create("/payment", map[string]any{"invoiceId": invs[0].ID, "amount": invs[0].Gross, "currency": "NOK", "provider": "External",
		"status": "Succeeded", "providerReference": "bank-1", "paidAt": "2027-03-03T10:00:00+01:00", "paymentAgreementId": agreement})
	create("/invoice/"+invs[1].ID+"/credit", map[string]any{})
	var subs []struct{ ID, Status string }
	do("GET", "/subscription", nil, http.StatusOK).JSON(f, &subs)
	for _, s := range subs {
		if s.Status == "Active" {
			do("POST", "/subscription/"+s.ID+"/scheduledchange", map[string]any{"processingType": "OnRenewal", "templatePackageId": dearer},
				http.StatusCreated, http.StatusOK)
			break
		}
	}
	hook := create("/webhook", map[string]any{"url": rcv.URL, "eventTypes": []string{"SubscriberCreated", "InvoiceIssued", "OrderProcessed"}})
	create("/webhook", map[string]any{"url": rcv.URL, "eventTypes": []string{"SubscriberCreated"}})
	do("POST", "/loginclient", map[string]any{"name": "Web", "redirectUris": []string{"https://news.example/cb"}}, http.StatusCreated)
	user := create("/authorizations/user", map[string]any{"email": "kari@example.no", "password": "correct horse", "subscriberId": subscriber})
	create("/authorizations/identityprovider/account/idp-a/kari.n", map[string]any{"userId": user})
	account := create("/autogiro/account", map[string]any{"organizationId": se, "bankgiroCustomerNumber": "543210",
		"bankgiroNumber": "5432-1096", "name": "Nordavis Autogiro"})
	mandate := create("/autogiro/mandate", map[string]any{"accountId": account, "subscriberId": subscriber,
		"clearingNumber": "3300", "bankAccountNumber": "121212-1212", "payerId": "19121212-1212"})
	create("/autogiro/transaction", map[string]any{"mandateId": mandate, "amount": 249.00, "paymentDate": "2027-04-01"})
	ag := create("/avtalegiro/account", map[string]any{"name": "Avis", "bankAccountNumber": "12345678903", "customerUnitId": "12345678",
		"kidAlgorithm": "mod10", "kidLength": 15, "baseComboApiEndpointUrl": "https://bank.example"})
	do("POST", "/avtalegiro/account/"+ag+"/organizations", []map[string]any{{"id": org}}, http.StatusOK, http.StatusNoContent, http.StatusCreated)
	agm := create("/avtalegiro/mandate", map[string]any{"accountId": ag, "kid": "000123400001012", "notify": true, "amountLimit": 1000.00})
	create("/avtalegiro/claim", map[string]any{"mandateId": agm, "amount": 49.5, "dueDate": "2027-04-01"})

	// Every family's ids, from its list (the first page).
	for _, rt := range tg.routes {
		method, path, _ := strings.Cut(rt, " ")
		if method != "GET" || strings.Contains(path, "{") {
			continue
		}
		r := tn.Do("GET", path, nil)
		var items []struct {
			ID string `json:"id"`
		}
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &items) != nil {
			continue // not a list of records (the test clock)
		}
		for _, it := range items {
			if it.ID != "" && len(tg.ids[family(path)]) < 4 {
				tg.ids[family(path)] = append(tg.ids[family(path)], it.ID)
			}
		}
	}
	nested := func(fam, path string) {
		var items []struct {
			ID string `json:"id"`
		}
		do("GET", path, nil, http.StatusOK).JSON(f, &items)
		for _, it := range items {
			tg.ids[fam] = append(tg.ids[fam], it.ID)
		}
	}
	nested("pricechange", "/package/"+pkg+"/pricechange")
	nested("delivery", "/webhook/"+hook+"/deliveries")
	for _, s := range tg.ids["subscription"] {
		nested("scheduledchange", "/subscription/"+s+"/scheduledchange")
	}
	for _, fam := range []string{"organization", "package", "subscriber", "order", "subscription", "invoice", "creditnote",
		"payment", "paymentagreement", "paymentdemand", "webhook", "loginclient", "authorizationsuser", "autogiroaccount",
		"autogiromandate", "autogirotransaction", "avtalegiroaccount", "avtalegiromandate", "avtalegiroclaim",
		"subscriberaccount", "pricechange", "scheduledchange"} {
		if len(tg.ids[fam]) == 0 {
			f.Fatalf("setup: no %s to fuzz with", fam)
		}
	}
	tg.ids["receiver"] = []string{rcv.URL}
	pairs := []string{}
	for fam, ids := range tg.ids {
		pairs = append(pairs, "{"+fam+"}", ids[0])
		if fam != "receiver" {
			tg.all = append(tg.all, ids...)
		}
	}
	slices.Sort(tg.all)
	tg.replacer = strings.NewReplacer(pairs...)
	tg.other = e.NewTenant("tenant-b", true)
	tg.foreign = tg.other.Seed(f).Subscriber(seed.Subscriber{Name: "Per"})
	return tg
}

// family names the records of a route's path parameter: the path up to
// it without slashes ("/autogiro/mandate/{id}" → autogiromandate), or the
// parameter's own name for a second one ({priceChangeId} → pricechange).
func family(path string) string {
	if i := strings.Index(path, "/{"); i >= 0 {
		path = path[:i]
	}
	return strings.ReplaceAll(strings.ToLower(path), "/", "")
}

var paramFamilies = map[string]string{
	"organizationId": "organization", "priceChangeId": "pricechange", "changeId": "scheduledchange",
	"deliveryId": "delivery", "userId": "authorizationsuser", "fileId": "autogirofile",
}

// fuzzIDSources are the choices of pick's bits 2-4 for a path id: 0-3 the
// family's, 4 another family's, 5 a new uuid, 6 the input's text, 7 the
// other tenant's record.
func (tg *fuzzAPITarget) pathID(fam string, pick uint8, id, op string) string {
	h := fnv.New32a()
	h.Write([]byte(op + id))
	n := int(h.Sum32())
	switch src := pick >> 2 & 7; {
	case src < 4:
		ids := tg.ids[fam]
		if len(ids) == 0 {
			return uuid.NewString()
		}
		if pick&0x40 != 0 && len(ids) > 1 {
			return ids[1]
		}
		return ids[0]
	case src == 4:
		return tg.all[n%len(tg.all)]
	case src == 5:
		return uuid.NewString()
	case src == 6:
		return id
	default:
		return tg.foreign
	}
}

// request builds the input's request; nil when it is not one an HTTP
// client can send.
func (tg *fuzzAPITarget) request(op string, pick uint8, id, query string, body []byte) (*http.Request, string) {
	method, path, _ := strings.Cut(op, " ")
	if !slices.Contains(tg.routes, method+" "+path) && pick&0x80 == 0 {
		h := fnv.New32a()
		h.Write([]byte(op))
		method, path, _ = strings.Cut(tg.routes[int(h.Sum32()%uint32(len(tg.routes)))], " ")
	}
	template := method + " " + path
	// Path parameters, then {family} anywhere.
	var b strings.Builder
	for i, seg := range strings.Split(path, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		if name, ok := strings.CutPrefix(seg, "{"); ok && strings.HasSuffix(name, "}") {
			name = strings.TrimSuffix(name, "}")
			fam := paramFamilies[name]
			if fam == "" {
				fam = family(strings.Join(strings.Split(path, "/")[:i], "/"))
			}
			if _, known := tg.ids[fam]; known || name == "id" || paramFamilies[name] != "" {
				seg = url.PathEscape(tg.pathID(fam, pick, id, op))
			}
		}
		b.WriteString(seg)
	}
	target := tg.e.URL + tg.replacer.Replace(b.String())
	if query != "" {
		// A space cannot be sent in a request line: the client would write
		// it raw and Go's server would refuse the line itself (a plain-text
		// 400 before any handler), which no client that can send the request
		// ever meets. It goes as %20, as a client encodes it.
		target += "?" + strings.ReplaceAll(tg.replacer.Replace(query), " ", "%20")
	}
	var rd *bytes.Reader
	if body != nil {
		rd = bytes.NewReader([]byte(tg.replacer.Replace(string(body))))
	}
	var req *http.Request
	var err error
	if rd != nil {
		req, err = http.NewRequest(method, target, rd)
	} else {
		req, err = http.NewRequest(method, target, nil)
	}
	if err != nil {
		return nil, template
	}
	if body != nil {
		if pick&0x20 != 0 {
			req.Header.Set("Content-Type", "text/plain")
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	switch pick & 3 {
	case 2:
		// No token; the input's id, when it is one, as a tenant header.
		if id != "" {
			req.Header.Set("S4-TenantId", id)
		}
	case 3:
		req.Header.Set("Authorization", "Bearer "+tg.e.Tenant.Token)
		if id != "" && pick>>2&7 == 6 {
			req.Header.Set("S4-TenantId", id)
		} else {
			req.Header.Set("S4-TenantId", tg.other.ID)
		}
	default:
		req.Header.Set("Authorization", "Bearer "+tg.e.Tenant.Token)
		req.Header.Set("S4-TenantId", tg.e.Tenant.ID)
	}
	return req, template
}

// exchange sends the input's request and checks the answer.
func (tg *fuzzAPITarget) exchange(t *testing.T, op string, pick uint8, id, query string, body []byte) {
	t.Helper()
	e := tg.e.For(t)
	req, template := tg.request(op, pick, id, query, body)
	if req == nil {
		return // not a URL
	}
	what := fmt.Sprintf("%s: %s (%s %s?%s, pick %#x, id %q) body %.300q", tg.e.Store.Engine(), template, req.Method, req.URL.Path, req.URL.RawQuery, pick, id, body)
	r, err := e.Send(req)
	if err != nil {
		if strings.Contains(err.Error(), "invalid header field") || strings.Contains(err.Error(), "net/http: can't write") {
			return // refused by the client, never sent
		}
		t.Fatalf("%s: %v", what, err)
	}
	if r.Status >= 500 {
		t.Fatalf("%s: %d %.1000s", what, r.Status, r.Body)
	}
	ct := r.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "application/json") && len(r.Body) > 0 && !json.Valid(r.Body) {
		t.Fatalf("%s: %d with a body that is not JSON: %.500s", what, r.Status, r.Body)
	}
	if r.Status == http.StatusBadRequest && len(r.Body) > 0 {
		var v apitest.Validation
		if json.Unmarshal(r.Body, &v) != nil || v.Message != "Validation Failed" || len(v.Errors) == 0 {
			t.Fatalf("%s: a 400 that is not a ValidationResultModel: %.500s", what, r.Body)
		}
	}
}

// sane makes the fixed requests that must succeed whatever came before.
func (tg *fuzzAPITarget) sane(t *testing.T, op string) {
	t.Helper()
	tn := tg.e.For(t).Tenant
	r := tn.Do("POST", "/subscriber", map[string]any{"name": "Sanity"})
	if r.Status != http.StatusCreated {
		t.Fatalf("%s: after %q, creating a subscriber: %d %.500s", tg.e.Store.Engine(), op, r.Status, r.Body)
	}
	id := r.ID(t)
	if r := tn.Do("GET", "/subscriber/"+id, nil); r.Status != http.StatusOK {
		t.Fatalf("%s: after %q, reading a new subscriber: %d %.500s", tg.e.Store.Engine(), op, r.Status, r.Body)
	}
	if r := tn.Do("GET", "/subscriber?limit=1", nil); r.Status != http.StatusOK {
		t.Fatalf("%s: after %q, listing subscribers: %d %.500s", tg.e.Store.Engine(), op, r.Status, r.Body)
	}
}
