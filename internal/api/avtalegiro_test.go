package api_test

import (
	"encoding/base64"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/store"
)

func agAccountBody(number, url string) map[string]any {
	return map[string]any{"name": "Avis", "bankAccountNumber": number, "customerUnitId": "12345678", "kidAlgorithm": "mod10",
		"kidLength": 15, "baseComboApiEndpointUrl": url}
}

func wantStatus(t *testing.T, r *apitest.Response, status int, what string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: %d %s, want %d", what, r.Status, r.Body, status)
	}
}

func wantField(t *testing.T, r *apitest.Response, field string) {
	t.Helper()
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `"`+field+`"`) {
		t.Fatalf("want 400 naming %s, got %d %s", field, r.Status, r.Body)
	}
}

func TestAvtaleGiroAccounts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		id := create(t, tn, "/avtalegiro/account", agAccountBody("1234.56.78903", "https://bank.example/api"))
		other := create(t, tn, "/avtalegiro/account", agAccountBody("86011117947", "https://other.example/api"))

		for field, change := range map[string]func(map[string]any){
			"bankAccountNumber":       func(b map[string]any) { b["bankAccountNumber"] = "12345678904" },
			"customerUnitId":          func(b map[string]any) { b["customerUnitId"] = "1234" },
			"kidAlgorithm":            func(b map[string]any) { b["kidAlgorithm"] = "MOD97" },
			"kidLength":               func(b map[string]any) { b["kidLength"] = 26 },
			"leadDays":                func(b map[string]any) { b["leadDays"] = -1 },
			"baseComboApiEndpointUrl": func(b map[string]any) { b["baseComboApiEndpointUrl"] = "ftp://x" },
		} {
			b := agAccountBody("12345678903", "https://bank.example/api")
			b["bankAccountNumber"] = "98765432103"
			change(b)
			wantField(t, tn.Do("POST", "/avtalegiro/account", b), field)
		}
		// The same number twice is refused.
		wantField(t, tn.Do("POST", "/avtalegiro/account", agAccountBody("12345678903", "https://x.example")), "bankAccountNumber")

		var a avtalegiro.AvtaleGiroAccount
		r := tn.Do("GET", "/avtalegiro/account/"+id, nil)
		wantStatus(t, r, 200, "get")
		r.JSON(t, &a)
		if a.BankAccountNumber != "12345678903" || a.KIDAlgorithm != "MOD10" || a.LeadDays != 4 || len(a.OrganizationIDs) != 0 {
			t.Fatalf("account = %+v", a)
		}
		var list []avtalegiro.AvtaleGiroAccount
		tn.Do("GET", "/avtalegiro/account?BankAccountNumber=1234.56.78903", nil).JSON(t, &list)
		if len(list) != 1 || list[0].ID != id {
			t.Fatalf("by number: %+v", list)
		}
		tn.Do("GET", "/avtalegiro/account?baseComboApiEndpointURL=https://other.example/api", nil).JSON(t, &list)
		if len(list) != 1 || list[0].ID != other {
			t.Fatalf("by url: %+v", list)
		}
		tn.Do("GET", "/avtalegiro/account", nil).JSON(t, &list)
		if len(list) != 2 {
			t.Fatalf("all: %d", len(list))
		}
		wantField(t, tn.Do("GET", "/avtalegiro/account?BankAccountNumber=123", nil), "BankAccountNumber")
		wantField(t, tn.Do("GET", "/avtalegiro/account?bankNumber=1", nil), "bankNumber")

		upd := agAccountBody("12345678903", "https://bank.example/v2")
		upd["leadDays"] = 6
		wantStatus(t, tn.Do("PUT", "/avtalegiro/account/"+id, upd), 204, "put")
		tn.Do("GET", "/avtalegiro/account/"+id, nil).JSON(t, &a)
		if a.LeadDays != 6 || a.BaseComboAPIEndpointURL != "https://bank.example/v2" {
			t.Fatalf("after put: %+v", a)
		}
		wantField(t, tn.Do("PUT", "/avtalegiro/account/"+id, agAccountBody("86011117947", "https://x.example")), "bankAccountNumber")

		// Organizations.
		org := create(t, tn, "/organization", map[string]any{"name": "Nordavis AS", "organizationNumber": "923609016", "country": "NO",
			"currency": "NOK", "timeZone": "Europe/Oslo"})
		r = tn.Do("POST", "/avtalegiro/account/"+id+"/organizations", []map[string]any{{"id": org}})
		if got := r.ID(t); got != id {
			t.Fatalf("organizations answered %q", got)
		}
		wantStatus(t, tn.Do("POST", "/avtalegiro/account/"+id+"/organizations", []map[string]any{{"id": org}}), 201, "again")
		wantField(t, tn.Do("POST", "/avtalegiro/account/"+id+"/organizations", []map[string]any{{"id": store.NewID()}}), "[0].id")
		wantField(t, tn.Do("POST", "/avtalegiro/account/"+id+"/organizations", []map[string]any{{"id": "x"}}), "[0].id")
		wantStatus(t, tn.Do("POST", "/avtalegiro/account/"+store.NewID()+"/organizations", []map[string]any{{"id": org}}), 404, "unknown account")
		tn.Do("GET", "/avtalegiro/account/"+id, nil).JSON(t, &a)
		if len(a.OrganizationIDs) != 1 || a.OrganizationIDs[0] != org {
			t.Fatalf("organizations = %v", a.OrganizationIDs)
		}
		wantStatus(t, tn.Do("DELETE", "/avtalegiro/account/"+id+"/organizations/"+org, nil), 204, "unlink")
		wantStatus(t, tn.Do("DELETE", "/avtalegiro/account/"+id+"/organizations/"+org, nil), 404, "unlink again")
		wantStatus(t, tn.Do("DELETE", "/avtalegiro/account/"+id+"/organizations/x", nil), 400, "bad org id")

		// Another tenant sees none of it.
		stranger := e.NewTenant("stranger", true)
		for _, p := range []string{"/avtalegiro/account/" + id} {
			wantStatus(t, stranger.Do("GET", p, nil), 404, "cross-tenant get")
			wantStatus(t, stranger.Do("PUT", p, upd), 404, "cross-tenant put")
			wantStatus(t, stranger.Do("DELETE", p, nil), 404, "cross-tenant delete")
			wantStatus(t, stranger.Do("POST", p+"/organizations", []map[string]any{{"id": org}}), 404, "cross-tenant link")
		}
		wantStatus(t, stranger.Do("DELETE", "/avtalegiro/account/"+id+"/organizations/"+org, nil), 404, "cross-tenant unlink")
		stranger.Do("GET", "/avtalegiro/account", nil).JSON(t, &list)
		if len(list) != 0 {
			t.Fatalf("stranger lists %d accounts", len(list))
		}

		wantStatus(t, tn.Do("GET", "/avtalegiro/account/x", nil), 400, "bad id")
		wantStatus(t, tn.Do("DELETE", "/avtalegiro/account/"+other, nil), 204, "delete")
		wantStatus(t, tn.Do("GET", "/avtalegiro/account/"+other, nil), 404, "deleted")
		wantStatus(t, tn.Do("DELETE", "/avtalegiro/account/"+other, nil), 404, "deleted twice")
	})
}

// agSetup: an account (KIDs MOD10, 15 digits, lead 4 banking days) and a
// mandate that wants notice from the bank, on a test tenant at 2027-01-04.
func agSetup(t *testing.T, e *apitest.Env, tn apitest.Tenant, bankURL string) (account, mandate string) {
	t.Helper()
	if r := tn.Do("POST", "/testclock/advance", map[string]any{"to": "2027-01-04T09:00:00Z"}); r.Status != 200 {
		t.Fatalf("advance: %d %s", r.Status, r.Body)
	}
	account = create(t, tn, "/avtalegiro/account", agAccountBody("12345678903", bankURL))
	mandate = create(t, tn, "/avtalegiro/mandate", map[string]any{"accountId": account, "kid": "000123400001012", "notify": true,
		"amountLimit": 1000.00})
	return account, mandate
}

func TestAvtaleGiroMandatesAndClaims(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		account, mandate := agSetup(t, e, tn, "https://bank.example")

		wantField(t, tn.Do("POST", "/avtalegiro/mandate", map[string]any{"accountId": account, "kid": "000123400001013"}), "kid")
		wantField(t, tn.Do("POST", "/avtalegiro/mandate", map[string]any{"accountId": account, "kid": "12345674"}), "kid")
		wantField(t, tn.Do("POST", "/avtalegiro/mandate", map[string]any{"accountId": account, "kid": "000123400001012"}), "kid")
		wantField(t, tn.Do("POST", "/avtalegiro/mandate", map[string]any{"accountId": store.NewID(), "kid": "000567800001032"}), "accountId")
		wantField(t, tn.Do("POST", "/avtalegiro/mandate", map[string]any{"accountId": account, "kid": "000567800001032", "subscriberId": store.NewID()}), "subscriberId")
		plain := create(t, tn, "/avtalegiro/mandate", map[string]any{"accountId": account, "kid": "000567800001032"})

		claim := func(body map[string]any) *apitest.Response {
			b := map[string]any{"mandateId": mandate, "amount": 299.00, "dueDate": "2027-01-15"}
			for k, v := range body {
				b[k] = v
			}
			return tn.Do("POST", "/avtalegiro/claim", b)
		}
		// 2027-01-04 (Monday) + 4 banking days = 2027-01-08.
		wantField(t, claim(map[string]any{"dueDate": "2027-01-03"}), "dueDate")
		wantField(t, claim(map[string]any{"dueDate": "2027-01-07"}), "dueDate")
		wantField(t, claim(map[string]any{"dueDate": "2028-02-01"}), "dueDate")
		wantField(t, claim(map[string]any{"dueDate": "15.01.2027"}), "dueDate")
		wantField(t, claim(map[string]any{"amount": 1000.01}), "amount")
		wantField(t, claim(map[string]any{"amount": 0}), "amount")
		wantField(t, claim(map[string]any{"amount": 1.001}), "amount")
		wantField(t, claim(map[string]any{"kid": "000123400001013"}), "kid")
		wantField(t, claim(map[string]any{"mandateId": store.NewID()}), "mandateId")
		wantField(t, claim(map[string]any{"mandateId": plain, "noticeLines": []string{"x"}}), "noticeLines")
		wantField(t, claim(map[string]any{"noticeLines": []string{strings.Repeat("x", 81)}}), "noticeLines[0]")
		wantField(t, claim(map[string]any{"externalReference": "€"}), "externalReference")

		tx := store.NewID()
		first := claim(map[string]any{"dueDate": "2027-01-08", "transactionId": tx, "noticeLines": []string{"Avis januar", "kr 299,00"}}).ID(t)
		again := claim(map[string]any{"dueDate": "2027-01-08", "transactionId": tx})
		wantStatus(t, again, 200, "same transactionId")
		second := claim(map[string]any{"dueDate": "2027-02-15"}).ID(t)
		third := tn.Do("POST", "/avtalegiro/claim", map[string]any{"mandateId": plain, "amount": 49.5, "dueDate": "2027-03-01"}).ID(t)

		var claims []avtalegiro.AvtaleGiroClaim
		tn.Do("GET", "/avtalegiro/claim?MandateId="+mandate, nil).JSON(t, &claims)
		if len(claims) != 2 {
			t.Fatalf("by mandate: %d", len(claims))
		}
		tn.Do("GET", "/avtalegiro/claim?TransactionId="+tx, nil).JSON(t, &claims)
		if len(claims) != 1 || claims[0].ID != first || claims[0].Status != avtalegiro.ClaimScheduled || !claims[0].Notify ||
			claims[0].Amount.Minor != 29900 || len(claims[0].NoticeLines) != 2 {
			t.Fatalf("by transaction: %+v", claims)
		}
		tn.Do("GET", "/avtalegiro/claim?KID=000567800001032", nil).JSON(t, &claims)
		if len(claims) != 1 || claims[0].ID != third {
			t.Fatalf("by KID: %+v", claims)
		}
		wantStatus(t, tn.Do("GET", "/avtalegiro/claim?MandateId="+store.NewID(), nil), 404, "unknown mandate filter")
		wantField(t, tn.Do("GET", "/avtalegiro/claim?MandateId=x", nil), "MandateId")

		// A scheduled claim is cancelled at once, without a record.
		wantStatus(t, tn.Do("POST", "/avtalegiro/claim/"+third+"/cancel", nil), 202, "cancel scheduled")
		var c avtalegiro.AvtaleGiroClaim
		tn.Do("GET", "/avtalegiro/claim/"+third, nil).JSON(t, &c)
		if c.Status != avtalegiro.ClaimCancelled {
			t.Fatalf("status %s", c.Status)
		}

		// The export sends the two scheduled claims.
		r := tn.Do("POST", "/avtalegiro/account/"+account+"/export", nil)
		wantStatus(t, r, 200, "export")
		var f avtalegiro.AvtaleGiroFile
		r.JSON(t, &f)
		if f.Transactions != 2 || f.TransmissionNumber != "0000001" {
			t.Fatalf("file = %+v", f)
		}
		wantStatus(t, tn.Do("POST", "/avtalegiro/account/"+account+"/export", nil), 204, "nothing more")
		content := tn.Do("GET", "/avtalegiro/file/"+f.ID, nil)
		wantStatus(t, content, 200, "download")
		if !strings.Contains(string(content.Body), "NY212149") || strings.Count(string(content.Body), "\n") != 10 {
			t.Fatalf("file:\n%s", content.Body)
		}

		// A sent claim: 202, then one cancellation record in the next file.
		wantStatus(t, tn.Do("POST", "/avtalegiro/claim/"+second+"/cancel", nil), 202, "cancel sent")
		wantStatus(t, tn.Do("POST", "/avtalegiro/claim/"+second+"/cancel", nil), 202, "cancel twice")
		r = tn.Do("POST", "/avtalegiro/account/"+account+"/export", nil)
		wantStatus(t, r, 200, "export cancellation")
		r.JSON(t, &f)
		body := string(tn.Do("GET", "/avtalegiro/file/"+f.ID, nil).Body)
		if strings.Count(body, "NY219330") != 1 || strings.Contains(body, "NY2121") || f.Transactions != 1 {
			t.Fatalf("cancellation file:\n%s", body)
		}
		wantStatus(t, tn.Do("POST", "/avtalegiro/account/"+account+"/export", nil), 204, "cancellation once")

		// Processed by the bank (its due date has come): 400 saying why.
		if r := tn.Do("POST", "/testclock/advance", map[string]any{"to": "2027-01-08T09:00:00Z"}); r.Status != 200 {
			t.Fatalf("advance: %d", r.Status)
		}
		r = tn.Do("POST", "/avtalegiro/claim/"+first+"/cancel", nil)
		wantField(t, r, "id")
		if !strings.Contains(string(r.Body), "processed") {
			t.Fatalf("reason: %s", r.Body)
		}
		wantStatus(t, tn.Do("POST", "/avtalegiro/claim/"+store.NewID()+"/cancel", nil), 404, "unknown claim")
		wantField(t, tn.Do("POST", "/avtalegiro/claim/x/cancel", nil), "id")
		wantField(t, tn.Do("GET", "/avtalegiro/claim/x", nil), "id")
		wantStatus(t, tn.Do("GET", "/avtalegiro/claim/"+store.NewID(), nil), 404, "unknown claim")
		wantField(t, tn.Do("GET", "/avtalegiro/mandate/x", nil), "id")
		wantField(t, tn.Do("POST", "/avtalegiro/claim", map[string]any{}), "mandateId")
		wantField(t, tn.Do("POST", "/avtalegiro/claim", map[string]any{"mandateId": mandate, "amount": 1, "dueDate": "2027-02-01", "extra": 1}), "extra")
		wantField(t, tn.Do("GET", "/avtalegiro/claim?TransactionId=x", nil), "TransactionId")

		// The account cannot go while mandates live.
		wantField(t, tn.Do("DELETE", "/avtalegiro/account/"+account, nil), "id")

		// Mandates: list, filters, delete.
		var ms []avtalegiro.AvtaleGiroMandate
		tn.Do("GET", "/avtalegiro/mandate?AccountId="+account, nil).JSON(t, &ms)
		if len(ms) != 2 {
			t.Fatalf("mandates: %d", len(ms))
		}
		tn.Do("GET", "/avtalegiro/mandate?KID=000567800001032", nil).JSON(t, &ms)
		if len(ms) != 1 || ms[0].ID != plain || ms[0].Notify || ms[0].Source != "Api" {
			t.Fatalf("by KID: %+v", ms)
		}
		wantStatus(t, tn.Do("GET", "/avtalegiro/mandate?AccountId="+store.NewID(), nil), 404, "unknown account filter")
		wantStatus(t, tn.Do("DELETE", "/avtalegiro/mandate/"+plain, nil), 204, "delete mandate")
		wantStatus(t, tn.Do("DELETE", "/avtalegiro/mandate/"+plain, nil), 204, "delete mandate twice")
		tn.Do("GET", "/avtalegiro/mandate", nil).JSON(t, &ms)
		if len(ms) != 1 {
			t.Fatalf("live mandates: %d", len(ms))
		}
		tn.Do("GET", "/avtalegiro/mandate?IncludeDeleted=true", nil).JSON(t, &ms)
		if len(ms) != 2 {
			t.Fatalf("with deleted: %d", len(ms))
		}

		stranger := e.NewTenant("stranger", true)
		for _, p := range []string{"/avtalegiro/claim/" + first, "/avtalegiro/mandate/" + mandate, "/avtalegiro/file/" + f.ID} {
			wantStatus(t, stranger.Do("GET", p, nil), 404, "cross-tenant "+p)
		}
		wantStatus(t, stranger.Do("POST", "/avtalegiro/claim/"+second+"/cancel", nil), 404, "cross-tenant cancel")
		wantStatus(t, stranger.Do("DELETE", "/avtalegiro/mandate/"+mandate, nil), 404, "cross-tenant delete")
		wantStatus(t, stranger.Do("POST", "/avtalegiro/account/"+account+"/export", nil), 404, "cross-tenant export")
		wantStatus(t, stranger.Do("GET", "/avtalegiro/claim?MandateId="+mandate, nil), 404, "cross-tenant filter")
		wantField(t, stranger.Do("POST", "/avtalegiro/claim", map[string]any{"mandateId": mandate, "amount": 1, "dueDate": "2027-02-01"}), "mandateId")
	})
}

func TestAvtaleGiroImportErrors(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		mandates, err := os.ReadFile("../avtalegiro/ocrgiro/testdata/mandates.txt")
		if err != nil {
			t.Fatal(err)
		}
		imp := func(b []byte) *apitest.Response {
			return tn.Do("POST", "/avtalegiro/import", map[string]any{"content": base64.StdEncoding.EncodeToString(b)})
		}
		// No account for the file's assignment account: 400, nothing kept.
		wantField(t, imp(mandates), "file")
		agSetup(t, e, tn, "https://bank.example")
		broken := []byte(strings.Replace(string(mandates), "NY21947000000021", "NY21947000000029", 1))
		r := imp(broken)
		if r.Status != 400 || !strings.Contains(string(r.Body), "line 4") {
			t.Fatalf("broken: %d %s", r.Status, r.Body)
		}
		r = imp(mandates)
		wantStatus(t, r, 200, "import")
		var res struct {
			Repeated        bool
			MandatesChanged int
			MandatesDeleted int
		}
		r.JSON(t, &res)
		// 000123400001012 exists (from agSetup) and wants notice as the file says; 000567800001032 is new.
		if res.Repeated || res.MandatesChanged != 1 || res.MandatesDeleted != 0 {
			t.Fatalf("import: %s", r.Body)
		}
		imp(mandates).JSON(t, &res)
		if !res.Repeated {
			t.Fatal("second import was not a repeat")
		}
		// The file as the body itself (streamed): the same rules.
		raw := func(b []byte, media string) *apitest.Response {
			return tn.Do("POST", "/avtalegiro/import", b, "Content-Type", media)
		}
		raw(mandates, "application/octet-stream").JSON(t, &res)
		if !res.Repeated {
			t.Fatal("the raw file again was not a repeat")
		}
		r = raw(broken, "text/plain; charset=iso-8859-1")
		if r.Status != 400 || !strings.Contains(string(r.Body), "line 4") {
			t.Fatalf("broken, raw: %d %s", r.Status, r.Body)
		}
		wantField(t, raw(nil, "application/octet-stream"), "file")
		wantField(t, tn.Do("POST", "/avtalegiro/import", map[string]any{"content": "%%%"}), "content")
		claims, _ := os.ReadFile("../avtalegiro/ocrgiro/testdata/claims.txt")
		wantField(t, imp(claims), "file")
		_ = time.Now
	})
}
