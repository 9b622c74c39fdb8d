package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kadens/kadens/internal/ledger"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestLedgerCheckCommand bills a tenant through the API (orders, a full, a
// partial and an overpayment, a failure), runs `kadens ledger check`
// against its database (clean: exit 0 and a one-line summary), tampers
// with a ledger entry and a demand, and expects a non-zero exit that names
// the rows.
func TestLedgerCheckCommand(t *testing.T) {
	t.Parallel()
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
			var rep ledger.Report
			if !errors.Is(err, errLedgerProblems) || json.Unmarshal([]byte(jout), &rep) != nil || rep.Found != 5 || len(rep.Problems) != 5 {
				t.Fatalf("--json: %v %+v\n%s", err, rep, jout)
			}
			if _, err := kadens(t, env, "ledger", "check", "--tenant", "nobody"); err == nil || !strings.Contains(err.Error(), "no tenant") {
				t.Fatalf("unknown tenant: %v", err)
			}
		})
	}
}

// TestLedgerCheckFindsMoneyFromNothing: money that balances but should not
// exist — a surplus credit note inserted by hand beside the real full
// credit of a paid invoice (what concurrent credits did before the
// demand's lock came first), an allowance booked by no document, and a
// second payment applied to a paid demand — is found by the check
// function on each engine and makes `kadens ledger check` exit non-zero
// naming the invoice, the item and the demand.
func TestLedgerCheckFindsMoneyFromNothing(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			t.Parallel()
			e := apitest.Start(t, eng, nil)
			tn := e.Tenant
			sd := tn.Seed(t)
			org := sd.Organization(seed.Nordavis)
			product := sd.Product(seed.Product{Name: "Nordavis Digital", Category: "digital", VATRate: "0"})
			plan := sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
			pkg := sd.Package(seed.Package{Name: "Digital", Price: "100.00", Products: []string{product}, Plans: []string{plan}})
			for i := range 2 {
				sub := sd.Subscriber(seed.Subscriber{Name: fmt.Sprintf("Subscriber %d", i), Country: "NO"})
				order := tn.Do("POST", "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": sub}).ID(t)
				if r := tn.Do("POST", "/order/"+order+"/complete", nil); r.Status != http.StatusOK {
					t.Fatalf("complete: %d %s", r.Status, r.Body)
				}
			}
			var invoices []store.Invoice
			tn.Do("GET", "/invoice", nil).JSON(t, &invoices)
			if len(invoices) != 2 {
				t.Fatalf("%d invoices", len(invoices))
			}
			credited, paid := invoices[0], invoices[1]
			for i, inv := range invoices {
				if r := tn.Do("POST", "/payment", map[string]any{"invoiceId": inv.ID, "status": "Succeeded", "amount": 100, "currency": "NOK",
					"provider": "Bank", "providerReference": fmt.Sprintf("pay-%d", i)}); r.Status != http.StatusCreated {
					t.Fatalf("pay: %d %s", r.Status, r.Body)
				}
			}
			note := tn.Do("POST", "/invoice/"+credited.ID+"/credit", map[string]any{}).ID(t)
			env := map[string]string{"KADENS_DATA_DIR": e.Config.DataDir, "KADENS_DATABASE_URL": e.Config.DatabaseURL, "KADENS_LOG_LEVEL": "warn"}
			if out, err := kadens(t, env, "ledger", "check", "--tenant", tn.ID); err != nil {
				t.Fatalf("clean check: %v\n%s", err, out)
			}

			db := e.Store.DB()
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := db.Exec(q, args...); err != nil {
					t.Fatalf("%v\n%s", err, q)
				}
			}
			// A second credit note of the whole invoice, its surplus an
			// allowance with its entry: every balance still adds up.
			surplusNote, surplusItem := store.NewID(), store.NewID()
			exec(`INSERT INTO account_items (id, tenant_id, account_id, kind, description, amount, remaining, vat_rate, booked_at,
				created_at, source_kind, source_id) SELECT $1, tenant_id, account_id, 'Allowance', 'Credit note', gross, gross, '0',
				issued_at, created_at, 'CreditNote', $2 FROM credit_notes WHERE id = $3`, surplusItem, surplusNote, note)
			exec(`INSERT INTO credit_notes (id, tenant_id, organization_id, credit_note_number, invoice_id, payment_demand_id,
				account_id, subscriber_id, subscription_id, currency, reason, issued_at, issue_date, lines, vat_totals, net, vat, gross,
				applied, surplus, allowance_item_id, created_at) SELECT $1, tenant_id, organization_id, credit_note_number + 1,
				invoice_id, payment_demand_id, account_id, subscriber_id, subscription_id, currency, reason, issued_at, issue_date,
				lines, vat_totals, net, vat, gross, 0, gross, $2, created_at FROM credit_notes WHERE id = $3`, surplusNote, surplusItem, note)
			exec(`INSERT INTO account_entries (id, tenant_id, account_id, kind, amount, item_id, booked_at, created_at)
				SELECT $1, tenant_id, account_id, 'Allowance', -gross, $2, issued_at, created_at FROM credit_notes WHERE id = $3`,
				store.NewID(), surplusItem, note)
			// An allowance no document booked.
			orphan := store.NewID()
			exec(`INSERT INTO account_items (id, tenant_id, account_id, kind, description, amount, remaining, vat_rate, booked_at,
				created_at) SELECT $1, tenant_id, account_id, 'Allowance', 'Goodwill', 5000, 5000, '0', issued_at, created_at
				FROM invoices WHERE id = $2`, orphan, paid.ID)
			exec(`INSERT INTO account_entries (id, tenant_id, account_id, kind, amount, item_id, booked_at, created_at)
				SELECT $1, tenant_id, account_id, 'Allowance', -5000, $2, issued_at, created_at FROM invoices WHERE id = $3`,
				store.NewID(), orphan, paid.ID)
			// The paid demand paid again, with its Payment entry.
			again := store.NewID()
			exec(`INSERT INTO payments (id, tenant_id, payment_demand_id, invoice_id, subscriber_id, account_id, payment_agreement_id,
				status, amount, applied, surplus, allowance_item_id, currency, paid_at, provider, provider_reference, failure_reason,
				created_at) SELECT $1, tenant_id, payment_demand_id, invoice_id, subscriber_id, account_id, payment_agreement_id, status,
				amount, applied, surplus, allowance_item_id, currency, paid_at, provider, 'again', failure_reason, created_at
				FROM payments WHERE invoice_id = $2`, again, paid.ID)
			exec(`INSERT INTO account_entries (id, tenant_id, account_id, kind, amount, invoice_id, payment_id, booked_at, created_at)
				SELECT $1, tenant_id, account_id, 'Payment', -applied, invoice_id, id, paid_at, created_at FROM payments WHERE id = $2`,
				store.NewID(), again)

			want := []string{
				"invoice " + credited.ID + " [over-credit]: invoice 1 is credited 200.00 NOK by 2 credit notes but can be credited 100.00 NOK at most (line 1 of 100.00 NOK credited 200.00 NOK)",
				"account_item " + orphan + " [item-source]: Allowance of 50.00 NOK: it has no source document",
				"payment_demand " + paid.PaymentDemandID + " [settled-twice]: its payments applied 200.00 NOK and its credit notes 0.00 NOK, 100.00 NOK more than its amount 100.00 NOK",
			}
			rep, err := ledger.Check(tenancy.With(context.Background(), tn.ID), e.Store, ledger.Options{TenantID: tn.ID})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range rep.Problems {
				got = append(got, p.String())
			}
			for _, w := range want {
				if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
					t.Errorf("ledger.Check does not report %q; it found:\n%s", w, strings.Join(got, "\n"))
				}
			}
			out, err := kadens(t, env, "ledger", "check", "--tenant", tn.ID)
			if !errors.Is(err, errLedgerProblems) {
				t.Fatalf("check after the tampering: err %v\n%s", err, out)
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
