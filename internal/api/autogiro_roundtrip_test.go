package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/ledger"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/bankday"
	"github.com/kadens/kadens/internal/store"
)

// rejections are the mandate advice codes that refuse a new mandate: one
// of each kind.
var rejections = [][2]string{{"04", "09"}, {"04", "10"}, {"04", "20"}, {"04", "21"}, {"04", "23"}, {"04", "29"},
	{"04", "30"}, {"42", "03"}, {"42", "05"}}

// payerEnds are the advice codes of mandates ended by others.
var payerEnds = [][2]string{{"46", "02"}, {"43", "07"}, {"44", "98"}, {"10", "  "}}

func parseFile(t *testing.T, b []byte) []autogiro.Record {
	t.Helper()
	var out []autogiro.Record
	r := autogiro.NewReader(bytes.NewReader(b))
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

// fileContent reads a stored export file back.
func fileContent(t *testing.T, st *store.Store, ctx context.Context, id string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := autogiro.CopyExportFile(ctx, st, id, &b); err != nil {
		t.Error(err)
	}
	return b.Bytes()
}

// TestAutogiroRoundTrip: 1,000 mandates and 5,000 transactions (ten of
// them debits of real invoices; 300 and 1,500 under the race detector) → export → the reports Bankgirot would
// send back (confirmations, one rejection of each kind, payer
// cancellations, completed, failed, retried and rejected debits) → import →
// every state, invoice and the ledger check right; importing every report
// again changes nothing.
func TestAutogiroRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("5,000 transactions")
	}
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		tn := e.Tenant
		ctx := tenantCtx(tn)
		c := newAPICatalog(t, e, tn)
		org := create(t, tn, "/organization", map[string]any{"name": "Nordavis AB", "country": "SE", "currency": "SEK", "timeZone": "Europe/Stockholm"})
		pkg := create(t, tn, "/package", fmt.Sprintf(`{"Name": "Digital", "Currency": "SEK", "Price": 149.00,
			"products": [{"productId": %q}], "BillingPlans": [%q]}`, c.digital, c.monthly))
		account := create(t, tn, "/autogiro/account", map[string]any{"organizationId": org, "bankgiroCustomerNumber": "543210", "bankgiroNumber": "5432-1096"})
		now := tenantClock(t, e, tn)
		today := autogiro.Today(now).Format("20060102")

		nMandates, nTx, nInvoices := 1000, 5000, 10
		if underRace {
			nMandates, nTx = 300, 1500
		}
		mandates := make([]string, nMandates)
		subs := make([]string, nMandates)
		for i := range nMandates {
			s, err := e.Store.CreateSubscriber(ctx, store.Subscriber{Name: fmt.Sprintf("Payer %d", i)}, now)
			if err != nil {
				t.Fatal(err)
			}
			subs[i] = s.ID
			m, err := autogiro.CreateMandate(ctx, e.Store, autogiro.AutogiroMandate{AccountID: account, SubscriberID: s.ID,
				PayerNumber: fmt.Sprint(100000 + i), ClearingNumber: "3300", BankAccountNumber: "1212121212", PayerID: "191212121212"}, now)
			if err != nil {
				t.Fatal(err)
			}
			mandates[i] = m.ID
		}
		// Concurrent exports: each mandate goes out once.
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			files [][]byte
		)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f, err := autogiro.Export(ctx, e.Store, org, now, nil)
				if err != nil && !strings.Contains(err.Error(), "nothing is pending") && !errors.Is(err, store.ErrConflict) {
					t.Error(err)
				}
				if err == nil {
					mu.Lock()
					files = append(files, fileContent(t, e.Store, ctx, f.ID))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		seen := map[string]int{}
		for _, f := range files {
			for _, r := range parseFile(t, f) {
				if m, ok := r.(*autogiro.MandateRecord); ok {
					seen[m.PayerNumber]++
				}
			}
		}
		if len(seen) != nMandates {
			t.Fatalf("%d mandates exported, want %d", len(seen), nMandates)
		}
		for p, n := range seen {
			if n != 1 {
				t.Fatalf("payer %s exported %d times", p, n)
			}
		}

		// Mandate advice: all active but one rejection of each kind.
		var adv []string
		adv = append(adv, agLine(1, "01AUTOGIRO", 25, today, 45, "AG-MEDAVI", 65, "5432100054321096"))
		for i := range nMandates {
			code := [2]string{"04", "32"}
			if i < len(rejections) {
				code = rejections[i]
			}
			adv = append(adv, agLine(1, "73", 3, "0054321096", 13, fmt.Sprintf("%016d", 100000+i), 62, code[0]+code[1], 66, today))
		}
		adv = append(adv, agLine(1, "09"+today+"9900", 15, fmt.Sprintf("%07d", nMandates)))
		advice := strings.Join(adv, "\r\n") + "\r\n"
		var res autogiro.ImportResult
		tn.Do("POST", "/autogiro/import", advice).JSON(t, &res)
		if res.MandatesActivated != nMandates-len(rejections) || res.MandatesRejected != len(rejections) {
			t.Fatalf("advice: %+v", res)
		}

		// Invoices on Autogiro agreements of the first active payers.
		active := mandates[len(rejections):]
		activeSubs := subs[len(rejections):]
		invoiceIDs := make([]string, nInvoices)
		for i := range nInvoices {
			ag, _, err := e.Store.CreatePaymentAgreement(ctx, store.PaymentAgreement{SubscriberID: activeSubs[i], ProviderType: store.ProviderAutogiro,
				ProviderAgreementReference: active[i], PaymentMethod: "Autogiro"}, now)
			if err != nil {
				t.Fatal(err)
			}
			o := create(t, tn, "/order", map[string]any{"organizationId": org, "templatePackageId": pkg, "subscriberId": activeSubs[i], "paymentAgreementId": ag.ID})
			completeOrder(t, tn, o)
			invs, _, err := e.Store.ListInvoices(ctx, store.DocumentFilter{SubscriberID: activeSubs[i]}, store.Page{Limit: 2})
			if err != nil || len(invs) != 1 {
				t.Fatalf("invoices %v %v", invs, err)
			}
			invoiceIDs[i] = invs[0].ID
			if err := autogiro.InvoiceIssued(ctx, e.Store, tn.ID, invs[0].ID, now); err != nil {
				t.Fatal(err)
			}
		}
		date := bankday.Sweden.After(autogiro.Today(now), 5).Format(time.DateOnly)
		for i := nInvoices; i < nTx; i++ {
			kind := autogiro.AutogiroDebit
			if i%100 == 99 {
				kind = autogiro.AutogiroRefund
			}
			if _, err := autogiro.CreateTransaction(ctx, e.Store, autogiro.AutogiroTransaction{MandateID: active[i%len(active)], Kind: kind,
				AmountMinor: int64(1000 + i), PaymentDate: date, Reference: fmt.Sprintf("T%d", i)}, now); err != nil {
				t.Fatal(err)
			}
		}
		f, err := autogiro.Export(ctx, e.Store, org, now, nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.Counts.Debits+f.Counts.Refunds != nTx {
			t.Fatalf("payment export %+v", f.Counts)
		}

		// The payment specification: completed, except invoice 1 (no
		// funds), every 97th failed (status 2), every 89th retried (9);
		// every 83rd debit is rejected instead (and left out of the spec).
		var spec, rej []string
		spec = append(spec, agLine(1, "01AUTOGIRO", 25, today+"120000000001", 45, "BET. SPEC & STOPP TK", 65, "5432100054321096"))
		rej = append(rej, agLine(1, "01AUTOGIRO", 25, today, 45, "AVVISADE BET UPPDR", 65, "5432100054321096"))
		// The invoices' debits are completed but invoice 1's, wherever the
		// file puts them, so the invoices' states below do not depend on
		// the file's size or order.
		invoiceRefs := map[string]bool{}
		for _, id := range invoiceIDs {
			invoiceRefs[refOfInvoice(t, e, tn, id)] = true
		}
		var completed, failed, retried, rejected, rejTotal, paidOut int64
		n := 0
		for _, r := range parseFile(t, fileContent(t, e.Store, ctx, f.ID)) {
			p, ok := r.(*autogiro.PaymentRecord)
			if !ok {
				continue
			}
			n++
			ofInvoice := invoiceRefs[strings.TrimSpace(p.Reference)]
			rec := fmt.Sprintf("%02d%s0    %016s%012d%010s%-16s", p.TK, p.Date.Format("20060102"), p.PayerNumber, p.Amount, p.Bankgiro, p.Reference)
			if p.TK == autogiro.TKDebit && n%83 == 0 && !ofInvoice {
				rej = append(rej, agLine(1, fmt.Sprintf("82%s0   %016s%012d%-16s01", p.Date.Format("20060102"), p.PayerNumber, p.Amount, p.Reference)))
				rejected++
				rejTotal += p.Amount
				continue
			}
			status := "0"
			switch {
			case p.TK == autogiro.TKPayout:
				paidOut++
			case p.Reference == refOfInvoice(t, e, tn, invoiceIDs[1]):
				status, failed = "1", failed+1
			case ofInvoice:
				completed++
			case n%97 == 0:
				status, failed = "2", failed+1
			case n%89 == 0:
				status, retried = "9", retried+1
			default:
				completed++
			}
			spec = append(spec, agLine(1, rec, 80, status))
		}
		spec = append(spec, agLine(1, "09"+today+"9900", 15, "000000", 21, fmt.Sprintf("%012d", completed), 33, "000000",
			39, fmt.Sprintf("%012d", paidOut), 51, "000000", 57, "000000000000"))
		rej = append(rej, agLine(1, "09"+today+"9900", 15, "000000000000000000", 33, fmt.Sprintf("%06d%012d", rejected, rejTotal)))
		specFile := strings.Join(spec, "\r\n") + "\r\n"
		rejFile := strings.Join(rej, "\n") + "\n" // LF and stripped blanks are fine
		rejFile = strings.ReplaceAll(rejFile, strings.Repeat(" ", 20)+"\n", "\n")

		r := tn.Do("POST", "/autogiro/import", specFile)
		r.JSON(t, &res)
		if r.Status != 200 || int64(res.PaymentsCompleted) != completed+paidOut || int64(res.PaymentsFailed) != failed ||
			int64(res.PaymentsRetrying) != retried || len(res.Notes) != 0 {
			t.Fatalf("payment specification: %d %s (want %d completed, %d failed, %d retried)", r.Status, r.Body, completed+paidOut, failed, retried)
		}
		r = tn.Do("POST", "/autogiro/import", rejFile)
		r.JSON(t, &res)
		if r.Status != 200 || int64(res.PaymentsFailed) != rejected {
			t.Fatalf("rejected payments: %d %s", r.Status, r.Body)
		}
		// A payer cancels four mandates.
		adv = adv[:1]
		for i, code := range payerEnds {
			adv = append(adv, agLine(1, "73", 3, "0054321096", 13, fmt.Sprintf("%016d", 100000+nMandates-1-i), 62, code[0]+code[1], 66, today))
		}
		adv = append(adv, agLine(1, "09"+today+"9900", 15, fmt.Sprintf("%07d", len(payerEnds))))
		ends := strings.Join(adv, "\r\n") + "\r\n"
		r = tn.Do("POST", "/autogiro/import", ends)
		r.JSON(t, &res)
		if r.Status != 200 || res.MandatesCancelled != len(payerEnds) {
			t.Fatalf("payer cancellations: %+v", res)
		}

		check := func() {
			t.Helper()
			count := map[string]int{}
			page := store.Page{Limit: 1000}
			for {
				list, next, err := autogiro.ListTransactions(ctx, e.Store, autogiro.AutogiroTransactionFilter{}, page)
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range list {
					count[x.Status]++
				}
				if next == "" {
					break
				}
				page.After = next
			}
			// Retried debits stay Sent; the mandates payers ended cancel
			// theirs if still open.
			if int64(count["Completed"]) != completed+paidOut || int64(count["Failed"]) != failed+rejected ||
				count["Completed"]+count["Failed"]+count["Sent"]+count["Cancelled"] != nTx || int64(count["Sent"]+count["Cancelled"]) != retried {
				t.Fatalf("transaction states %v", count)
			}
			ms, _, err := autogiro.ListMandates(ctx, e.Store, autogiro.AutogiroMandateFilter{IncludeCancelled: true, IncludeRejected: true}, store.Page{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			mc := map[string]int{}
			for _, m := range ms {
				mc[m.Status]++
			}
			if mc["Active"] != nMandates-len(rejections)-len(payerEnds) || mc["Rejected"] != len(rejections) || mc["Cancelled"] != len(payerEnds) {
				t.Fatalf("mandate states %v", mc)
			}
			for i, id := range invoiceIDs {
				var iv struct{ Status string }
				tn.Do("GET", "/invoice/"+id, nil).JSON(t, &iv)
				want := "Paid"
				if i == 1 {
					want = "Issued"
				}
				if iv.Status != want {
					t.Errorf("invoice %d: %s, want %s", i, iv.Status, want)
				}
			}
			var pays []struct{ Status string }
			tn.Do("GET", "/payment?provider=Autogiro", nil).JSON(t, &pays)
			if len(pays) != nInvoices {
				t.Errorf("%d Autogiro payments, want %d", len(pays), nInvoices)
			}
			rep, err := ledger.Check(ctx, e.Store, ledger.Options{TenantID: tn.ID})
			if err != nil || !rep.Clean() {
				t.Fatalf("ledger: %v %+v", err, rep.Problems)
			}
		}
		check()
		for _, file := range []string{advice, specFile, rejFile, ends} {
			tn.Do("POST", "/autogiro/import", file).JSON(t, &res)
			if !res.AlreadyImported {
				t.Fatalf("a repeated import was applied: %+v", res)
			}
		}
		check()
	})
}

// refOfInvoice is the reference of an invoice's debit.
func refOfInvoice(t *testing.T, e *apitest.Env, tn apitest.Tenant, invoiceID string) string {
	t.Helper()
	d, err := autogiro.InvoiceDebit(tenantCtx(tn), e.Store, invoiceID)
	if err != nil {
		t.Fatal(err)
	}
	return d.Reference
}
