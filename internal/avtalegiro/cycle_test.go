package avtalegiro_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/kadens/kadens/internal/ledger"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/avtalegiro/fakebank"
	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

const mandateKID = "000123400001012"

func create(t *testing.T, tn apitest.Tenant, path string, body any) string {
	t.Helper()
	r := tn.Do("POST", path, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	return r.ID(t)
}

// loopbackBank lets the servers reach the fake bank, which listens on
// loopback: the egress policy refuses it otherwise (TestBankAddressEgress).
var loopbackBank = map[string]string{"KADENS_EGRESS_ALLOW_PRIVATE": "true"}

// cycle is a tenant billing one monthly subscription of 299.00 NOK, with
// an AvtaleGiro account at a fake bank.
type cycle struct {
	t          *testing.T
	e          *apitest.Env
	tn         apitest.Tenant
	ctx        context.Context
	bank       *fakebank.Bank
	client     *avtalegiro.Bank
	account    string
	subscriber string
	org, pkg   string
	now        time.Time
}

func newCycle(t *testing.T, e *apitest.Env) *cycle {
	c := &cycle{t: t, e: e, tn: e.Tenant, ctx: tenancy.With(context.Background(), e.Tenant.ID)}
	c.advance(time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC))
	c.bank = fakebank.New("12345678903")
	srv := httptest.NewServer(c.bank)
	t.Cleanup(srv.Close)
	c.client = avtalegiro.NewBank(egress.Policy{Private: true})
	c.client.Backoff, c.client.MaxBackoff, c.client.Timeout = time.Millisecond, 4*time.Millisecond, 5*time.Second
	c.account = create(t, c.tn, "/avtalegiro/account", map[string]any{"bankAccountNumber": "12345678903", "customerUnitId": "12345678",
		"kidAlgorithm": "MOD10", "kidLength": 15, "baseComboApiEndpointUrl": srv.URL + "/nets"})
	c.org = create(t, c.tn, "/organization", map[string]any{"name": "Nordavis AS", "organizationNumber": "923609016", "country": "NO",
		"currency": "NOK", "timeZone": "Europe/Oslo"})
	product := create(t, c.tn, "/product", map[string]any{"name": "Nordavis Digital", "category": "digital", "vatRate": 0})
	plan := create(t, c.tn, "/billingplan", map[string]any{"name": "Monthly", "intervalUnit": "Month", "minimumDueDays": 14, "paymentTermsDays": 10})
	c.pkg = create(t, c.tn, "/package", fmt.Sprintf(`{"Name": "Digital", "Currency": "NOK", "Price": 299.00,
		"products": [{"productId": %q}], "BillingPlans": [%q]}`, product, plan))
	c.subscriber = create(t, c.tn, "/subscriber", map[string]any{"name": "Kari Nordmann", "email": "kari@example.no", "country": "NO"})
	return c
}

func (c *cycle) advance(to time.Time) {
	c.t.Helper()
	if r := c.tn.Do("POST", "/testclock/advance", map[string]any{"to": to.UTC().Format(time.RFC3339)}); r.Status != http.StatusOK {
		c.t.Fatalf("advance: %d %s", r.Status, r.Body)
	}
	c.now = to
}

func (c *cycle) sync() avtalegiro.SyncResult {
	c.t.Helper()
	res, err := avtalegiro.Sync(c.ctx, c.e.Store, c.client, c.tn.ID, c.account, c.now)
	if err != nil {
		c.t.Fatalf("sync: %v", err)
	}
	return res
}

func (c *cycle) invoices() []store.Invoice {
	c.t.Helper()
	var out []store.Invoice
	r := c.tn.Do("GET", "/invoice?subscriberId="+c.subscriber+"&limit=1000", nil)
	r.JSON(c.t, &out)
	return out
}

// issueClaims is what billing's hook will do: InvoiceIssued for every invoice.
func (c *cycle) issueClaims() {
	c.t.Helper()
	for _, inv := range c.invoices() {
		if err := avtalegiro.InvoiceIssued(c.ctx, c.e.Store, c.tn.ID, inv.ID, c.now); err != nil {
			c.t.Fatal(err)
		}
	}
}

func TestFullCycle(t *testing.T) {
	apitest.EachWith(t, loopbackBank, func(t *testing.T, e *apitest.Env) {
		c := newCycle(t, e)
		st := e.Store

		// The payer's bank reports the mandate; Sync reads it.
		if err := c.bank.Mandates(ocrgiro.Mandate{Registration: ocrgiro.MandateNew, KID: mandateKID, Notice: true}); err != nil {
			t.Fatal(err)
		}
		if res := c.sync(); res.Imported != 1 || res.Exported {
			t.Fatalf("first sync: %+v", res)
		}
		var mandates []avtalegiro.AvtaleGiroMandate
		c.tn.Do("GET", "/avtalegiro/mandate?KID="+mandateKID, nil).JSON(t, &mandates)
		if len(mandates) != 1 || mandates[0].Source != "Bank" || !mandates[0].Notify {
			t.Fatalf("mandates: %+v", mandates)
		}
		mandate := mandates[0].ID

		// The order; then the subscription moves to an AvtaleGiro agreement on the mandate.
		order := create(t, c.tn, "/order", map[string]any{"organizationId": c.org, "templatePackageId": c.pkg, "subscriberId": c.subscriber,
			"requestedStart": "2027-02-01T00:00:00+01:00"})
		r := c.tn.Do("POST", "/order/"+order+"/complete", nil)
		var o struct {
			SubscriptionID string `json:"subscriptionId"`
		}
		r.JSON(t, &o)
		if err := avtalegiro.CheckReference(c.ctx, st, c.tn.ID, store.NewID()); err == nil {
			t.Fatal("an unknown mandate passed CheckReference")
		}
		if err := avtalegiro.CheckReference(c.ctx, st, c.tn.ID, mandate); err != nil {
			t.Fatal(err)
		}
		agreement, _, err := st.CreatePaymentAgreement(c.ctx, store.PaymentAgreement{SubscriberID: c.subscriber,
			ProviderType: store.ProviderAvtaleGiro, ProviderAgreementReference: mandate, PaymentMethod: "AvtaleGiro"}, c.now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.ChangePaymentAgreement(c.ctx, o.SubscriptionID, agreement.ID, c.now); err != nil {
			t.Fatal(err)
		}
		// The first invoice was issued on the Invoice agreement: paid by bank transfer.
		first := c.invoices()[0]
		if r := c.tn.Do("POST", "/payment", map[string]any{"kid": first.KID, "amount": 299.00, "currency": "NOK", "status": "Succeeded",
			"provider": "bank", "providerReference": "giro-1"}); r.Status != 201 {
			t.Fatalf("pay first: %d %s", r.Status, r.Body)
		}

		// Twelve months; the bank is down now and then.
		day := time.Date(2027, 1, 20, 9, 0, 0, 0, time.UTC)
		for month := 0; month < 12; month++ {
			c.advance(day)
			c.issueClaims()
			c.issueClaims() // twice changes nothing
			if month%4 == 1 {
				c.bank.Down(3, month%8 == 1) // refused, or answers lost after the bank stored the file
			}
			c.sync()
			if _, err := c.bank.Collect(ocrgiro.DateOf(avtalegiro.Today(c.now).AddDate(0, 0, 14))); err != nil {
				t.Fatal(err)
			}
			c.sync()
			day = day.AddDate(0, 1, 0)
		}

		invs := c.invoices()
		if len(invs) < 12 {
			t.Fatalf("%d invoices", len(invs))
		}
		var claims []avtalegiro.AvtaleGiroClaim
		c.tn.Do("GET", "/avtalegiro/claim?MandateId="+mandate+"&limit=1000", nil).JSON(t, &claims)
		paid := map[string]bool{}
		for _, cl := range claims {
			if cl.Status == avtalegiro.ClaimPaid && cl.InvoiceID != nil {
				paid[*cl.InvoiceID] = true
			}
		}
		unpaid := 0
		for _, inv := range invs {
			full, _ := st.Invoice(c.ctx, inv.ID)
			if full.Status != "Paid" {
				unpaid++
				if paid[inv.ID] {
					t.Errorf("invoice %d: claim paid, invoice %s", inv.InvoiceNumber, full.Status)
				}
			}
		}
		// Only invoices whose claims are not due yet may be open.
		if unpaid > 1 {
			t.Errorf("%d of %d invoices are not paid", unpaid, len(invs))
		}
		received, _ := c.bank.Claims()
		if len(received) != len(claims) {
			t.Errorf("the bank received %d claims; Kadens made %d (duplicates?)", len(received), len(claims))
		}
		seen := map[string]bool{}
		for _, cl := range received {
			key := fmt.Sprint(cl.Due, cl.Amount)
			if seen[key] {
				t.Errorf("claim due %v for %d received twice", cl.Due, cl.Amount)
			}
			seen[key] = true
		}
		report, err := ledger.Check(context.Background(), st, ledger.Options{TenantID: c.tn.ID})
		if err != nil || !report.Clean() {
			t.Fatalf("ledger: %+v %v", report, err)
		}

		// Every file again changes nothing.
		var before []store.Payment
		c.tn.Do("GET", "/payment?limit=1000", nil).JSON(t, &before)
		if res := c.sync(); res.Imported != 0 || res.Settled != 0 || res.Submitted != 0 {
			t.Fatalf("repeat sync: %+v", res)
		}
		var after []store.Payment
		c.tn.Do("GET", "/payment?limit=1000", nil).JSON(t, &after)
		if len(after) != len(before) {
			t.Fatalf("payments %d → %d", len(before), len(after))
		}

		// The payer deletes the mandate: back to Invoice, PaymentAgreementDeleted.
		c.issueClaims()
		if err := c.bank.Mandates(ocrgiro.Mandate{Registration: ocrgiro.MandateDeleted, KID: mandateKID}); err != nil {
			t.Fatal(err)
		}
		c.sync()
		var a store.PaymentAgreement
		c.tn.Do("GET", "/paymentagreement/"+agreement.ID, nil).JSON(t, &a)
		if a.DeletedAt == nil {
			t.Fatal("the agreement survived its mandate")
		}
		var subs []store.Subscription
		c.tn.Do("GET", "/subscription?subscriberId="+c.subscriber+"&limit=1000", nil).JSON(t, &subs)
		moved := 0
		for _, sub := range subs {
			if sub.PeriodEnd.After(c.now) {
				if sub.PaymentAgreementID == nil || *sub.PaymentAgreementID == agreement.ID {
					t.Fatalf("period %s still on the AvtaleGiro agreement", sub.ID)
				}
				moved++
			}
		}
		if moved == 0 {
			t.Fatal("no period runs on")
		}
		var events []store.Event
		c.tn.Do("GET", "/events?eventType=PaymentAgreementDeleted", nil).JSON(t, &events)
		if len(events) != 1 {
			t.Fatalf("%d PaymentAgreementDeleted events", len(events))
		}
	})
}

// The bank down longer than the retries: Sync fails clearly, and the next
// Sync sends the same file again under the same transmission number.
func TestBankDownThenUp(t *testing.T) {
	apitest.EachWith(t, loopbackBank, func(t *testing.T, e *apitest.Env) {
		c := newCycle(t, e)
		mandate := create(t, c.tn, "/avtalegiro/mandate", map[string]any{"accountId": c.account, "kid": mandateKID})
		create(t, c.tn, "/avtalegiro/claim", map[string]any{"mandateId": mandate, "amount": 100, "dueDate": "2027-02-01"})
		c.client.Attempts = 3
		c.bank.Down(3, true) // stored, but no answer reaches Kadens
		_, err := avtalegiro.Sync(c.ctx, e.Store, c.client, c.tn.ID, c.account, c.now)
		var be *avtalegiro.BankError
		if !errors.As(err, &be) || be.Op != "submit" || be.Attempts != 3 || be.Status != 503 {
			t.Fatalf("err = %v", err)
		}
		res := c.sync()
		if res.Submitted != 1 || res.Exported {
			t.Fatalf("second sync: %+v", res)
		}
		if c.bank.Files() != 1 {
			t.Fatalf("the bank has %d files", c.bank.Files())
		}
		received, _ := c.bank.Claims()
		if len(received) != 1 {
			t.Fatalf("the bank has %d claims", len(received))
		}
	})
}

// Crediting an invoice cancels its claim once; a paid claim stays.
func TestInvoiceCredited(t *testing.T) {
	apitest.EachWith(t, loopbackBank, func(t *testing.T, e *apitest.Env) {
		c := newCycle(t, e)
		st := e.Store
		mandate := create(t, c.tn, "/avtalegiro/mandate", map[string]any{"accountId": c.account, "kid": mandateKID, "subscriberId": c.subscriber})
		order := create(t, c.tn, "/order", map[string]any{"organizationId": c.org, "templatePackageId": c.pkg, "subscriberId": c.subscriber,
			"requestedStart": "2027-02-01T00:00:00+01:00"})
		var o struct {
			SubscriptionID string `json:"subscriptionId"`
		}
		c.tn.Do("POST", "/order/"+order+"/complete", nil).JSON(t, &o)
		agreement, _, err := st.CreatePaymentAgreement(c.ctx, store.PaymentAgreement{SubscriberID: c.subscriber,
			ProviderType: store.ProviderAvtaleGiro, ProviderAgreementReference: mandate, PaymentMethod: "AvtaleGiro"}, c.now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.ChangePaymentAgreement(c.ctx, o.SubscriptionID, agreement.ID, c.now); err != nil {
			t.Fatal(err)
		}
		c.advance(time.Date(2027, 2, 16, 9, 0, 0, 0, time.UTC))
		c.issueClaims()
		var claims []avtalegiro.AvtaleGiroClaim
		c.tn.Do("GET", "/avtalegiro/claim?MandateId="+mandate, nil).JSON(t, &claims)
		if len(claims) != 1 || claims[0].InvoiceID == nil {
			t.Fatalf("claims: %+v", claims)
		}
		inv := *claims[0].InvoiceID
		c.sync()
		if r := c.tn.Do("POST", "/invoice/"+inv+"/credit", map[string]any{"reason": "goodwill"}); r.Status != 201 {
			t.Fatalf("credit: %d %s", r.Status, r.Body)
		}
		for range 2 {
			if err := avtalegiro.InvoiceCredited(c.ctx, st, c.tn.ID, inv, c.now); err != nil {
				t.Fatal(err)
			}
		}
		c.sync()
		c.sync()
		_, cancels := c.bank.Claims()
		if len(cancels) != 1 || cancels[0].KID != mandateKID {
			t.Fatalf("cancellations at the bank: %+v", cancels)
		}
		var cl avtalegiro.AvtaleGiroClaim
		c.tn.Do("GET", "/avtalegiro/claim/"+claims[0].ID, nil).JSON(t, &cl)
		if cl.Status != avtalegiro.ClaimCancelled || cl.CancellationFileID == nil {
			t.Fatalf("claim: %+v", cl)
		}
		// No new claim for a credited invoice.
		c.issueClaims()
		c.tn.Do("GET", "/avtalegiro/claim?MandateId="+mandate, nil).JSON(t, &claims)
		for _, x := range claims {
			if x.Status == avtalegiro.ClaimScheduled {
				t.Fatalf("a credited invoice got a new claim: %+v", x)
			}
		}
	})
}

// An OCR giro payment without a claim settles the invoice whose own KID it
// carries; one matching nothing is kept as a problem. The upload goes
// through POST /avtalegiro/import.
func TestOCRPaymentWithoutClaim(t *testing.T) {
	apitest.EachWith(t, loopbackBank, func(t *testing.T, e *apitest.Env) {
		c := newCycle(t, e)
		order := create(t, c.tn, "/order", map[string]any{"organizationId": c.org, "templatePackageId": c.pkg, "subscriberId": c.subscriber})
		c.tn.Do("POST", "/order/"+order+"/complete", nil)
		inv := c.invoices()[0]
		d := ocrgiro.DateOf(c.now)
		pay := func(n int, kid string) ocrgiro.Payment {
			return ocrgiro.Payment{Type: 10, Number: n, NetsDate: d, Centre: "13", DayCode: "04", PartialSettlement: "1", Serial: "00001",
				Amount: 29900, KID: kid, FormNumber: "0", ArchiveRef: "000000000", BankDate: d, PayerAccount: "98765432103"}
		}
		var buf bytes.Buffer
		if err := ocrgiro.Write(&buf, &ocrgiro.Transmission{Start: ocrgiro.Start{Sender: ocrgiro.NetsID, Number: "0000077", Recipient: "12345678"},
			Assignments: []ocrgiro.Assignment{{Start: ocrgiro.AssignmentStart{Service: 9, Type: 0, AgreementID: "001234567", Number: "0000077",
				Account: "12345678903"}, Payments: []ocrgiro.Payment{pay(1, inv.KID), pay(2, "000999900000012")},
				End: ocrgiro.AssignmentEnd{Date1: d, Date2: d, Date3: d}}}, End: ocrgiro.End{Date: d}}); err != nil {
			t.Fatal(err)
		}
		var res struct {
			Payments, Settled, Problems int
		}
		r := c.tn.Do("POST", "/avtalegiro/import", map[string]any{"content": base64.StdEncoding.EncodeToString(buf.Bytes())})
		if r.Status != 200 {
			t.Fatalf("import: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &res)
		if res.Payments != 2 || res.Settled != 1 || res.Problems != 1 {
			t.Fatalf("import: %s", r.Body)
		}
		full, _ := e.Store.Invoice(c.ctx, inv.ID)
		if full.Status != "Paid" {
			t.Fatalf("invoice %s", full.Status)
		}
		r = c.tn.Do("POST", "/avtalegiro/import", map[string]any{"content": base64.StdEncoding.EncodeToString(buf.Bytes())})
		r.JSON(t, &res)
		if res.Settled != 0 || res.Problems != 0 {
			t.Fatalf("again: %s", r.Body)
		}
	})
}
