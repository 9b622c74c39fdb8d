package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/kadens/kadens/internal/ledger"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestExternalProviderFlow runs the example receiver against a real Kadens
// server for six months of a test clock: External agreements, orders on
// them, a validated webhook, and every InvoiceIssued delivered, fetched
// and paid (or failed, for the configured share) through POST /payment.
func TestExternalProviderFlow(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			e := apitest.Start(t, eng, map[string]string{"KADENS_EGRESS_ALLOW_PRIVATE": "true",
				"KADENS_WEBHOOK_RETRY_SCHEDULE": "100ms*5"})
			tn := e.Tenant
			clientID, clientSecret, err := idp.NewClientCredentials(context.Background(), e.Store, tn.ID, "payment bridge", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
			ctx, cancel := context.WithCancel(context.Background())
			ready := make(chan string, 1)
			done := make(chan error, 1)
			var logs bytes.Buffer
			go func() {
				done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-api", e.URL, "-client-id", clientID,
					"-client-secret", clientSecret, "-tenant", tn.ID, "-secret", secret, "-fail-share", "0.3"}, &logs, ready)
			}()
			addr := <-ready
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("receiver: %v", err)
				}
			})
			must := func(r *apitest.Response, want int) *apitest.Response {
				t.Helper()
				if r.Status != want {
					t.Fatalf("%d %s, want %d", r.Status, r.Body, want)
				}
				return r
			}
			id := func(r *apitest.Response) string { t.Helper(); return must(r, http.StatusCreated).ID(t) }

			r := must(tn.Do("POST", "/webhook", map[string]any{"url": "http://" + addr + "/", "secret": secret,
				"eventTypes": []string{"InvoiceIssued", "PaymentAgreementCreated", "PaymentAgreementDeleted"}}), http.StatusCreated)
			if got := r.Header.Get("Webhook-Status"); got != "Validated" {
				t.Fatalf("the receiver did not pass the handshake: %q (%s)", got, logs.String())
			}

			start := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
			advance := func(to time.Time) {
				t.Helper()
				must(tn.Do("POST", "/testclock/advance", map[string]any{"to": to.Format(time.RFC3339)}), http.StatusOK)
			}
			advance(start)
			sd := tn.Seed(t)
			org := sd.Organization(seed.Organization{Name: "Bridge Media AS", OrganizationNumber: "923609016",
				Country: "NO", Currency: "NOK", TimeZone: "Europe/Oslo"})
			product := sd.Product(seed.Product{Name: "News", Category: "digital", VATRate: "25"})
			plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month", MinimumDueDays: seed.Days(7)})
			pkg := sd.Package(seed.Package{Name: "News", Price: "149.00", Products: []string{product}, Plans: []string{plan}})
			var subs []string
			for i := range 8 {
				sub := sd.Subscriber(seed.Subscriber{Name: fmt.Sprintf("Kunde %d", i), Country: "NO"})
				agreement := id(tn.Do("POST", "/paymentagreement", map[string]any{"subscriberId": sub, "providerType": "External",
					"providerAgreementReference": fmt.Sprintf("cus_%d", i), "paymentMethod": "Card"}))
				order := id(tn.Do("POST", "/order", map[string]any{"organizationId": org, "templatePackageId": pkg,
					"subscriberId": sub, "paymentAgreementId": agreement}))
				must(tn.Do("POST", "/order/"+order+"/complete", nil), http.StatusOK)
				subs = append(subs, sub)
			}
			invoices := func() []store.Invoice {
				var out []store.Invoice
				must(tn.Do("GET", "/invoice?limit=1000", nil), http.StatusOK).JSON(t, &out)
				return out
			}
			// Wait until the receiver has handled every invoice issued so far.
			caughtUp := func() Stats {
				t.Helper()
				deadline := time.Now().Add(30 * time.Second)
				for {
					st := stats(t, addr)
					n := len(invoices())
					if len(st.Invoices) >= n {
						return st
					}
					if time.Now().After(deadline) {
						t.Fatalf("the receiver handled %d of %d invoices:\n%s", len(st.Invoices), n, logs.String())
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			caughtUp()
			for m := 1; m <= 6; m++ {
				advance(start.AddDate(0, m, 0))
				caughtUp()
			}

			st := caughtUp()
			all := invoices()
			if len(all) < 8*6 {
				t.Fatalf("only %d invoices in six months", len(all))
			}
			rc := &Receiver{cfg: Config{FailShare: 0.3}}
			failed := 0
			for _, inv := range all {
				if !slices.Contains(st.Invoices, inv.ID) {
					t.Errorf("invoice %d was never charged", inv.InvoiceNumber)
				}
				var payments []struct {
					Status            string `json:"status"`
					ProviderReference string `json:"providerReference"`
				}
				must(tn.Do("GET", "/payment?invoiceId="+inv.ID, nil), http.StatusOK).JSON(t, &payments)
				wantStatus := "Paid"
				wantPayment := "Succeeded"
				if rc.fails(inv.ID) {
					wantStatus, wantPayment = "Overdue", "Failed"
					failed++
					if inv.DueAt.After(start.AddDate(0, 6, 0)) {
						wantStatus = "Issued"
					}
				}
				if inv.Status != wantStatus || len(payments) != 1 || payments[0].Status != wantPayment ||
					payments[0].ProviderReference != "example-"+inv.ID {
					t.Errorf("invoice %d: status %s, payments %+v; want %s after a %s payment", inv.InvoiceNumber, inv.Status, payments, wantStatus, wantPayment)
				}
			}
			if failed == 0 || failed == len(all) || st.Failed != failed || st.Paid != len(all)-failed || st.Rejected != 0 {
				t.Errorf("receiver stats %+v with %d of %d failing", st, failed, len(all))
			}
			if st.Agreements != len(subs) || st.Validations != 1 {
				t.Errorf("agreements %d, validations %d", st.Agreements, st.Validations)
			}
			rep, err := ledger.Check(tenancy.With(context.Background(), tn.ID), e.Store, ledger.Options{TenantID: tn.ID})
			if err != nil || !rep.Clean() {
				t.Fatalf("ledger check: %v %+v", err, rep.Problems)
			}

			// A delivery that is not signed with the secret is refused.
			res, err := http.Post("http://"+addr+"/", "application/json", bytes.NewReader([]byte(`[]`)))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized {
				t.Fatalf("unsigned delivery: %d", res.StatusCode)
			}
		})
	}
}

func stats(t *testing.T, addr string) Stats {
	t.Helper()
	res, err := http.Get("http://" + addr + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var st Stats
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("stats: %v %s", err, b)
	}
	return st
}
