package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
)

// TestBindingAPI walks a binding period through the real listener: the
// contract's earlyCancellation (default, a 400 on a bad value at create
// and update), bindingEndsAt on the subscription, the binding on the
// upcoming invoice, the bindingPeriod 400 of a downward plan change, and
// a ChargeRemainder cancellation's charge on the subscriber account.
func TestBindingAPI(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newOrderFixture(t, e, e.Tenant)
		body := func(name, price, contract string) string {
			return fmt.Sprintf(`{"Name": %q, "Currency": "NOK", "Price": %s, "products": [{"productId": %q}], "BillingPlans": [%q]%s}`,
				name, price, f.digital, f.monthly, contract)
		}
		bad := body("Bad", "100", `, "contract": {"bindingPeriods": 12, "earlyCancellation": "Never"}`)
		if r := e.Do("POST", "/package", bad); !slices.Contains(r.Fields(t), "contract.earlyCancellation") {
			t.Fatalf("bad rule: %s, want 400 naming contract.earlyCancellation", r.Body)
		}
		plain := create(t, e.Tenant, "/package", body("Default", "100", `, "contract": {"bindingPeriods": 12}`))
		var pkg struct {
			Contract struct{ EarlyCancellation string }
		}
		e.Do("GET", "/package/"+plain, nil).JSON(t, &pkg)
		if pkg.Contract.EarlyCancellation != "EndOfBinding" {
			t.Fatalf("default rule %q, want EndOfBinding", pkg.Contract.EarlyCancellation)
		}
		if r := e.Do("PUT", "/package/"+plain, bad); !slices.Contains(r.Fields(t), "contract.earlyCancellation") {
			t.Fatalf("bad rule on update: %s", r.Body)
		}
		bound := create(t, e.Tenant, "/package", body("Bound", "100", `, "contract": {"bindingPeriods": 12, "earlyCancellation": "ChargeRemainder"}`))
		cheaper := create(t, e.Tenant, "/package", body("Cheaper", "50", ""))

		order := create(t, e.Tenant, "/order", map[string]any{"organizationId": f.org, "templatePackageId": bound, "subscriberId": f.subscriber})
		done := completeOrder(t, e.Tenant, order)
		var clock struct{ Now time.Time }
		e.Do("GET", "/testclock", nil).JSON(t, &clock)
		var sub struct {
			ID            string
			PeriodStart   time.Time
			BindingEndsAt *time.Time
		}
		e.Do("GET", "/subscription/"+*done.SubscriptionID, nil).JSON(t, &sub)
		oslo, _ := time.LoadLocation("Europe/Oslo")
		s := sub.PeriodStart.In(oslo)
		wantEnd := time.Date(s.Year()+1, s.Month(), s.Day(), 0, 0, 0, 0, oslo)
		// On days 29–31 the end follows the month-end rule, which
		// TestBindingEndOfBinding counts; the rest of this test runs
		// whatever the day.
		if s.Day() <= 28 && (sub.BindingEndsAt == nil || !sub.BindingEndsAt.Equal(wantEnd)) {
			t.Fatalf("bindingEndsAt %v, want %s", sub.BindingEndsAt, wantEnd)
		}
		if sub.BindingEndsAt == nil {
			t.Fatal("bindingEndsAt is null during the binding")
		}
		wantEnd = *sub.BindingEndsAt // the upcoming invoice shows the same end
		var up struct {
			Binding *struct {
				EndsAt            time.Time
				EarlyCancellation string
				PeriodsAfter      int
			}
		}
		e.Do("GET", "/subscription/"+sub.ID+"/upcominginvoice", nil).JSON(t, &up)
		if up.Binding == nil || !up.Binding.EndsAt.Equal(wantEnd) || up.Binding.EarlyCancellation != "ChargeRemainder" || up.Binding.PeriodsAfter != 11 {
			t.Fatalf("upcoming binding %+v", up.Binding)
		}
		r := e.Do("POST", "/subscription/"+sub.ID+"/scheduledchange", map[string]any{"processingType": "OnRenewal", "templatePackageId": cheaper})
		if !slices.Contains(r.Fields(t), "bindingPeriod") {
			t.Fatalf("downward change: %s, want 400 naming bindingPeriod", r.Body)
		}
		// Month 3, cancelled at its end: 9 bound periods remain, charged.
		to := time.Date(s.Year(), s.Month()+2, s.Day()+5, 12, 0, 0, 0, oslo)
		if r := e.Do("POST", "/testclock/advance", map[string]any{"to": to.UTC().Format(time.RFC3339)}); r.Status != http.StatusOK {
			t.Fatalf("advance: %d %s", r.Status, r.Body)
		}
		var subs []struct{ ID string }
		e.Do("GET", "/subscription?subscriberId="+f.subscriber+"&status=Active", nil).JSON(t, &subs)
		if len(subs) != 1 {
			t.Fatalf("%d active periods", len(subs))
		}
		if r := e.Do("POST", "/subscription/"+subs[0].ID+"/cancel", map[string]any{"mode": "EndOfPeriod"}); r.Status != http.StatusOK {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		var accounts []struct{ OutstandingCharges json.RawMessage }
		e.Do("GET", "/subscriberaccount?subscriberId="+f.subscriber, nil).JSON(t, &accounts)
		if len(accounts) != 1 || string(accounts[0].OutstandingCharges) != "900.00" {
			t.Fatalf("accounts %+v, want 900.00 outstanding (9 × 100.00)", accounts)
		}
	})
}
