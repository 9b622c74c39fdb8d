package api_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/peppol/peppoltest"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

const peppolZone = "sml.kadens.test"

// peppolNetwork is a local Peppol network: DNS (SML), an SMP and an
// access point, with a server configured to use them.
type peppolNetwork struct {
	dns *peppoltest.DNS
	smp *peppoltest.SMP
	ap  *peppoltest.AccessPoint
}

// loopbackAP is the client of the tests' own Deliverers: their access
// point listens on loopback, which the egress policy refuses by default.
var loopbackAP = egress.Policy{Private: true}.Client(30 * time.Second)

// eachPeppol runs fn per engine with a server wired to a fresh local
// Peppol network.
func eachPeppol(t *testing.T, fn func(t *testing.T, e *apitest.Env, n *peppolNetwork)) {
	eachPeppolNetwork(t, true, fn)
}

// eachPeppolDriven is eachPeppol with a server that sends nothing itself:
// the delivery tests drive their own Deliverers (clocks, crashes).
func eachPeppolDriven(t *testing.T, fn func(t *testing.T, e *apitest.Env, n *peppolNetwork)) {
	eachPeppolNetwork(t, false, fn)
}

func eachPeppolNetwork(t *testing.T, serverSends bool, fn func(t *testing.T, e *apitest.Env, n *peppolNetwork)) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			n := &peppolNetwork{dns: peppoltest.StartDNS(t), smp: peppoltest.StartSMP(t), ap: peppoltest.StartAccessPoint(t, "ap-secret")}
			vars := map[string]string{
				"KADENS_PEPPOL_SML_ZONE":   peppolZone,
				"KADENS_PEPPOL_DNS_SERVER": n.dns.Addr,
				// The SMP, the access point and webhook receivers listen
				// on loopback.
				"KADENS_EGRESS_ALLOW_PRIVATE": "true",
			}
			if serverSends {
				vars["KADENS_PEPPOL_AP_URL"] = n.ap.URL
				vars["KADENS_PEPPOL_AP_TOKEN"] = "ap-secret"
				vars["KADENS_PEPPOL_DELIVERY_INTERVAL"] = "1h" // retries are driven by the tests
			}
			fn(t, apitest.Start(t, eng, vars), n)
		})
	}
}

func (n *peppolNetwork) register(p peppol.ParticipantID, docTypes ...string) {
	n.dns.Register(p, peppolZone, n.smp.Base())
	n.smp.Publish(p, docTypes...)
}

type lookupAnswer struct {
	Registered, FoundInNetwork, AcceptsInvoice, AcceptsCreditNote bool
	ParticipantID, RecipientIdentifier, Source                    string
	SMPURL                                                        *string `json:"smpUrl"`
}

func lookup(t *testing.T, tn apitest.Tenant, network, id string) lookupAnswer {
	t.Helper()
	r := tn.Do("POST", "/invoice/documentnetworklookup", map[string]any{"documentNetwork": network, "recipientIdentifier": id})
	if r.Status != http.StatusOK {
		t.Fatalf("lookup %s %s: %d %s", network, id, r.Status, r.Body)
	}
	var a lookupAnswer
	r.JSON(t, &a)
	return a
}

func TestDocumentNetworkLookup(t *testing.T) {
	eachPeppol(t, func(t *testing.T, e *apitest.Env, n *peppolNetwork) {
		n.register(peppol.ParticipantID{Scheme: "0192", Value: "987654325"}, peppol.DocTypeInvoice, peppol.DocTypeCreditNote)
		n.register(peppol.ParticipantID{Scheme: "0184", Value: "13585628"}, "urn:example:other::1.0")

		a := lookup(t, e.Tenant, "0192", "987 654 325")
		if !a.Registered || !a.AcceptsCreditNote || a.ParticipantID != "iso6523-actorid-upis::0192:987654325" ||
			a.RecipientIdentifier != "987654325" || a.Source != "SML" || a.SMPURL == nil || *a.SMPURL != n.smp.Base() {
			t.Errorf("registered Norwegian recipient: %+v", a)
		}
		// A Danish CVR is looked up under Peppol's CVR scheme 0184, not 0096.
		a = lookup(t, e.Tenant, "0096", "13585628")
		if a.Registered || !a.FoundInNetwork || a.ParticipantID != "iso6523-actorid-upis::0184:13585628" {
			t.Errorf("Danish recipient without the invoice document type: %+v", a)
		}
		if a = lookup(t, e.Tenant, "0192", "923609016"); a.Registered || a.FoundInNetwork || a.SMPURL != nil {
			t.Errorf("unregistered recipient: %+v", a)
		}

		for _, tc := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"documentNetwork": "0192", "recipientIdentifier": "987654324"}, "recipientIdentifier"},
			{map[string]any{"documentNetwork": "0096", "recipientIdentifier": "1234"}, "recipientIdentifier"},
			{map[string]any{"documentNetwork": "0107", "recipientIdentifier": "13585628"}, "recipientIdentifier"},
			{map[string]any{"documentNetwork": "0184", "recipientIdentifier": "13585628"}, "documentNetwork"},
			{map[string]any{"recipientIdentifier": "13585628"}, "documentNetwork"},
			{map[string]any{"documentNetwork": "0192"}, "recipientIdentifier"},
		} {
			r := e.Tenant.Do("POST", "/invoice/documentnetworklookup", tc.body)
			if got := fields(t, r); len(got) != 1 || got[0] != tc.field {
				t.Errorf("%v: 400 on %v, want %s", tc.body, got, tc.field)
			}
		}

		// Failures of the network are failures, not "not registered".
		n.register(peppol.ParticipantID{Scheme: "0192", Value: "123456785"}, peppol.DocTypeInvoice)
		n.smp.SetFail(true)
		if r := e.Tenant.Do("POST", "/invoice/documentnetworklookup", map[string]any{"documentNetwork": "0192", "recipientIdentifier": "123456785"}); r.Status != http.StatusBadGateway ||
			!strings.Contains(string(r.Body), "unknown") {
			t.Errorf("SMP failure: %d %s", r.Status, r.Body)
		}
		n.smp.SetFail(false)
		n.dns.SetFail(true)
		if r := e.Tenant.Do("POST", "/invoice/documentnetworklookup", map[string]any{"documentNetwork": "0192", "recipientIdentifier": "123456785"}); r.Status != http.StatusServiceUnavailable ||
			r.Header.Get("Retry-After") == "" {
			t.Errorf("DNS failure: %d %s", r.Status, r.Body)
		}
		// Cached answers are still served while the DNS fails.
		if a := lookup(t, e.Tenant, "0192", "987654325"); !a.Registered {
			t.Errorf("cached answer: %+v", a)
		}
	})
}

// TestPeppolInvoiceNetworkFlow is the contract's flow step by step: look
// the recipient up, create its EHF agreement, assign it to the
// subscription; the next invoices and credit notes are written as Peppol
// BIS Billing 3.0 and go to the access point once each.
func TestPeppolInvoiceNetworkFlow(t *testing.T) {
	eachPeppol(t, func(t *testing.T, e *apitest.Env, n *peppolNetwork) {
		buyer := peppol.ParticipantID{Scheme: "0192", Value: "987654325"}
		n.register(buyer, peppol.DocTypeInvoice, peppol.DocTypeCreditNote)
		f := newBillingFixture(t, e, e.Tenant)
		f.org = create(t, f.tn, "/organization", map[string]any{"name": "Nordavis AS", "organizationNumber": "923609016",
			"country": "NO", "currency": "NOK", "timeZone": "Europe/Oslo", "businessRegister": true,
			"address":     map[string]any{"line1": "Akersgata 55", "postalCode": "0180", "city": "Oslo", "country": "NO"},
			"bankAccount": map[string]any{"accountNumber": "8601.11.17947"}})
		f.advance(osloDay(2027, 1, 10).Add(12 * time.Hour))
		start := osloDay(2027, 2, 1)
		sub := f.order(&start)
		paper := f.invoices("subscriptionId=" + sub)[0]

		// Integrators can follow deliveries by webhook.
		rcv := newHookReceiver(t, true)
		if r := f.tn.Do("POST", "/webhook", map[string]any{"URL": rcv.srv.URL, "eventTypes": []string{"PeppolDeliverySent"}}); r.Status != http.StatusCreated {
			t.Fatalf("webhook for PeppolDeliverySent: %d %s", r.Status, r.Body)
		}

		// 1. Look up; 2. agreement; changePaymentAgreement.
		if a := lookup(t, f.tn, "0192", buyer.Value); !a.Registered {
			t.Fatalf("lookup: %+v", a)
		}
		ehf := create(t, f.tn, "/paymentagreement", ehfBody(f.subscriber, buyer.Value))
		changeAgreement(t, f.tn, sub, ehf)

		// The invoice issued before the change is not a network document.
		if r := f.tn.Do("GET", "/invoice/"+paper.ID+"/ubl", nil); r.Status != http.StatusConflict {
			t.Fatalf("UBL of the paper invoice: %d %s", r.Status, r.Body)
		}
		if err := e.Server.Peppol.Deliver(context.Background(), f.tn.ID, peppol.PeppolInvoice, paper.ID); err != nil {
			t.Fatal(err)
		}
		if r := f.tn.Do("GET", "/invoice/"+paper.ID+"/peppoldelivery", nil); r.Status != http.StatusNotFound {
			t.Fatalf("delivery of the paper invoice: %d %s", r.Status, r.Body)
		}

		// The March renewal is issued on the EHF agreement.
		f.advance(osloDay(2027, 2, 20))
		march := getSubscription(t, f.tn, sub).NextID
		invs := f.invoices("subscriptionId=" + *march)
		if len(invs) != 1 || *invs[0].PaymentAgreementID != ehf {
			t.Fatalf("March invoices %+v", invs)
		}
		inv := invs[0]
		r := f.tn.Do("GET", "/invoice/"+inv.ID+"/ubl", nil)
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/xml" {
			t.Fatalf("UBL: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		for _, want := range []string{`<cbc:EndpointID schemeID="0192">987654325</cbc:EndpointID>`,
			`<cbc:EndpointID schemeID="0192">923609016</cbc:EndpointID>`, "<cbc:PaymentID>" + inv.KID + "</cbc:PaymentID>",
			"<cbc:ID>86011117947</cbc:ID>", "NO923609016MVA", "Foretaksregisteret"} {
			if !strings.Contains(string(r.Body), want) {
				t.Errorf("UBL lacks %s:\n%s", want, r.Body)
			}
		}
		peppoltest.ValidateUBL(t, "march.xml", r.Body)

		// The hook: the outbox consumer delivers after InvoiceIssued; the
		// hook run again (a redelivered event) sends nothing more.
		ctx := context.Background()
		eventually(t, "the March invoice at the access point", func() bool { return len(n.ap.Docs()) > 0 })
		if err := e.Server.Peppol.Deliver(ctx, f.tn.ID, peppol.PeppolInvoice, inv.ID); err != nil {
			t.Fatal(err)
		}
		docs := n.ap.Docs()
		if len(docs) != 1 || docs[0].Receiver != buyer.String() || !strings.Contains(docs[0].DocumentType, "Invoice-2::Invoice") ||
			string(docs[0].Body) != string(r.Body) {
			t.Fatalf("access point received %+v", docs)
		}
		var d peppol.PeppolDelivery
		f.tn.Do("GET", "/invoice/"+inv.ID+"/peppoldelivery", nil).JSON(t, &d)
		if d.Status != peppol.PeppolSent || d.MessageID != docs[0].MessageID || d.Attempts != 1 || d.Recipient != buyer.String() ||
			d.Adapter != "AccessPoint" || d.ID != docs[0].Key {
			t.Fatalf("delivery %+v", d)
		}

		eventually(t, "PeppolDeliverySent by webhook", func() bool {
			for _, ev := range rcv.received() {
				if ev.EventType == "PeppolDeliverySent" && strings.Contains(string(ev.Data), inv.ID) {
					return true
				}
			}
			return false
		})

		// Credit the invoice: the credit note goes the same way.
		r = f.tn.Do("POST", "/invoice/"+inv.ID+"/credit", map[string]any{"reason": "Wrong address"})
		cn := r.ID(t)
		r = f.tn.Do("GET", "/creditnote/"+cn+"/ubl", nil)
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>") {
			t.Fatalf("credit note UBL: %d %s", r.Status, r.Body)
		}
		peppoltest.ValidateUBL(t, "creditnote.xml", r.Body)
		eventually(t, "the credit note at the access point", func() bool { return len(n.ap.Docs()) > 1 })
		if err := e.Server.Peppol.Deliver(ctx, f.tn.ID, peppol.PeppolCreditNote, cn); err != nil {
			t.Fatal(err)
		}
		if docs = n.ap.Docs(); len(docs) != 2 || !strings.Contains(docs[1].DocumentType, "CreditNote-2::CreditNote") {
			t.Fatalf("access point received %d documents", len(docs))
		}

		// Status polling: the access point reports Delivered.
		poller := &peppol.Deliverer{Store: e.Store, Sender: &peppol.AccessPoint{URL: n.ap.URL, Token: "ap-secret", Client: loopbackAP},
			Now: func() time.Time { return time.Now().Add(time.Hour) }}
		if _, err := poller.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		f.tn.Do("GET", "/creditnote/"+cn+"/peppoldelivery", nil).JSON(t, &d)
		if d.Status != peppol.PeppolDelivered {
			t.Fatalf("credit note delivery after polling: %+v", d)
		}

		var evs []store.Event
		f.tn.Do("GET", "/events?subject=/invoice/"+inv.ID, nil).JSON(t, &evs)
		var kinds []string
		for _, ev := range evs {
			if strings.HasPrefix(ev.EventType, "PeppolDelivery") {
				kinds = append(kinds, ev.EventType)
			}
		}
		if strings.Join(kinds, ",") != "PeppolDeliveryPending,PeppolDeliverySent,PeppolDeliveryDelivered" {
			t.Errorf("invoice delivery events %v", kinds)
		}

		// Another tenant sees none of it.
		other := e.NewTenant("tenant-b", true)
		for _, path := range []string{"/invoice/" + inv.ID + "/ubl", "/invoice/" + inv.ID + "/peppoldelivery",
			"/creditnote/" + cn + "/ubl", "/creditnote/" + cn + "/peppoldelivery"} {
			if r := other.Do("GET", path, nil); r.Status != http.StatusNotFound {
				t.Errorf("other tenant GET %s: %d", path, r.Status)
			}
		}
		if err := e.Server.Peppol.Deliver(ctx, other.ID, peppol.PeppolInvoice, inv.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("other tenant's Deliver: %v, want not found", err)
		}
	})
}
