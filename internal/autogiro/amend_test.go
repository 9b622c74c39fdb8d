package autogiro_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// cancellationsReport builds a MAKULERING/ÄNDRING report (fact sheet §3.4)
// of debits: each row is code, payment date, payer, amount, reference,
// new date (or ""), comment code.
func cancellationsReport(date string, rows ...[7]string) string {
	var b strings.Builder
	b.WriteString(line(1, "01AUTOGIRO", 25, date, 45, "MAKULERING/\xc4NDRING", 65, "543210", 71, "00"+bankgiro) + "\r\n")
	var total int64
	for _, r := range rows {
		var amount int64
		fmt.Sscan(r[3], &amount)
		total += amount
		ref, refMark := "0000000000000000", "00000000"
		if r[4] != "" {
			ref, refMark = fmt.Sprintf("%-16s", r[4]), "REFERENS"
		}
		newDate := "00000000"
		if r[5] != "" {
			newDate = r[5]
		}
		b.WriteString(line(1, r[0], 3, r[1], 11, fmt.Sprintf("%016s", r[2]), 27, "82", 29, fmt.Sprintf("%012d", amount),
			41, refMark, 49, newDate, 57, ref, 73, r[6]) + "\r\n")
	}
	b.WriteString(line(1, "09"+date+"9900", 29, "000000000000000000", 47, fmt.Sprintf("%06d0000%012d000000000000", len(rows), total)) + "\r\n")
	return b.String()
}

// paymentSpecOf reports debits (payer, date, amount, reference, status)
// in a payment specification, optionally with one TK77 refund row
// (original date, payer, amount, reference, refund date, code).
func paymentSpecOf(stamp string, debits [][5]string, refunds [][6]string) string {
	var b strings.Builder
	b.WriteString(line(1, "01AUTOGIRO", 25, stamp, 45, "BET. SPEC & STOPP TK", 65, "543210", 71, "00"+bankgiro) + "\r\n")
	completed := 0
	for _, d := range debits {
		var amount int64
		fmt.Sscan(d[2], &amount)
		b.WriteString(line(1, "82"+d[1]+"0", 16, fmt.Sprintf("%016s", d[0]), 32, fmt.Sprintf("%012d", amount), 44, "00"+bankgiro, 54, d[3], 80, d[4]) + "\r\n")
		if d[4] == "0" {
			completed++
		}
	}
	for _, r := range refunds {
		var amount int64
		fmt.Sscan(r[2], &amount)
		b.WriteString(line(1, "17", 3, fmt.Sprintf("%035s", "12345678"), 38, r[4], 46, "00001", 51, fmt.Sprintf("%018d", amount), 72, "00000001") + "\r\n")
		b.WriteString(line(1, "77"+r[0]+"0", 16, fmt.Sprintf("%016s", r[1]), 32, fmt.Sprintf("%012d", amount), 44, "00"+bankgiro, 54, r[3], 70, r[4]+r[5]) + "\r\n")
	}
	b.WriteString(line(1, "09"+stamp[:8]+"9900", 15, fmt.Sprintf("000000%012d000000000000000000%06d%012d", completed, len(refunds), len(refunds))) + "\r\n")
	return b.String()
}

// TestDateChangesAndPayerRefunds: a date change Bankgirot confirmed
// (TK29/18) moves the sent debit; one it refused (TK26/15) is a note;
// the moved debit completes on its new date; the payer's bank paying it
// back (TK77) marks it once, whatever file repeats it, and one matching
// nothing is a note. A debit of no invoice is not charged to anyone.
func TestDateChangesAndPayerRefunds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		d1 := at("2026-11-20T08:00:00Z")
		e := newEnv(t, st, d1)
		m := e.mandate(1001, "3300", "121212-1212", "19121212-1212", d1)
		e.export(d1)
		e.importFile(advice("20261123", [3]string{"1001", "04", "32"}), d1)
		d2 := at("2026-11-23T08:00:00Z")
		moved := e.payment(m, autogiro.AutogiroDebit, 24900, "2026-12-01", "INV-1", d2)
		kept := e.payment(m, autogiro.AutogiroDebit, 9900, "2026-12-01", "INV-2", d2)
		e.export(d2)

		report := cancellationsReport("20261125",
			[7]string{"29", "20261201", "1001", "24900", "INV-1", "20261215", "18"},
			[7]string{"26", "20261201", "1001", "9900", "INV-2", "20261215", "15"})
		res := e.importFile(report, d2)
		if res.PaymentsRedated != 1 || res.PaymentsCancelled != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "comment code 15") {
			t.Fatalf("date changes: %+v", res)
		}
		tr, err := autogiro.Transaction(e.ctx, st, moved)
		if err != nil || tr.PaymentDate != "2026-12-15" || tr.Status != autogiro.AutogiroSent || tr.StatusCode != "29/18" {
			t.Fatalf("moved debit: %+v %v", tr, err)
		}
		if tr, _ := autogiro.Transaction(e.ctx, st, kept); tr.PaymentDate != "2026-12-01" || tr.Status != autogiro.AutogiroSent {
			t.Fatalf("debit Bankgirot did not move: %+v", tr)
		}
		if again := e.importFile(report, d2); !again.AlreadyImported {
			t.Fatalf("repeated date changes: %+v", again)
		}
		// The same change in another report: unchanged.
		res = e.importFile(strings.Replace(report, "20261125", "20261126", 2), d2)
		if res.PaymentsRedated != 0 || res.Unchanged != 1 {
			t.Fatalf("date change reported again: %+v", res)
		}

		res = e.importFile(paymentSpecOf("20261215120000000001", [][5]string{{"1001", "20261215", "24900", "INV-1", "0"}}, nil), d2)
		if res.PaymentsCompleted != 1 {
			t.Fatalf("payment specification: %+v", res)
		}
		refund := paymentSpecOf("20261220120000000002", nil, [][6]string{
			{"20261215", "1001", "24900", "INV-1", "20261219", "02"},
			{"20261215", "1001", "100", "INV-9", "20261219", "01"}})
		res = e.importFile(refund, d2)
		if res.RefundsByPayerBank != 1 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "matches no completed debit") {
			t.Fatalf("refunds: %+v", res)
		}
		tr, _ = autogiro.Transaction(e.ctx, st, moved)
		if tr.Status != autogiro.AutogiroCompleted || tr.PayerRefundDate == nil || *tr.PayerRefundDate != "2026-12-19" ||
			tr.PayerRefundCode != "02" || tr.RefundChargeID != nil {
			t.Fatalf("refunded debit: %+v", tr)
		}
		if left, err := autogiro.RefundsToBook(e.ctx, st, 10); err != nil || len(left) != 0 {
			t.Fatalf("a debit of no invoice waits for a charge: %v %v", left, err)
		}
		if again := e.importFile(refund, d2); !again.AlreadyImported {
			t.Fatalf("repeated refund file: %+v", again)
		}
		res = e.importFile(strings.Replace(refund, "20261220120000000002", "20261221120000000003", 1), d2)
		if res.RefundsByPayerBank != 0 || res.Unchanged != 1 {
			t.Fatalf("refund reported again: %+v", res)
		}
	})
}
