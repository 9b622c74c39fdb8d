package api_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
)

// agFixture: a Swedish organization with an Autogiro account and two
// subscribers.
type agFixture struct {
	org, account, sub1, sub2 string
}

func newAGFixture(t *testing.T, tn apitest.Tenant) agFixture {
	t.Helper()
	var f agFixture
	f.org = create(t, tn, "/organization", map[string]any{"name": "Nordavis AB", "country": "SE", "currency": "SEK",
		"timeZone": "Europe/Stockholm", "organizationNumber": "556123-4567"})
	f.account = create(t, tn, "/autogiro/account", map[string]any{"organizationId": f.org, "bankgiroCustomerNumber": "543210",
		"bankgiroNumber": "5432-1096", "name": "Nordavis Autogiro"})
	f.sub1 = create(t, tn, "/subscriber", map[string]any{"name": "Tolvan Tolvansson"})
	f.sub2 = create(t, tn, "/subscriber", map[string]any{"name": "Åsa Öberg"})
	return f
}

func ids(t *testing.T, r *apitest.Response) []string {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var items []struct {
		ID string `json:"id"`
	}
	r.JSON(t, &items)
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestAutogiroAccounts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newAGFixture(t, e.Tenant)
		var a struct {
			ID, OrganizationID, BankgiroCustomerNumber, BankgiroNumber, Name string
		}
		r := e.Do("GET", "/autogiro/account/"+f.account, nil)
		r.JSON(t, &a)
		if r.Status != 200 || a.BankgiroNumber != "54321096" || a.BankgiroCustomerNumber != "543210" || a.OrganizationID != f.org {
			t.Fatalf("GET: %d %+v", r.Status, a)
		}
		for _, tc := range []struct {
			body   map[string]any
			fields []string
		}{
			{map[string]any{}, []string{"organizationId", "bankgiroCustomerNumber", "bankgiroNumber"}},
			{map[string]any{"organizationId": f.org, "bankgiroCustomerNumber": "1234567", "bankgiroNumber": "5432-1097"}, []string{"bankgiroCustomerNumber", "bankgiroNumber"}},
			{map[string]any{"organizationId": "0190a0a0-0000-7000-8000-000000000000", "bankgiroCustomerNumber": "1", "bankgiroNumber": "5050-1055"}, []string{"organizationId"}},
			{map[string]any{"organizationId": f.org, "bankgiroCustomerNumber": "1", "bankgiroNumber": "54321096"}, []string{"bankgiroNumber"}}, // taken
			{map[string]any{"organizationId": f.org, "bankgiroCustomerNumber": "1", "bankgiroNumber": "5050-1055", "bankgiro": "x"}, []string{"bankgiro"}},
		} {
			if got := e.Do("POST", "/autogiro/account", tc.body).Fields(t); !slices.Equal(sorted(got...), sorted(tc.fields...)) {
				t.Errorf("POST %v: fields %v, want %v", tc.body, got, tc.fields)
			}
		}
		second := create(t, e.Tenant, "/autogiro/account", map[string]any{"organizationId": f.org, "bankgiroCustomerNumber": "1", "bankgiroNumber": "5050-1055"})
		for q, want := range map[string][]string{
			"":                                  sorted(f.account, second),
			"?OrganizationId=" + f.org:          sorted(f.account, second),
			"?BankgiroNumber=5432-1096":         {f.account},
			"?bankgironumber=50501055":          {second},
			"?BankgiroCustomerNumber=543210":    {f.account},
			"?BankgiroCustomerNumber=999":       {},
			"?BankgiroNumber=5432-1096&limit=1": {f.account},
		} {
			if got := ids(t, e.Do("GET", "/autogiro/account"+q, nil)); !slices.Equal(got, want) {
				t.Errorf("GET /autogiro/account%s = %v, want %v", q, got, want)
			}
		}
		if r := e.Do("GET", "/autogiro/account?OrganizationId=0190a0a0-0000-7000-8000-000000000000", nil); r.Status != 404 {
			t.Errorf("missing organization filter: %d", r.Status)
		}
		if r := e.Do("GET", "/autogiro/account?OrganizationId=nope", nil); r.Status != 400 {
			t.Errorf("bad uuid filter: %d", r.Status)
		}
		if r := e.Do("GET", "/autogiro/account?Bankgiro=1", nil); r.Status != 400 {
			t.Errorf("undeclared filter: %d", r.Status)
		}
		// PUT replaces; an account with sent mandates keeps its bankgiro (tested in the flow).
		if r := e.Do("PUT", "/autogiro/account/"+second, map[string]any{"bankgiroCustomerNumber": "2", "bankgiroNumber": "5050-1055", "name": "B"}); r.Status != 204 {
			t.Fatalf("PUT: %d %s", r.Status, r.Body)
		}
		if r := e.Do("PUT", "/autogiro/account/"+second, map[string]any{"bankgiroCustomerNumber": "2", "bankgiroNumber": "5432-1096"}); r.Status != 400 {
			t.Errorf("PUT to a taken bankgiro: %d", r.Status)
		}
		if r := e.Do("PUT", "/autogiro/account/0190a0a0-0000-7000-8000-000000000000", map[string]any{"bankgiroCustomerNumber": "2", "bankgiroNumber": "5050-1055"}); r.Status != 404 {
			t.Errorf("PUT missing: %d", r.Status)
		}
		if r := e.Do("GET", "/autogiro/account/nope", nil); r.Status != 400 {
			t.Errorf("GET bad id: %d", r.Status)
		}
		// Cross-tenant: another tenant sees none of it.
		other := e.NewTenant("tenant-b", true)
		for _, path := range []string{"/autogiro/account/" + f.account} {
			if r := other.Do("GET", path, nil); r.Status != 404 {
				t.Errorf("other tenant GET %s: %d", path, r.Status)
			}
			if r := other.Do("DELETE", path, nil); r.Status != 404 {
				t.Errorf("other tenant DELETE %s: %d", path, r.Status)
			}
		}
		if got := ids(t, other.Do("GET", "/autogiro/account", nil)); len(got) != 0 {
			t.Errorf("other tenant lists %v", got)
		}
		if r := other.Do("GET", "/autogiro/account?OrganizationId="+f.org, nil); r.Status != 404 {
			t.Errorf("other tenant filter on our organization: %d", r.Status)
		}
		// A mandate keeps its account from being deleted.
		m := create(t, e.Tenant, "/autogiro/mandate", map[string]any{"accountId": f.account, "subscriberId": f.sub1,
			"clearingNumber": "3300", "bankAccountNumber": "121212-1212", "payerId": "19121212-1212"})
		if r := e.Do("DELETE", "/autogiro/account/"+f.account, nil); r.Status != 400 {
			t.Errorf("DELETE an account with a live mandate: %d", r.Status)
		}
		if r := e.Do("DELETE", "/autogiro/mandate/"+m, nil); r.Status != 204 {
			t.Fatalf("DELETE mandate: %d", r.Status)
		}
		if r := e.Do("DELETE", "/autogiro/account/"+f.account, nil); r.Status != 204 {
			t.Errorf("DELETE an account whose mandate never went out: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/autogiro/account/"+f.account, nil); r.Status != 404 {
			t.Errorf("GET deleted: %d", r.Status)
		}
	})
}

func TestAutogiroMandatesAndTransactions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		f := newAGFixture(t, e.Tenant)
		mandate := func(sub, clearing, account, id string) *apitest.Response {
			return e.Do("POST", "/autogiro/mandate", map[string]any{"accountId": f.account, "subscriberId": sub,
				"clearingNumber": clearing, "bankAccountNumber": account, "payerId": id})
		}
		m1 := mandate(f.sub1, "3300", "121212-1212", "19121212-1212").ID(t)
		m2r := e.Do("POST", "/autogiro/mandate", map[string]any{"accountId": f.account, "subscriberId": f.sub2, "payerNumber": "1002",
			"clearingNumber": "6789", "bankAccountNumber": "12345679", "payerId": "556123-4567"})
		m2 := m2r.ID(t)
		var mv struct {
			ID, Status, PayerNumber, PayerID, ClearingNumber, BankAccountNumber string
			SubscriberNumber                                                    int64
		}
		e.Do("GET", "/autogiro/mandate/"+m2, nil).JSON(t, &mv)
		if mv.Status != "Created" || mv.PayerNumber != "1002" || mv.PayerID != "005561234567" || mv.BankAccountNumber != "012345679" {
			t.Fatalf("mandate %+v", mv)
		}
		var m1v struct {
			PayerNumber      string
			SubscriberNumber int64
		}
		e.Do("GET", "/autogiro/mandate/"+m1, nil).JSON(t, &m1v)
		if m1v.PayerNumber == "" || m1v.PayerNumber != strings.TrimLeft(strings.Repeat("0", 1)+itoa(m1v.SubscriberNumber), "0") {
			t.Errorf("payer number %q defaults to the subscriber number %d", m1v.PayerNumber, m1v.SubscriberNumber)
		}
		for _, tc := range []struct {
			body   map[string]any
			fields []string
		}{
			{map[string]any{}, []string{"accountId", "subscriberId", "clearingNumber", "payerId"}},
			{map[string]any{"accountId": f.account, "subscriberId": f.sub1, "clearingNumber": "3300", "bankAccountNumber": "121212-1213", "payerId": "19121212-1213"}, []string{"bankAccountNumber", "payerId"}},
			{map[string]any{"accountId": f.account, "subscriberId": f.sub1, "clearingNumber": "0100", "bankAccountNumber": "1", "payerId": "121212-1212"}, []string{"clearingNumber", "payerId"}},
			{map[string]any{"accountId": f.account, "subscriberId": f.sub1, "clearingNumber": "3300", "bankAccountNumber": "121212-1212", "payerId": "19121212-1212"}, []string{"payerNumber"}}, // live mandate of that payer
			{map[string]any{"accountId": "0190a0a0-0000-7000-8000-000000000000", "subscriberId": "0190a0a0-0000-7000-8000-000000000001", "clearingNumber": "3300", "bankAccountNumber": "121212-1212", "payerId": "19121212-1212"}, []string{"accountId", "subscriberId"}},
			{map[string]any{"accountId": f.account, "subscriberId": f.sub1, "payerNumber": "12345678901234567", "clearingNumber": "3300", "bankAccountNumber": "121212-1212", "payerId": "19121212-1212"}, []string{"payerNumber"}},
		} {
			if got := e.Do("POST", "/autogiro/mandate", tc.body).Fields(t); !slices.Equal(sorted(got...), sorted(tc.fields...)) {
				t.Errorf("POST %v: fields %v, want %v", tc.body, got, tc.fields)
			}
		}
		// Transactions.
		tx := func(body map[string]any) *apitest.Response { return e.Do("POST", "/autogiro/transaction", body) }
		date := futureDate(t, e)
		t1 := tx(map[string]any{"mandateId": m1, "amount": 249.00, "paymentDate": date, "reference": "ÅRSKORT-2026"}).ID(t)
		t2 := tx(map[string]any{"mandateId": m1, "kind": "Refund", "amount": "50", "paymentDate": date}).ID(t)
		t3 := tx(map[string]any{"mandateId": m2, "amount": 99.5, "paymentDate": date}).ID(t)
		var tv struct {
			Kind, Status, PaymentDate, Reference, Currency string
			Amount                                         float64
			IsCancelled                                    bool
		}
		e.Do("GET", "/autogiro/transaction/"+t1, nil).JSON(t, &tv)
		if tv.Kind != "Debit" || tv.Status != "Created" || tv.Amount != 249 || tv.Reference != "ÅRSKORT-2026" || tv.Currency != "SEK" || tv.PaymentDate != date {
			t.Fatalf("transaction %+v", tv)
		}
		for _, tc := range []struct {
			body   map[string]any
			fields []string
		}{
			{map[string]any{}, []string{"mandateId", "amount", "paymentDate"}},
			{map[string]any{"mandateId": m1, "amount": 0, "paymentDate": "2020-01-01", "kind": "Charge"}, []string{"amount", "paymentDate", "kind"}},
			{map[string]any{"mandateId": m1, "amount": 1.001, "paymentDate": "x", "reference": "€uro"}, []string{"amount", "paymentDate", "reference"}},
			{map[string]any{"mandateId": m1, "amount": 10000000000, "paymentDate": date, "reference": "12345678901234567"}, []string{"amount", "reference"}},
			{map[string]any{"mandateId": "0190a0a0-0000-7000-8000-000000000000", "amount": 1, "paymentDate": date}, []string{"mandateId"}},
			{map[string]any{"mandateId": m1, "amount": 1, "paymentDate": date, "invoiceId": "0190a0a0-0000-7000-8000-000000000000"}, []string{"invoiceId"}},
		} {
			if got := tx(tc.body).Fields(t); !slices.Equal(sorted(got...), sorted(tc.fields...)) {
				t.Errorf("POST %v: fields %v, want %v", tc.body, got, tc.fields)
			}
		}
		// Cancelling: a created transaction just ends.
		if r := e.Do("DELETE", "/autogiro/transaction/"+t3, nil); r.Status != 204 {
			t.Fatalf("DELETE transaction: %d", r.Status)
		}
		if r := e.Do("DELETE", "/autogiro/transaction/"+t3, nil); r.Status != 204 {
			t.Fatalf("DELETE again: %d", r.Status)
		}
		for q, want := range map[string][]string{
			"":                   sorted(t1, t2, t3),
			"?MandateId=" + m1:   sorted(t1, t2),
			"?MandateId=" + m2:   {t3},
			"?IsCancelled=true":  {t3},
			"?IsCancelled=false": sorted(t1, t2),
			"?mandateid=" + m2 + "&IsCancelled=false": {},
		} {
			if got := ids(t, e.Do("GET", "/autogiro/transaction"+q, nil)); !slices.Equal(got, want) {
				t.Errorf("GET /autogiro/transaction%s = %v, want %v", q, got, want)
			}
		}
		if r := e.Do("GET", "/autogiro/transaction?MandateId=0190a0a0-0000-7000-8000-000000000000", nil); r.Status != 404 {
			t.Errorf("missing mandate filter: %d", r.Status)
		}
		if r := e.Do("GET", "/autogiro/transaction?IsCancelled=maybe", nil); r.Status != 400 {
			t.Errorf("bad bool: %d", r.Status)
		}
		// Mandate cancel: its open transactions end with it; lists hide it.
		if r := e.Do("DELETE", "/autogiro/mandate/"+m1, nil); r.Status != 204 {
			t.Fatalf("DELETE mandate: %d", r.Status)
		}
		e.Do("GET", "/autogiro/transaction/"+t1, nil).JSON(t, &tv)
		if tv.Status != "Cancelled" || !tv.IsCancelled {
			t.Errorf("transaction of a cancelled mandate: %+v", tv)
		}
		if r := tx(map[string]any{"mandateId": m1, "amount": 1, "paymentDate": date}); !slices.Equal(r.Fields(t), []string{"mandateId"}) {
			t.Errorf("a transaction on a cancelled mandate was not refused")
		}
		for q, want := range map[string][]string{
			"":                        {m2},
			"?IncludeCancelled=true":  sorted(m1, m2),
			"?IncludeRejected=true":   {m2},
			"?AccountId=" + f.account: {m2},
			"?SubscriberId=" + f.sub1: {},
			"?SubscriberId=" + f.sub1 + "&IncludeCancelled=true":                         {m1},
			"?BankAccountNumber=012345679":                                               {m2},
			"?BankAccountNumber=12345679":                                                {m2},
			"?SubscriberNumber=" + itoa(m1v.SubscriberNumber) + "&IncludeCancelled=true": {m1},
		} {
			if got := ids(t, e.Do("GET", "/autogiro/mandate"+q, nil)); !slices.Equal(got, want) {
				t.Errorf("GET /autogiro/mandate%s = %v, want %v", q, got, want)
			}
		}
		for _, q := range []string{"?AccountId=0190a0a0-0000-7000-8000-000000000000", "?SubscriberId=0190a0a0-0000-7000-8000-000000000000", "?SubscriberNumber=987654321"} {
			if r := e.Do("GET", "/autogiro/mandate"+q, nil); r.Status != 404 {
				t.Errorf("GET /autogiro/mandate%s: %d, want 404", q, r.Status)
			}
		}
		if r := e.Do("GET", "/autogiro/mandate?SubscriberNumber=x", nil); r.Status != 400 {
			t.Errorf("bad SubscriberNumber: %d", r.Status)
		}
		// Cross-tenant.
		other := e.NewTenant("tenant-b", true)
		for _, path := range []string{"/autogiro/mandate/" + m2, "/autogiro/transaction/" + t1} {
			for _, method := range []string{"GET", "DELETE"} {
				if r := other.Do(method, path, nil); r.Status != 404 {
					t.Errorf("other tenant %s %s: %d", method, path, r.Status)
				}
			}
		}
		for _, path := range []string{"/autogiro/mandate?AccountId=" + f.account, "/autogiro/transaction?MandateId=" + m2} {
			if r := other.Do("GET", path, nil); r.Status != 404 {
				t.Errorf("other tenant GET %s: %d", path, r.Status)
			}
		}
		if r := other.Do("POST", "/autogiro/transaction", map[string]any{"mandateId": m2, "amount": 1, "paymentDate": date}); r.Status != 400 {
			t.Errorf("other tenant's transaction on our mandate: %d", r.Status)
		}
		if r := other.Do("POST", "/autogiro/export/mandate/"+f.org, nil); r.Status != 400 {
			t.Errorf("other tenant exports our organization: %d", r.Status)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// futureDate is a payment date a week after the tenant's clock.
func futureDate(t *testing.T, e *apitest.Env) string {
	return tenantClock(t, e, e.Tenant).AddDate(0, 0, 7).Format(time.DateOnly)
}
