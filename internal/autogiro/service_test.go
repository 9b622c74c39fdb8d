package autogiro_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

const bankgiro = "54321096"

// env is a tenant with a Swedish organization, an Autogiro account and
// subscribers numbered 1001, 1002, …
type env struct {
	t       testing.TB
	st      *store.Store
	ctx     context.Context
	tenant  string
	org     string
	account string
	subs    map[int64]string
}

func newEnv(t testing.TB, st *store.Store, now time.Time) *env {
	t.Helper()
	ten, err := st.CreateTenant(context.Background(), "t-"+store.NewID(), true, now)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, ctx: tenancy.With(context.Background(), ten.ID), tenant: ten.ID, subs: map[int64]string{}}
	org, err := st.CreateOrganization(e.ctx, store.Organization{Name: "Nordavis AB", Country: "SE", Currency: "SEK",
		TimeZone: "Europe/Stockholm", PricesIncludeVAT: true, KIDAlgorithm: "MOD10"}, now)
	if err != nil {
		t.Fatal(err)
	}
	e.org = org.ID
	a, err := autogiro.CreateAccount(e.ctx, st, autogiro.AutogiroAccount{OrganizationID: org.ID, BankgiroCustomerNumber: "543210",
		BankgiroNumber: bankgiro, Name: "Autogiro"}, now)
	if err != nil {
		t.Fatal(err)
	}
	e.account = a.ID
	return e
}

func (e *env) subscriber(n int64) string {
	e.t.Helper()
	if id, ok := e.subs[n]; ok {
		return id
	}
	s, err := e.st.CreateSubscriber(e.ctx, store.Subscriber{SubscriberNumber: n, Name: fmt.Sprintf("Payer %d", n)}, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	e.subs[n] = s.ID
	return s.ID
}

func (e *env) mandate(n int64, clearing, account, payerID string, now time.Time) string {
	e.t.Helper()
	ba, err := autogiro.ParseBankAccount(clearing, account)
	if err != nil {
		e.t.Fatal(err)
	}
	id, err := autogiro.PayerID(payerID)
	if err != nil {
		e.t.Fatal(err)
	}
	m, err := autogiro.CreateMandate(e.ctx, e.st, autogiro.AutogiroMandate{AccountID: e.account, SubscriberID: e.subscriber(n),
		ClearingNumber: ba.Clearing, BankAccountNumber: ba.Number, PayerID: id}, now)
	if err != nil {
		e.t.Fatal(err)
	}
	return m.ID
}

func (e *env) payment(mandate, kind string, amount int64, date, ref string, now time.Time) string {
	e.t.Helper()
	tr, err := autogiro.CreateTransaction(e.ctx, e.st, autogiro.AutogiroTransaction{MandateID: mandate, Kind: kind, AmountMinor: amount,
		PaymentDate: date, Reference: ref}, now)
	if err != nil {
		e.t.Fatal(err)
	}
	return tr.ID
}

func (e *env) export(now time.Time) autogiro.ExportFile {
	e.t.Helper()
	f, err := autogiro.Export(e.ctx, e.st, e.org, now, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

// content reads a stored export file back.
func (e *env) content(fileID string) []byte {
	e.t.Helper()
	var b bytes.Buffer
	if err := autogiro.CopyExportFile(e.ctx, e.st, fileID, &b); err != nil {
		e.t.Fatal(err)
	}
	return b.Bytes()
}

// parseRecords reads a file Kadens wrote.
func parseRecords(t testing.TB, b []byte) []autogiro.Record {
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

func (e *env) importFile(b string, now time.Time) autogiro.ImportResult {
	e.t.Helper()
	res, err := autogiro.Import(e.ctx, e.st, strings.NewReader(b), now)
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// line builds an 80-character record from fields at positions.
func line(parts ...any) string {
	b := []byte(strings.Repeat(" ", 80))
	for i := 0; i < len(parts); i += 2 {
		copy(b[parts[i].(int)-1:], parts[i+1].(string))
	}
	return string(b)
}

// advice is a mandate advice confirming each payer with info/comment codes.
func advice(date string, rows ...[3]string) string {
	var b strings.Builder
	b.WriteString(line(1, "01AUTOGIRO", 25, date, 45, "AG-MEDAVI", 65, "543210", 71, "00"+bankgiro) + "\r\n")
	for _, r := range rows {
		b.WriteString(line(1, "73", 3, "00"+bankgiro, 13, fmt.Sprintf("%016s", r[0]), 62, r[1]+r[2], 66, date) + "\r\n")
	}
	b.WriteString(line(1, "09"+date+"9900", 15, fmt.Sprintf("%07d", len(rows))) + "\r\n")
	return b.String()
}

// TestGoldenExport: a fixed scenario exported on a fixed day equals the
// reviewed file byte for byte; a second export finds nothing; the file
// parses back.
func TestGoldenExport(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		d1 := at("2026-11-20T08:00:00Z")
		e := newEnv(t, st, d1)
		a := e.mandate(1001, "3300", "121212-1212", "19121212-1212", d1)
		b := e.mandate(1002, "6789", "12345679", "556123-4567", d1)
		c := e.mandate(1003, "5000", "1000004", "19811218-9876", d1)
		if f := e.export(d1); f.Counts.NewMandates != 3 {
			t.Fatalf("first export %+v", f.Counts)
		}
		res := e.importFile(advice("20261123", [3]string{"1001", "04", "32"}, [3]string{"1002", "04", "32"}, [3]string{"1003", "04", "32"}), d1)
		if res.MandatesActivated != 3 {
			t.Fatalf("advice: %+v", res)
		}
		d2 := at("2026-11-23T08:00:00Z")
		e.payment(a, autogiro.AutogiroDebit, 24900, "2026-12-01", "INV-1", d2)
		bDebit := e.payment(b, autogiro.AutogiroDebit, 9900, "2026-12-01", "INV-2", d2)
		if f := e.export(d2); f.Counts.Debits != 2 {
			t.Fatalf("second export %+v", f.Counts)
		}
		// The next day: cancel B's sent debit and C's mandate, new
		// mandates, a debit with Å/Ä/Ö and a refund.
		d3 := at("2026-11-24T09:30:00Z")
		if err := autogiro.CancelTransaction(e.ctx, st, bDebit, d3); err != nil {
			t.Fatal(err)
		}
		if err := autogiro.CancelMandate(e.ctx, st, c, d3); err != nil {
			t.Fatal(err)
		}
		e.mandate(1004, "8327-9", "912345600", "556123-4567", d3)
		e.mandate(1005, "9020", "1000018", "19121212-1212", d3)
		e.payment(a, autogiro.AutogiroDebit, 49900, "2026-12-24", "ÅRSAVGIFT ÄÖ", d3) // Christmas Eve: stays, Bankgirot moves it
		e.payment(a, autogiro.AutogiroRefund, 5000, "2026-11-24", "ÅTERBET-1", d3)    // today: moved to the first possible day
		f := e.export(d3)
		want := autogiro.Counts{NewMandates: 2, MandateCancellations: 1, Debits: 1, Refunds: 1, PaymentCancellations: 1}
		if f.Counts != want || f.DebitTotal != 49900 || f.RefundTotal != 5000 {
			t.Fatalf("third export %+v debit %d refund %d", f.Counts, f.DebitTotal, f.RefundTotal)
		}
		if f.FileName != "BFEP.IAGAG.K0543210.D261124.T103000" {
			t.Errorf("file name %s", f.FileName)
		}
		golden := filepath.Join("testdata", "golden-export.txt")
		if os.Getenv("KADENS_UPDATE_GOLDEN") != "" {
			if err := os.WriteFile(golden, e.content(f.ID), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		wantFile, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.content(f.ID); !bytes.Equal(got, wantFile) {
			t.Fatalf("export:\n%s\nwant:\n%s", got, wantFile)
		}
		stored, err := autogiro.StoredExportFile(e.ctx, st, f.ID)
		if err != nil || stored.Size != int64(len(wantFile)) || stored.FileName != f.FileName {
			t.Fatalf("stored file: %+v %v", stored, err)
		}
		if _, err := autogiro.Export(e.ctx, st, e.org, d3, nil); !isNothing(err) {
			t.Fatalf("export with nothing pending: %v", err)
		}
	})
}

func isNothing(err error) bool {
	var v validation.Errors
	return errors.As(err, &v) && strings.Contains(err.Error(), "nothing is pending")
}
