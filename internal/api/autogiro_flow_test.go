package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
)

// agLine builds an 80-character report record from fields at positions.
func agLine(parts ...any) string {
	b := []byte(strings.Repeat(" ", 80))
	for i := 0; i < len(parts); i += 2 {
		copy(b[parts[i].(int)-1:], parts[i+1].(string))
	}
	return string(b)
}

func agAdvice(date, payer, info, comment string) string {
	return strings.Join([]string{
		agLine(1, "01AUTOGIRO", 25, date, 45, "AG-MEDAVI", 65, "5432100054321096"),
		agLine(1, "73", 3, "0054321096", 13, fmt.Sprintf("%016s", payer), 62, info+comment, 66, date),
		agLine(1, "09"+date+"99000000001"),
	}, "\r\n") + "\r\n"
}

// agPaymentSpec reports each sent debit (TK82 of the export file) with status.
func agPaymentSpec(date string, debits []string, status []byte) string {
	rows := []string{agLine(1, "01AUTOGIRO", 25, date+"120000000001", 45, "BET. SPEC & STOPP TK", 65, "5432100054321096")}
	completed, total := 0, int64(0)
	for i, d := range debits {
		rows = append(rows, agLine(1, d[:69], 80, string(status[i])))
		if status[i] == '0' {
			completed++
			var amount int64
			fmt.Sscan(d[31:43], &amount)
			total += amount
		}
	}
	rows = append(rows, agLine(1, "09"+date+"9900", 15, "000000", 21, fmt.Sprintf("%012d", completed), 33, "000000000000000000000000000000000000"))
	return strings.Join(rows, "\r\n") + "\r\n"
}

// agRefundSpec is a payment specification with one TK17/TK77 pair: the
// payer's bank paid back debit (a TK82 line of an export) on refundDate
// with refund code.
func agRefundSpec(date, refundDate, debit, code string) string {
	amount := debit[31:43]
	rows := []string{
		agLine(1, "01AUTOGIRO", 25, date+"120000000001", 45, "BET. SPEC & STOPP TK", 65, "5432100054321096"),
		agLine(1, "17", 3, fmt.Sprintf("%035s", "33001212121212"), 38, refundDate, 46, "00001", 51, "000000"+amount, 72, "00000001"),
		agLine(1, "77"+debit[2:69], 70, refundDate+code),
		agLine(1, "09"+date+"9900", 15, "000000000000000000", 33, "000000000000000000", 51, "000001000000000001"),
	}
	return strings.Join(rows, "\r\n") + "\r\n"
}

// records returns the records of a file that start with tk.
func records(file []byte, tk string) []string {
	var out []string
	for _, l := range strings.Split(string(file), "\r\n") {
		if strings.HasPrefix(l, tk) {
			out = append(out, l)
		}
	}
	return out
}

// TestAutogiroBilling: an invoice of a subscription on an Autogiro agreement
// gets a debit (InvoiceIssued, as billing's hook calls it), the export
// sends it, the payment specification settles the invoice through the
// payment recording of POST /payment, importing it again changes nothing;
// crediting an invoice cancels its debit (InvoiceCredited); a mandate the
// payer cancels moves the subscription back to Invoice with
// PaymentAgreementDeleted.
func TestAutogiroBilling(t *testing.T) {
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		ctx := tenantCtx(tn)
		c := newAPICatalog(t, e, tn)
		org := create(t, tn, "/organization", map[string]any{"name": "Nordavis AB", "country": "SE", "currency": "SEK", "timeZone": "Europe/Stockholm"})
		pkg := create(t, tn, "/package", fmt.Sprintf(`{"Name": "Digital", "Currency": "SEK", "Price": 149.00,
			"products": [{"productId": %q}], "BillingPlans": [%q]}`, c.digital, c.monthly))
		account := create(t, tn, "/autogiro/account", map[string]any{"organizationId": org, "bankgiroCustomerNumber": "543210", "bankgiroNumber": "5432-1096"})
		sub := create(t, tn, "/subscriber", map[string]any{"name": "Åsa Öberg"})
		mandate := create(t, tn, "/autogiro/mandate", map[string]any{"accountId": account, "subscriberId": sub,
			"clearingNumber": "3300", "bankAccountNumber": "121212-1212", "payerId": "19121212-1212"})
		var mv struct{ PayerNumber, Status string }
		tn.Do("GET", "/autogiro/mandate/"+mandate, nil).JSON(t, &mv)

		// The reference check refuses a mandate that is not active yet.
		if err := autogiro.CheckReference(ctx, e.Store, tn.ID, mandate); err == nil || !strings.Contains(err.Error(), "active") {
			t.Fatalf("CheckReference of a created mandate: %v", err)
		}
		if err := autogiro.CheckReference(ctx, e.Store, tn.ID, "nope"); err == nil {
			t.Fatal("CheckReference of no mandate passed")
		}
		r := tn.Do("POST", "/autogiro/export/mandate/"+org, nil)
		var fv struct {
			ID       string
			FileName string
			Records  int
			Counts   autogiro.Counts
		}
		r.JSON(t, &fv)
		if r.Status != 200 || fv.Counts.NewMandates != 1 || fv.Records != 2 {
			t.Fatalf("export: %d %s", r.Status, r.Body)
		}
		dl := tn.Do("GET", "/autogiro/export/file/"+fv.ID, nil)
		if dl.Status != 200 || dl.Header.Get("Content-Type") != "application/octet-stream" ||
			!strings.Contains(dl.Header.Get("Content-Disposition"), fv.FileName) || len(dl.Body) != 2*82 {
			t.Fatalf("download: %d %v %q", dl.Status, dl.Header, dl.Body)
		}
		if r := tn.Do("POST", "/autogiro/export/mandate/"+org, nil); r.Status != 400 || !strings.Contains(string(r.Body), "nothing is pending") {
			t.Fatalf("second export: %d %s", r.Status, r.Body)
		}
		if r := e.NewTenant("tenant-b", true).Do("GET", "/autogiro/export/file/"+fv.ID, nil); r.Status != 404 {
			t.Fatalf("other tenant downloads: %d", r.Status)
		}
		// Bankgirot confirms the mandate.
		today := tenantClock(t, e, tn).In(autogiro.Stockholm).Format("20060102")
		var res autogiro.ImportResult
		r = tn.Do("POST", "/autogiro/import", agAdvice(today, mv.PayerNumber, "04", "32"))
		r.JSON(t, &res)
		if r.Status != 200 || res.MandatesActivated != 1 || res.Kind != autogiro.KindMandateAdvice {
			t.Fatalf("import advice: %d %s", r.Status, r.Body)
		}
		if err := autogiro.CheckReference(ctx, e.Store, tn.ID, mandate); err != nil {
			t.Fatalf("CheckReference of an active mandate: %v", err)
		}
		// The agreement references the active mandate; its method is DirectDebit.
		now := tenantClock(t, e, tn)
		agID := create(t, tn, "/paymentagreement", map[string]any{"subscriberId": sub, "providerType": "autogiro", "providerAgreementReference": mandate})
		var agv struct{ ProviderType, PaymentMethod string }
		tn.Do("GET", "/paymentagreement/"+agID, nil).JSON(t, &agv)
		if agv.ProviderType != "Autogiro" || agv.PaymentMethod != "DirectDebit" {
			t.Fatalf("agreement: %+v", agv)
		}
		order := create(t, tn, "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": sub, "paymentAgreementId": agID})
		completeOrder(t, tn, order)
		invoices, _, err := e.Store.ListInvoices(ctx, store.DocumentFilter{SubscriberID: sub}, store.Page{Limit: 10})
		if err != nil || len(invoices) != 1 {
			t.Fatalf("%d invoices, %v", len(invoices), err)
		}
		inv := invoices[0]
		var txs []struct {
			ID, Status, PaymentDate, Reference string
			InvoiceID                          *string
			PaymentID                          *string
			Amount                             float64
		}
		// The outbox consumer of InvoiceIssued creates the debit; the hook
		// run again (a redelivered event) changes nothing.
		eventually(t, "the debit of the issued invoice", func() bool {
			tn.Do("GET", "/autogiro/transaction?MandateId="+mandate, nil).JSON(t, &txs)
			return len(txs) > 0
		})
		if err := autogiro.InvoiceIssued(ctx, e.Store, tn.ID, inv.ID, now); err != nil {
			t.Fatal(err)
		}
		tn.Do("GET", "/autogiro/transaction?MandateId="+mandate, nil).JSON(t, &txs)
		due, _ := time.Parse(time.DateOnly, inv.DueDate)
		wantDate := autogiro.PaymentDate(due, autogiro.Today(now)).Format(time.DateOnly)
		if len(txs) != 1 || txs[0].InvoiceID == nil || *txs[0].InvoiceID != inv.ID || txs[0].Amount != 149 ||
			txs[0].PaymentDate != wantDate || txs[0].Reference != inv.KID {
			t.Fatalf("debits of the invoice: %+v (want date %s)", txs, wantDate)
		}
		r = tn.Do("POST", "/autogiro/export/mandate/"+org, nil)
		r.JSON(t, &fv)
		if fv.Counts.Debits != 1 {
			t.Fatalf("payment export: %s", r.Body)
		}
		file := tn.Do("GET", "/autogiro/export/file/"+fv.ID, nil).Body
		spec := agPaymentSpec(today, records(file, "82"), []byte{'0'})
		r = tn.Do("POST", "/autogiro/import", spec)
		r.JSON(t, &res)
		if r.Status != 200 || res.PaymentsCompleted != 1 || res.AlreadyImported {
			t.Fatalf("import payment specification: %d %s", r.Status, r.Body)
		}
		var iv struct{ Status string }
		tn.Do("GET", "/invoice/"+inv.ID, nil).JSON(t, &iv)
		if iv.Status != "Paid" {
			t.Fatalf("invoice after the debit: %s", iv.Status)
		}
		var pays []struct{ ID, Status, Provider, ProviderReference string }
		tn.Do("GET", "/payment?invoiceId="+inv.ID, nil).JSON(t, &pays)
		if len(pays) != 1 || pays[0].Provider != "Autogiro" || pays[0].ProviderReference != txs[0].ID || pays[0].Status != "Succeeded" {
			t.Fatalf("payments: %+v", pays)
		}
		// The same file again changes nothing.
		r = tn.Do("POST", "/autogiro/import", spec)
		r.JSON(t, &res)
		if !res.AlreadyImported || res.PaymentsCompleted != 1 {
			t.Fatalf("repeated import: %s", r.Body)
		}
		tn.Do("GET", "/payment?invoiceId="+inv.ID, nil).JSON(t, &pays)
		if len(pays) != 1 {
			t.Fatalf("a repeated import recorded %d payments", len(pays))
		}
		// The payer's bank pays the debit back (TK77, refund code 02): the
		// debit stays Completed and is marked, the amount is charged to the
		// subscriber's account again, and the ledger stays balanced.
		var acc struct {
			Balance, OutstandingCharges catalog.Amount // exact minor units, not a float
		}
		tn.Do("GET", "/subscriberaccount/"+inv.SubscriberAccountID, nil).JSON(t, &acc)
		if acc.Balance.Minor != 0 {
			t.Fatalf("balance after the debit: %v", acc.Balance)
		}
		refund := agRefundSpec(today, "20261201", records(file, "82")[0], "02")
		r = tn.Do("POST", "/autogiro/import", refund)
		r.JSON(t, &res)
		if r.Status != 200 || res.RefundsByPayerBank != 1 || res.PaymentsCompleted != 0 {
			t.Fatalf("import TK77: %d %s", r.Status, r.Body)
		}
		var tv struct {
			Status, PayerRefundCode string
			PayerRefundDate         *string
			RefundChargeID          *string
		}
		tn.Do("GET", "/autogiro/transaction/"+txs[0].ID, nil).JSON(t, &tv)
		if tv.Status != "Completed" || tv.PayerRefundCode != "02" || tv.PayerRefundDate == nil || *tv.PayerRefundDate != "2026-12-01" || tv.RefundChargeID == nil {
			t.Fatalf("transaction after TK77: %+v", tv)
		}
		tn.Do("GET", "/subscriberaccount/"+inv.SubscriberAccountID, nil).JSON(t, &acc)
		if acc.Balance.Minor != 14900 || acc.OutstandingCharges.Minor != 14900 {
			t.Fatalf("account after TK77: %+v", acc)
		}
		ledgerClean(t, e, tn)
		// The same refund again, as the same file and in another report:
		// one charge.
		r = tn.Do("POST", "/autogiro/import", refund)
		r.JSON(t, &res)
		if !res.AlreadyImported || res.RefundsByPayerBank != 1 {
			t.Fatalf("repeated TK77 file: %s", r.Body)
		}
		r = tn.Do("POST", "/autogiro/import", strings.Replace(refund, "120000000001", "130000000002", 1))
		r.JSON(t, &res)
		if r.Status != 200 || res.RefundsByPayerBank != 0 || res.Unchanged != 1 {
			t.Fatalf("TK77 in a second report: %d %s", r.Status, r.Body)
		}
		tn.Do("GET", "/subscriberaccount/"+inv.SubscriberAccountID, nil).JSON(t, &acc)
		if acc.Balance.Minor != 14900 {
			t.Fatalf("account after the repeated TK77: %+v", acc)
		}
		ledgerClean(t, e, tn)
		// Another tenant's import of the same report knows no such bankgiro.
		if r := e.NewTenant("tenant-c", true).Do("POST", "/autogiro/import", refund); r.Status != 400 || !strings.Contains(string(r.Body), "no Autogiro account") {
			t.Fatalf("other tenant's TK77: %d %s", r.Status, r.Body)
		}

		// A malformed file names its line and changes nothing.
		bad := strings.Replace(spec, "BET. SPEC", "BET.XSPEC", 1)
		if r := tn.Do("POST", "/autogiro/import", bad); r.Status != 400 || !strings.Contains(string(r.Body), "line 1") {
			t.Fatalf("malformed import: %d %s", r.Status, r.Body)
		}

		// A second invoice, credited before its debit went out.
		order2 := create(t, tn, "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": sub, "paymentAgreementId": agID})
		completeOrder(t, tn, order2)
		invoices, _, _ = e.Store.ListInvoices(ctx, store.DocumentFilter{SubscriberID: sub}, store.Page{Limit: 10})
		var inv2 string
		for _, i := range invoices {
			if i.ID != inv.ID {
				inv2 = i.ID
			}
		}
		eventually(t, "the debit of the second invoice", func() bool {
			tn.Do("GET", "/autogiro/transaction?MandateId="+mandate, nil).JSON(t, &txs)
			for _, x := range txs {
				if x.InvoiceID != nil && *x.InvoiceID == inv2 {
					return true
				}
			}
			return false
		})
		if r := tn.Do("POST", "/invoice/"+inv2+"/credit", map[string]any{"reason": "duplicate"}); r.Status != http.StatusCreated {
			t.Fatalf("credit: %d %s", r.Status, r.Body)
		}
		// The consumer of CreditNoteIssued cancels the debit; again, nothing more.
		eventually(t, "the debit of the credited invoice cancelled", func() bool {
			tn.Do("GET", "/autogiro/transaction?MandateId="+mandate+"&IsCancelled=true", nil).JSON(t, &txs)
			return len(txs) > 0
		})
		if err := autogiro.InvoiceCredited(ctx, e.Store, tn.ID, inv2, now); err != nil {
			t.Fatal(err)
		}
		tn.Do("GET", "/autogiro/transaction?MandateId="+mandate+"&IsCancelled=true", nil).JSON(t, &txs)
		if len(txs) != 1 || txs[0].InvoiceID == nil || *txs[0].InvoiceID != inv2 || txs[0].Status != "Cancelled" {
			t.Fatalf("debit of the credited invoice: %+v", txs)
		}

		// The payer cancels the mandate in their bank: the subscription
		// goes back to Invoice, with PaymentAgreementDeleted.
		r = tn.Do("POST", "/autogiro/import", agAdvice(today, mv.PayerNumber, "46", "02"))
		r.JSON(t, &res)
		if r.Status != 200 || res.MandatesCancelled != 1 {
			t.Fatalf("import payer cancellation: %d %s", r.Status, r.Body)
		}
		var m struct{ Status, StatusCode, CancelledBy string }
		tn.Do("GET", "/autogiro/mandate/"+mandate, nil).JSON(t, &m)
		if m.Status != "Cancelled" || m.StatusCode != "46/02" || m.CancelledBy != "Payer" {
			t.Fatalf("mandate: %+v", m)
		}
		got, err := e.Store.PaymentAgreement(ctx, agID)
		if err != nil || got.DeletedAt == nil {
			t.Fatalf("agreement after the mandate ended: %+v %v", got, err)
		}
		subs, _, _ := e.Store.ListSubscriptions(ctx, store.SubscriptionFilter{SubscriberID: sub}, store.Page{Limit: 10})
		for _, s := range subs {
			if s.PaymentAgreementID == nil || *s.PaymentAgreementID == agID {
				t.Errorf("subscription %s still on the Autogiro agreement", s.ID)
			}
		}
		if evs := eventsOf(t, e, tn, store.EventPaymentAgreementDeleted); len(evs) != 1 {
			t.Errorf("%d PaymentAgreementDeleted events", len(evs))
		}
		// Called again (as a retried hook), it changes nothing.
		if err := autogiro.MandateEnded(ctx, e.Store, tn.ID, mandate, now); err != nil {
			t.Fatal(err)
		}
		if evs := eventsOf(t, e, tn, store.EventPaymentAgreementDeleted); len(evs) != 1 {
			t.Errorf("%d PaymentAgreementDeleted events after a repeat", len(evs))
		}
	})
}
