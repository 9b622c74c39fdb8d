package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestLedgerCheckCommand bills a tenant through the API (orders, a full, a
// partial and an overpayment, a failure), runs `kadens ledger check`
// against its database (clean: exit 0 and a one-line summary), tampers
// with a ledger entry and a demand, and expects a non-zero exit that names
// the rows.
func TestLedgerCheckCommand(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			e := apitest.Start(t, eng, nil)
			tn := e.Tenant
			post := func(path string, body any) string {
				t.Helper()
				r := tn.Do("POST", path, body)
				if r.Status != http.StatusCreated && r.Status != http.StatusOK {
					t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
				}
				var id string
				if r.Status == http.StatusCreated {
					id = r.ID(t)
				}
				return id
			}
			sd := tn.Seed(t)
			org := sd.Organization(seed.Nordavis)
			product := sd.Product(seed.Product{Name: "Nordavis Digital", Category: "digital", VATRate: "0"})
			plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
			pkg := sd.Package(seed.Package{Name: "Digital", Price: "199.00", Products: []string{product}, Plans: []string{plan}})
			var invoices []store.Invoice
			for i := range 4 {
				sub := sd.Subscriber(seed.Subscriber{Name: fmt.Sprintf("Subscriber %d", i), Country: "NO"})
				order := post("/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": sub})
				post("/order/"+order+"/complete", nil)
			}
			tn.Do("GET", "/invoice", nil).JSON(t, &invoices)
			if len(invoices) != 4 {
				t.Fatalf("%d invoices", len(invoices))
			}
			pay := func(i int, status string, amount any, ref string) {
				post("/payment", map[string]any{"invoiceId": invoices[i].ID, "status": status, "amount": amount, "currency": "NOK",
					"provider": "Bank", "providerReference": ref})
			}
			pay(0, "Succeeded", 199, "full")
			pay(1, "Succeeded", 99.5, "partial")
			pay(2, "Succeeded", 250, "over")
			pay(3, "Failed", 199, "failed")

			env := map[string]string{"KADENS_DATA_DIR": e.Config.DataDir, "KADENS_DATABASE_URL": e.Config.DatabaseURL, "KADENS_LOG_LEVEL": "warn"}
			out, err := kadens(t, env, "ledger", "check", "--tenant", tn.ID)
			if err != nil || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "ledger clean: 1 tenants, 4 accounts, 4 invoices, 4 payment demands, 4 payments, 1 account items") {
				t.Fatalf("clean check: %v\n%s", err, out)
			}

			// An altered Payment entry and a demand's paid amount.
			db := e.Store.DB()
			if _, err := db.Exec(`UPDATE account_entries SET amount = -19800
				WHERE payment_id = (SELECT id FROM payments WHERE provider_reference = 'full')`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`UPDATE payment_demands SET paid_amount = 0 WHERE id = $1`, invoices[1].PaymentDemandID); err != nil {
				t.Fatal(err)
			}
			out, err = kadens(t, env, "ledger", "check")
			if !errors.Is(err, errLedgerProblems) {
				t.Fatalf("tampered check: err %v\n%s", err, out)
			}
			for _, want := range []string{
				"subscriber_account " + invoices[0].SubscriberAccountID + " [balance]",
				"[payment-entry]",
				"payment_demand " + invoices[1].PaymentDemandID + " [demand-paid]: paid amount is 0.00 NOK but its succeeded payments applied 99.50 NOK",
				"payment_demand " + invoices[1].PaymentDemandID + " [status]",
				"ledger has 5 problems",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			jout, err := kadens(t, env, "ledger", "check", "--json", "--tenant", tn.ID)
			var rep store.LedgerReport
			if !errors.Is(err, errLedgerProblems) || json.Unmarshal([]byte(jout), &rep) != nil || rep.Found != 5 || len(rep.Problems) != 5 {
				t.Fatalf("--json: %v %+v\n%s", err, rep, jout)
			}
			if _, err := kadens(t, env, "ledger", "check", "--tenant", "nobody"); err == nil || !strings.Contains(err.Error(), "no tenant") {
				t.Fatalf("unknown tenant: %v", err)
			}
		})
	}
}
