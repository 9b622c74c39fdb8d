package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/peppol/peppoltest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/webhook"
)

// gridEvent is an event as an Azure Event Grid receiver reads it: the
// documented schema, nothing else (the receiver refuses unknown envelope
// fields, so the schema cannot grow unnoticed).
type gridEvent struct {
	ID              string          `json:"id"`
	Topic           string          `json:"topic"`
	Subject         string          `json:"subject"`
	EventType       string          `json:"eventType"`
	EventTime       string          `json:"eventTime"`
	Data            json.RawMessage `json:"data"`
	DataVersion     string          `json:"dataVersion"`
	MetadataVersion string          `json:"metadataVersion"`
}

// How an Event Grid receiver completes the handshake.
const (
	validateByEcho     = "echo"      // answers {"validationResponse": code}
	validateByGet      = "get"       // GETs validationUrl before answering 200 without a body
	validateByGetLater = "get-later" // answers 200 without a body, then GETs validationUrl
	validateByBoth     = "both"      // GETs validationUrl, then echoes the code too
)

// gridReceiver is written the way Event Grid's own samples are: it checks
// the aeg-event-type header, validates on the event type
// Microsoft.EventGrid.SubscriptionValidationEvent, and otherwise dispatches
// on eventType and reads data by the documented field names. It knows
// nothing of Kadens.
type gridReceiver struct {
	t      *testing.T
	mode   string
	kadens *http.Client // reaches the validation URL's host
	mu     sync.Mutex
	// release, in the get-later mode, is closed by the test once it has
	// read Kadens' answer to the webhook's creation: "later" means after
	// that answer, however slowly a loaded machine gives it.
	release  chan struct{}
	byKind   map[string][]gridEvent
	problems []string
	srv      *httptest.Server
}

func newGridReceiver(t *testing.T, mode string, kadens *http.Client) *gridReceiver {
	g := &gridReceiver{t: t, mode: mode, kadens: kadens, release: make(chan struct{}), byKind: map[string][]gridEvent{}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *gridReceiver) problem(format string, args ...any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.problems = append(g.problems, fmt.Sprintf(format, args...))
}

func (g *gridReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var events []gridEvent
	if err := dec.Decode(&events); err != nil {
		g.problem("not an Event Grid array: %v: %s", err, body)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	switch h := r.Header.Get("aeg-event-type"); {
	case len(events) == 1 && events[0].EventType == "Microsoft.EventGrid.SubscriptionValidationEvent":
		if h != "SubscriptionValidation" {
			g.problem("validation event with aeg-event-type %q", h)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var v struct {
			ValidationCode string `json:"validationCode"`
			ValidationURL  string `json:"validationUrl"`
		}
		if err := json.Unmarshal(events[0].Data, &v); err != nil || v.ValidationCode == "" || v.ValidationURL == "" {
			g.problem("validation data %s", events[0].Data)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		switch g.mode {
		case validateByEcho:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": v.ValidationCode})
		case validateByGet:
			g.open(v.ValidationURL)
			w.WriteHeader(http.StatusOK)
		case validateByBoth:
			g.open(v.ValidationURL)
			_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": v.ValidationCode})
		case validateByGetLater:
			w.WriteHeader(http.StatusOK)
			go func() { <-g.release; g.open(v.ValidationURL) }()
		}
		return
	case h != "Notification":
		g.problem("events with aeg-event-type %q", h)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, e := range events {
		g.read(e)
	}
	w.WriteHeader(http.StatusOK)
}

// open is the manual validation: a plain GET of the URL as sent.
func (g *gridReceiver) open(u string) {
	resp, err := g.kadens.Get(u)
	if err != nil {
		g.problem("GET validationUrl: %v", err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		g.problem("GET validationUrl: %d", resp.StatusCode)
	}
}

// documented lists, per kind, the data fields a receiver reads: those
// INFO-Subscription's documentation names for its event (and ours beside
// them). Each must be present; those marked "!" must also be non-empty.
var documented = map[string][]string{
	"SubscriptionCreated":               {"subscriptionId!", "subscriberId!"},
	"SubscriptionCancelled":             {"subscriptionId!", "subscriberId!"},
	"SubscriptionDeactivated":           {"subscriptionId!", "subscriberId!"},
	"SubscriptionCancellationRemoved":   {"subscriptionId!", "subscriberId!"},
	"SubscriptionCancellationScheduled": {"subscriptionId!", "subscriberId!"},
	"SubscriberDeletionRequested":       {"deletionRequestId!", "subscriberId!", "status!"},
	"SubscriberDeletionResolved":        {"deletionRequestId!", "subscriberId!", "status!"},
	"OrderProcessed":                    {"orderId!", "subscriberId!", "subscriptionId!", "firstPeriodCreated!"},
	"InvoiceIssued":                     {"invoiceId!", "subscriberId!", "paymentDemandId!", "dueDate!", "number!", "invoiceNumber!", "amount!", "currency!"},
	"InvoicePaid":                       {"invoiceId!", "subscriberId!", "paymentDemandId!", "dueDate!", "number!", "invoiceNumber!", "amount!", "currency!"},
	"CreditNoteIssued":                  {"creditNoteId!", "invoiceId!", "subscriberId!", "organizationId!", "number!", "amount!", "currency!"},
	"ReminderIssued":                    {"reminderId!", "invoiceId!", "paymentDemandId!", "subscriberId!", "reminderNumber!"},
	"PaymentCompleted":                  {"paymentId!", "paymentDemandId!", "invoiceId!", "subscriberId!"},
	"PaymentFailed":                     {"paymentId!", "paymentDemandId!", "invoiceId!", "subscriberId!"},
	"PaymentAgreementCreated":           {"paymentAgreementId!", "subscriberId!", "providerType!"},
	"PaymentAgreementDeleted":           {"paymentAgreementId!", "subscriberId!", "providerType!"},
	"PriceChangeNotified":               {"priceChangeId!", "subscriptionId!", "subscriberId!", "currentPrice!", "newPrice!", "effectiveFrom!"},
	"PeppolDeliveryPending":             {"deliveryId!", "documentKind!", "documentId!", "invoiceId!", "status!"},
	"PeppolDeliverySent":                {"deliveryId!", "documentKind!", "documentId!", "invoiceId!", "status!", "messageId!"},
	"PeppolDeliveryDelivered":           {"deliveryId!", "documentKind!", "documentId!", "invoiceId!", "status!", "messageId!"},
	"PeppolDeliveryFailed":              {"deliveryId!", "documentKind!", "documentId!", "invoiceId!", "status!", "failureReason!"},
	"SubscriberCreated":                 {"subscriberId!", "subscriberNumber!", "externalId"},
	"SubscriberDeleted":                 {"subscriberId!"},
	"SubscriberContactCreated":          {"subscriberId!", "contactId!", "isPrimary", "source!"},
	"SubscriberContactUpdated":          {"subscriberId!", "contactId!", "isPrimary", "source!"},
	"SubscriberContactDeleted":          {"subscriberId!", "contactId!"},
	"UserAuthorizationGranted":          {"userId!", "productIds!"},
	"UserAuthorizationRevoked":          {"userId!", "productIds!"},
	"DeliveryStopCreated":               {"deliveryStopId!", "subscriptionId!", "subscriberId!", "firstDate!", "lastDate!", "missedEditions", "creditedEditions"},
	"DeliveryStopChanged":               {"deliveryStopId!", "subscriptionId!", "subscriberId!", "firstDate!", "lastDate!", "missedEditions", "creditedEditions"},
	"DeliveryStopDeleted":               {"deliveryStopId!", "subscriptionId!", "subscriberId!", "firstDate!", "lastDate!", "missedEditions", "creditedEditions"},
	"DeliveryAddressChanged": {"deliveryAddressId!", "action!", "subscriptionId!", "subscriberId!", "kind!", "firstDate!", "lastDate",
		"postalCode!", "country!", "carrier!", "route"},
	"DistributionListAvailable": {"date!", "revision!", "copies", "carriers", "publishedAt!"},
}

// read checks the envelope and the data by the documented names.
func (g *gridReceiver) read(e gridEvent) {
	if _, err := time.Parse(time.RFC3339Nano, e.EventTime); err != nil {
		g.problem("%s: eventTime %q: %v", e.EventType, e.EventTime, err)
	}
	if e.ID == "" || !strings.HasPrefix(e.Topic, "/tenants/") || !strings.HasPrefix(e.Subject, "/") || e.DataVersion != "1" || e.MetadataVersion != "1" {
		g.problem("%s: envelope %+v", e.EventType, e)
	}
	fields, known := documented[e.EventType]
	if !known {
		g.problem("unexpected kind %s", e.EventType)
		return
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(e.Data, &data); err != nil {
		g.problem("%s: data %s: %v", e.EventType, e.Data, err)
		return
	}
	for _, f := range fields {
		name, must := strings.CutSuffix(f, "!")
		v, ok := data[name]
		switch {
		case !ok:
			g.problem("%s: data has no %s: %s", e.EventType, name, e.Data)
		case must && (string(v) == "null" || string(v) == `""` || string(v) == "[]" || string(v) == "false"):
			g.problem("%s: %s is %s", e.EventType, name, v)
		}
	}
	g.mu.Lock()
	g.byKind[e.EventType] = append(g.byKind[e.EventType], e)
	g.mu.Unlock()
}

func (g *gridReceiver) kinds() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for k := range g.byKind {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (g *gridReceiver) events(kind string) []gridEvent {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]gridEvent(nil), g.byKind[kind]...)
}

func (g *gridReceiver) check(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.problems {
		t.Error(p)
	}
}

// dataOf decodes the data of the one event of kind about subject.
func dataOf[T any](t *testing.T, g *gridReceiver, kind, subject string) T {
	t.Helper()
	var v T
	for _, e := range g.events(kind) {
		if e.Subject == subject {
			if err := json.Unmarshal(e.Data, &v); err != nil {
				t.Fatalf("%s data: %v", kind, err)
			}
			return v
		}
	}
	t.Fatalf("no %s about %s", kind, subject)
	return v
}

// TestEventGridReceiverReadsEveryKind: receivers written for Azure Event
// Grid (as INFO-Subscription's integrators' are) validate by event type —
// echoing the code, or opening the validation URL during or after the
// handshake — and then receive and read every event kind Kadens has, each
// caused through the API on a real listener (the authorization kinds, whose
// sources are not built yet, through their emit helper).
func TestEventGridReceiverReadsEveryKind(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			t.Parallel()
			n := &peppolNetwork{dns: peppoltest.StartDNS(t), smp: peppoltest.StartSMP(t), ap: peppoltest.StartAccessPoint(t, "ap-secret")}
			e := apitest.Start(t, eng, map[string]string{"KADENS_PEPPOL_SML_ZONE": peppolZone, "KADENS_PEPPOL_DNS_SERVER": n.dns.Addr,
				"KADENS_EGRESS_ALLOW_PRIVATE": "true", "KADENS_WEBHOOK_RETRY_SCHEDULE": "50ms,100ms"})
			everyKind(t, e, n)
		})
	}
}

func everyKind(t *testing.T, e *apitest.Env, n *peppolNetwork) {
	// The validation URL names the public address; the receivers' client
	// reaches it at the real listener.
	listener := strings.TrimPrefix(e.URL, "http://")
	public, _ := url.Parse(apitest.BaseURL)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if strings.HasPrefix(addr, public.Hostname()+":") {
			addr = listener
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	kadens := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	t.Cleanup(kadens.CloseIdleConnections)

	tn := e.Tenant
	day0 := osloDay(2027, 1, 10).Add(12 * time.Hour)
	if r := tn.Do("POST", "/testclock/advance", map[string]any{"to": day0.UTC().Format(time.RFC3339)}); r.Status != http.StatusOK {
		t.Fatalf("advance: %d %s", r.Status, r.Body)
	}

	// The three ways to pass the handshake.
	all := newGridReceiver(t, validateByEcho, kadens)
	r := tn.Do("POST", "/webhook", map[string]any{"url": all.srv.URL, "eventTypes": webhook.Kinds})
	if r.Status != http.StatusCreated || r.Header.Get("Webhook-Status") != "Validated" {
		t.Fatalf("echoing receiver: %d %v %s", r.Status, r.Header, r.Body)
	}
	byGet := newGridReceiver(t, validateByGet, kadens)
	r = tn.Do("POST", "/webhook", map[string]any{"url": byGet.srv.URL, "eventTypes": []string{"SubscriberCreated"}})
	if r.Status != http.StatusCreated || r.Header.Get("Webhook-Status") != "Validated" {
		t.Fatalf("receiver opening the validation URL while answering: %d %v %s", r.Status, r.Header, r.Body)
	}
	both := newGridReceiver(t, validateByBoth, kadens)
	r = tn.Do("POST", "/webhook", map[string]any{"url": both.srv.URL, "eventTypes": []string{"SubscriberCreated"}})
	if r.Status != http.StatusCreated || r.Header.Get("Webhook-Status") != "Validated" {
		t.Fatalf("receiver opening the validation URL and echoing: %d %v %s", r.Status, r.Header, r.Body)
	}
	later := newGridReceiver(t, validateByGetLater, kadens)
	r = tn.Do("POST", "/webhook", map[string]any{"url": later.srv.URL, "eventTypes": []string{"SubscriberCreated"}})
	laterID := r.ID(t)
	if r.Header.Get("Webhook-Status") != "Pending" {
		t.Fatalf("receiver opening the validation URL later: %v", r.Header)
	}
	close(later.release)
	eventually(t, "validation by a later GET", func() bool {
		var w webhook.Webhook
		tn.Do("GET", "/webhook/"+laterID, nil).JSON(t, &w)
		return w.Status == webhook.WebhookValidated
	})

	// Subscribers and their contacts.
	f := newBillingFixture(t, e, tn)
	dunning := create(t, tn, "/dunningprocess", map[string]any{"name": "Standard", "reminderDays": []int{1}, "reminderFee": 35,
		"paymentStopDays": 60, "isDefault": true})
	_ = dunning
	var kari map[string]any
	tn.Do("GET", "/subscriber/"+f.subscriber, nil).JSON(t, &kari)
	put := func(contacts []map[string]any) {
		t.Helper()
		kari["contacts"] = contacts
		if r := tn.Do("PUT", "/subscriber/"+f.subscriber, kari); r.Status/100 != 2 {
			t.Fatalf("PUT subscriber: %d %s", r.Status, r.Body)
		}
	}
	put([]map[string]any{{"role": "Invoice", "name": "Regnskap", "email": "faktura@example.no"}})
	put([]map[string]any{{"role": "Invoice", "name": "Regnskap", "email": "regnskap@example.no"}})
	put([]map[string]any{})
	gone := create(t, tn, "/subscriber", map[string]any{"name": "Kortvarig", "country": "NO", "externalId": "crm-1"})
	if r := tn.Do("DELETE", "/subscriber/"+gone, nil); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE subscriber: %d %s", r.Status, r.Body)
	}

	// An EHF subscription: order, invoice, Peppol deliveries, a credit note.
	ehf := create(t, tn, "/paymentagreement", ehfBody(f.subscriber, "987654325"))
	orderID := create(t, tn, "/order", map[string]any{"organizationId": f.org, "templatePackageId": f.pkg,
		"subscriberId": f.subscriber, "paymentAgreementId": ehf})
	if r := tn.Do("POST", "/order/"+orderID+"/complete", nil); r.Status != http.StatusOK {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	invEHF := f.invoices("subscriberId=" + f.subscriber)[0]
	ctx := context.Background()
	ok := &peppol.Deliverer{Store: e.Store, Log: quiet, Sender: &peppol.AccessPoint{URL: n.ap.URL, Token: "ap-secret", Client: loopbackAP}}
	if err := ok.Deliver(ctx, tn.ID, peppol.PeppolInvoice, invEHF.ID); err != nil {
		t.Fatal(err)
	}
	poller := &peppol.Deliverer{Store: e.Store, Log: quiet, Sender: &peppol.AccessPoint{URL: n.ap.URL, Token: "ap-secret", Client: loopbackAP},
		Now: func() time.Time { return time.Now().Add(time.Hour) }}
	if _, err := poller.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	cn := create(t, tn, "/invoice/"+invEHF.ID+"/credit", map[string]any{"reason": "Feil adresse"})
	refused := &peppol.Deliverer{Store: e.Store, Log: quiet, Sender: &peppol.AccessPoint{URL: n.ap.URL, Token: "wrong", Client: loopbackAP}}
	if err := refused.Deliver(ctx, tn.ID, peppol.PeppolCreditNote, cn); err != nil {
		t.Fatal(err)
	}
	if r := tn.Do("DELETE", "/paymentagreement/"+ehf, nil); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE agreement: %d %s", r.Status, r.Body)
	}

	// Invoice subscriptions: a failed then a full payment, one left unpaid
	// (reminded), a price change notice, a cancellation.
	f.subscriber = create(t, tn, "/subscriber", map[string]any{"name": "Ola Betaler", "country": "NO"})
	paidSub, unpaidSub := f.order(nil), f.order(nil)
	paid := f.invoices("subscriptionId=" + paidSub)[0]
	for i, status := range []string{"Failed", "Succeeded"} {
		f.pay(map[string]any{"invoiceId": paid.ID, "amount": json.Number(paid.Gross.String()), "status": status,
			"providerReference": fmt.Sprintf("grid-%d", i)}, http.StatusCreated)
	}
	sd := tn.Seed(t)
	plan := sd.Plan(seed.Plan{Name: "Monthly new", Unit: "Month", MinimumDueDays: seed.Days(14), PaymentTermsDays: seed.Days(10)})
	product := sd.Product(seed.Product{Name: "Digital+", Category: "digital", VATRate: "0"})
	dearer := sd.Package(seed.Package{Name: "Digital 2028", Price: "249.00", Products: []string{product}, Plans: []string{plan}})
	create(t, tn, "/package/"+f.pkg+"/pricechange", map[string]any{"targetTemplatePackageId": dearer,
		"effectiveFrom": osloDay(2027, 2, 20).UTC().Format(time.RFC3339), "noticeDays": 30})
	f.advance(osloDay(2027, 1, 27))
	if len(f.reminders(f.invoices("subscriptionId=" + unpaidSub)[0].ID)) == 0 {
		t.Fatal("no reminder")
	}
	if r := tn.Do("POST", "/subscription/"+paidSub+"/cancel", map[string]any{"mode": "Immediately", "reason": "test"}); r.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	// A cancellation at the period's end taken back (an hour into the
	// period: at its very start EndOfPeriod ends it at once).
	f.advance(osloDay(2027, 1, 27).Add(time.Hour))
	undone := f.order(nil)
	if r := tn.Do("POST", "/subscription/"+undone+"/cancel", map[string]any{"mode": "EndOfPeriod"}); r.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	if r := tn.Do("POST", "/subscription/"+undone+"/cancel/undo", nil); r.Status != http.StatusOK {
		t.Fatalf("undo: %d %s", r.Status, r.Body)
	}

	// A cancellation during a binding waits for its end (scheduled).
	boundPkg := create(t, tn, "/package", map[string]any{"Name": "Bound", "Currency": "NOK", "Price": 100, "BillingPlans": []string{plan},
		"products": []map[string]any{{"productId": product}}, "contract": map[string]any{"bindingPeriods": 12, "terms": "bound"}})
	boundOrder := create(t, tn, "/order", map[string]any{"organizationId": f.org, "templatePackageId": boundPkg, "subscriberId": f.subscriber})
	var bound struct {
		SubscriptionID string `json:"subscriptionId"`
	}
	if r := tn.Do("POST", "/order/"+boundOrder+"/complete", nil); r.Status != http.StatusOK {
		t.Fatalf("complete the bound order: %d %s", r.Status, r.Body)
	} else {
		r.JSON(t, &bound)
	}
	if r := tn.Do("POST", "/subscription/"+bound.SubscriptionID+"/cancel", map[string]any{"mode": "EndOfPeriod"}); r.Status != http.StatusOK {
		t.Fatalf("cancel the bound subscription: %d %s", r.Status, r.Body)
	}

	// A deletion request, asked and answered.
	var del string
	if r := tn.Do("POST", "/subscriber/"+f.subscriber+"/deletionrequest", nil); r.Status != http.StatusCreated {
		t.Fatalf("deletion request: %d %s", r.Status, r.Body)
	} else {
		del = r.ID(t)
	}
	if r := tn.Do("POST", "/deletionrequest/"+del+"/resolve", map[string]any{"status": "Completed"}); r.Status != http.StatusOK {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}

	// A vacation stop on a print subscription: made, moved, deleted.
	paper := sd.Product(seed.Product{Name: "Papir", Category: "print", VATRate: "0"})
	if r := tn.Do("PUT", "/product/"+paper+"/deliveryschedule", map[string]any{"weekdays": []string{"Tue", "Thu", "Sat"}}); r.Status != http.StatusNoContent {
		t.Fatalf("schedule: %d %s", r.Status, r.Body)
	}
	paperPkg := sd.Package(seed.Package{Name: "Papir", Price: "399.00", Products: []string{paper}, Plans: []string{plan}})
	paperOrder := create(t, tn, "/order", map[string]any{"organizationId": f.org, "templatePackageId": paperPkg, "subscriberId": f.subscriber})
	var paperSub struct {
		SubscriptionID string `json:"subscriptionId"`
	}
	if r := tn.Do("POST", "/order/"+paperOrder+"/complete", nil); r.Status != http.StatusOK {
		t.Fatalf("complete the print order: %d %s", r.Status, r.Body)
	} else {
		r.JSON(t, &paperSub)
	}
	stops := "/subscription/" + paperSub.SubscriptionID + "/deliverystop"
	stop := create(t, tn, stops, map[string]any{"firstDate": "2027-02-02", "lastDate": "2027-02-06"})
	if r := tn.Do("PUT", stops+"/"+stop, map[string]any{"firstDate": "2027-02-04", "lastDate": "2027-02-06"}); r.Status != http.StatusNoContent {
		t.Fatalf("change the stop: %d %s", r.Status, r.Body)
	}
	if r := tn.Do("DELETE", stops+"/"+stop, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete the stop: %d %s", r.Status, r.Body)
	}
	// A temporary delivery address on it (DeliveryAddressChanged, action Created).
	if r := tn.Do("PUT", "/deliverypostalcode/NO/3580", map[string]any{"carrier": "Hallingdal Bud", "route": "R7", "deliverable": true}); r.Status != http.StatusNoContent {
		t.Fatalf("postal code: %d %s", r.Status, r.Body)
	}
	create(t, tn, "/subscription/"+paperSub.SubscriptionID+"/deliveryaddress", map[string]any{"kind": "Temporary", "firstDate": "2027-02-09",
		"lastDate": "2027-02-13", "name": "Kari Nordmann", "line1": "Hyttevegen 3", "postalCode": "3580", "city": "Geilo", "country": "NO"})
	// The day's distribution list published to the carriers.
	if r := tn.Do("POST", "/distribution/2027-02-04/publish", nil); r.Status != http.StatusOK {
		t.Fatalf("publish the distribution list: %d %s", r.Status, r.Body)
	}

	// Authorization: a subscriber user linked to the subscriber (Granted),
	// then unlinked (Revoked), through the API.
	uid := create(t, tn, "/authorizations/user", map[string]any{"email": "grid-reader@example.no"})
	for _, link := range []map[string]any{{"subscriberId": f.subscriber}, {"subscriberId": nil}} {
		if r := tn.Do("PUT", "/authorizations/user/"+uid+"/subscriber", link); r.Status/100 != 2 {
			t.Fatalf("link %v: %d %s", link, r.Status, r.Body)
		}
	}

	// Every kind arrives and reads by the documented names.
	want := slices.Clone(webhook.Kinds)
	slices.Sort(want)
	deadline := time.Now().Add(15 * time.Second)
	for !slices.Equal(all.kinds(), want) {
		if time.Now().After(deadline) {
			var missing []string
			for _, k := range want {
				if !slices.Contains(all.kinds(), k) {
					missing = append(missing, k)
				}
			}
			all.check(t)
			t.Fatalf("never received %v", missing)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, g := range []*gridReceiver{all, byGet, both, later} {
		g.check(t)
	}
	eventually(t, "SubscriberCreated at the receivers that validated by GET", func() bool {
		return len(byGet.events("SubscriberCreated")) > 0 && len(both.events("SubscriberCreated")) > 0 && len(later.events("SubscriberCreated")) > 0
	})

	// What INFO-Subscription's receivers read equals the resources.
	type invoiceData struct {
		DueDate  string      `json:"dueDate"`
		Number   int64       `json:"number"`
		Amount   json.Number `json:"amount"`
		Currency string      `json:"currency"`
	}
	for _, kind := range []string{"InvoiceIssued", "InvoicePaid"} {
		inv := paid
		if kind == "InvoiceIssued" {
			inv = invEHF
		}
		got := dataOf[invoiceData](t, all, kind, "/invoice/"+inv.ID)
		if got.DueDate != inv.DueDate || got.Number != inv.InvoiceNumber || got.Amount.String() != inv.Gross.String() || got.Currency != inv.Currency {
			t.Errorf("%s reads %+v; invoice %s has due %s, number %d, %s %s", kind, got, inv.ID, inv.DueDate, inv.InvoiceNumber, inv.Gross, inv.Currency)
		}
	}
	if got := dataOf[struct {
		FirstPeriodCreated bool `json:"firstPeriodCreated"`
	}](t, all, "OrderProcessed", "/order/"+orderID); !got.FirstPeriodCreated {
		t.Error("OrderProcessed: firstPeriodCreated is false")
	}
	var contacts []string
	for _, ev := range all.events("SubscriberContactCreated") {
		var d store.ContactEventData
		_ = json.Unmarshal(ev.Data, &d)
		contacts = append(contacts, fmt.Sprintf("%s/%v/%s", d.Role, d.IsPrimary, d.Source))
	}
	slices.Sort(contacts)
	// Kari, Ola and Kortvarig's primary contacts; Kari's invoice contact.
	if strings.Join(contacts, " ") != "Invoice/false/Api Primary/true/Api Primary/true/Api Primary/true/Api" {
		t.Errorf("contacts created: %v", contacts)
	}
	if u, d := all.events("SubscriberContactUpdated"), all.events("SubscriberContactDeleted"); len(u) != 1 || len(d) != 2 {
		t.Errorf("%d contact updates (want 1), %d deletions (want 2: Kari's invoice contact, Kortvarig's primary)", len(u), len(d))
	}
	if got := dataOf[store.SubscriberEventData](t, all, "SubscriberDeleted", "/subscriber/"+gone); got.ExternalID == nil || *got.ExternalID != "crm-1" {
		t.Errorf("SubscriberDeleted: %+v", got)
	}

	// The CloudEvents format keeps our own handshake, without Event Grid's
	// headers.
	var seen struct {
		sync.Mutex
		kind, aeg string
	}
	ce := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev webhook.CloudEvent
		_ = json.NewDecoder(r.Body).Decode(&ev)
		seen.Lock()
		seen.kind, seen.aeg = ev.Type, r.Header.Get("aeg-event-type")
		seen.Unlock()
		var v webhook.ValidationData
		_ = json.Unmarshal(ev.Data, &v)
		_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": v.ValidationCode})
	}))
	defer ce.Close()
	r = tn.Do("POST", "/webhook", map[string]any{"url": ce.URL, "eventTypes": []string{"InvoiceIssued"}, "format": "CloudEvents"})
	seen.Lock()
	defer seen.Unlock()
	if r.Header.Get("Webhook-Status") != "Validated" || seen.kind != webhook.ValidationEventType || seen.aeg != "" {
		t.Errorf("CloudEvents handshake: status %s, type %q, aeg-event-type %q", r.Header.Get("Webhook-Status"), seen.kind, seen.aeg)
	}
}
