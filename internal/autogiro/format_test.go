package autogiro

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// readAll parses a whole file, with line numbers cleared so records built in
// memory compare equal.
func readAll(t testing.TB, b []byte) []Record {
	t.Helper()
	var out []Record
	r := NewReader(bytes.NewReader(b))
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		reflect.ValueOf(rec).Elem().FieldByName("Pos").Set(reflect.ValueOf(Pos{}))
		out = append(out, rec)
	}
}

const bg = "54321096"

// TestWriterMatchesExample writes the fact sheet's example submission and
// compares it byte for byte.
func TestWriterMatchesExample(t *testing.T) {
	want, err := os.ReadFile("testdata/submission.txt")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, Opening{Written: day("2026-11-23"), CustomerNumber: "543210", Bankgiro: bg})
	must(t, w.Mandate(MandateRecord{TK: TKMandate, Bankgiro: bg, PayerNumber: "1001", Clearing: "3300", Account: "1212121212", PayerID: "191212121212"}))
	must(t, w.Mandate(MandateRecord{TK: TKMandate, Bankgiro: bg, PayerNumber: "1002", Clearing: "6789", Account: "12345679", PayerID: "005561234567"}))
	must(t, w.Payment(PaymentRecord{TK: TKDebit, Date: day("2026-12-01"), PayerNumber: "987", Amount: 24900, Bankgiro: bg, Reference: "INV-2026-000123"}))
	must(t, w.Payment(PaymentRecord{TK: TKPayout, Date: day("2026-12-01"), PayerNumber: "988", Amount: 5000, Bankgiro: bg, Reference: "CREDIT-000045"}))
	must(t, w.Flush())
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("written:\n%s\nwant:\n%s", buf.Bytes(), want)
	}
	if w.Counts[TKMandate] != 2 || w.DebitTotal != 24900 || w.PayoutTotal != 5000 {
		t.Fatalf("counts %v totals %d %d", w.Counts, w.DebitTotal, w.PayoutTotal)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// goldenScenario is every kind of record Kadens writes, with Å/Ä/Ö.
func goldenScenario(w *Writer) error {
	steps := []func() error{
		func() error {
			return w.Mandate(MandateRecord{TK: TKMandate, Bankgiro: bg, PayerNumber: "1001", Clearing: "3300", Account: "1212121212", PayerID: "191212121212"})
		},
		func() error {
			return w.Mandate(MandateRecord{TK: TKMandate, Bankgiro: bg, PayerNumber: "1002", Clearing: "6789", Account: "12345679", PayerID: "005561234567"})
		},
		func() error { return w.Mandate(MandateRecord{TK: TKCancelMandate, Bankgiro: bg, PayerNumber: "950"}) },
		func() error {
			return w.Payment(PaymentRecord{TK: TKDebit, Date: day("2026-12-01"), PayerNumber: "1001", Amount: 24900, Bankgiro: bg, Reference: "ÅRSKORT-2026"})
		},
		func() error {
			return w.Payment(PaymentRecord{TK: TKDebit, Date: day("2026-12-31"), Period: 5, Repetitions: 12, PayerNumber: "1002", Amount: 9900, Bankgiro: bg, Reference: "MÅNAD ÄRENDE Ö"})
		},
		func() error {
			return w.Payment(PaymentRecord{TK: TKPayout, Date: day("2026-12-02"), PayerNumber: "988", Amount: 5000, Bankgiro: bg, Reference: "CREDIT-000045"})
		},
		func() error {
			return w.Amendment(AmendmentRecord{TK: TKCancelOne, Bankgiro: bg, PayerNumber: "987", Date: day("2026-12-01"), Amount: 24900, PaymentTK: TKDebit, Reference: "INV-2026-000123"})
		},
		func() error {
			return w.Amendment(AmendmentRecord{TK: TKMoveOne, Bankgiro: bg, PayerNumber: "987", Date: day("2026-12-01"), Amount: 100, PaymentTK: TKDebit, NewDate: day("2026-12-15")})
		},
		func() error { return w.Amendment(AmendmentRecord{TK: TKCancelAll, Bankgiro: bg, PayerNumber: "950"}) },
		func() error {
			return w.Amendment(AmendmentRecord{TK: TKMoveAll, Bankgiro: bg, NewDate: day("2026-12-15")})
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return w.Flush()
}

func TestGoldenSubmission(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Opening{Written: day("2026-11-23"), CustomerNumber: "543210", Bankgiro: bg})
	must(t, goldenScenario(w))
	golden := filepath.Join("testdata", "golden-submission.txt")
	if *update {
		must(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("written:\n%s\nwant:\n%s", buf.Bytes(), want)
	}
	lines := bytes.SplitAfter(buf.Bytes(), []byte("\r\n"))
	lines = lines[:len(lines)-1]
	if len(lines) != 13 {
		t.Fatalf("%d records, want 13 (3 TK01 + 10)", len(lines))
	}
	for i, l := range lines {
		if len(l) != 82 || !bytes.HasSuffix(l, []byte("\r\n")) {
			t.Errorf("record %d is %d bytes with its line end, want 82: %q", i+1, len(l), l)
		}
	}
	if !bytes.Contains(buf.Bytes(), []byte{0xC5, 'R', 'S', 'K'}) || bytes.Contains(buf.Bytes(), []byte("Å")) {
		t.Error("Å is not written as the single Latin-1 byte 0xC5")
	}
	// It parses back to the records written.
	recs := readAll(t, buf.Bytes())
	var again bytes.Buffer
	w2 := NewWriter(&again, *recs[0].(*Opening))
	for _, r := range recs {
		switch r := r.(type) {
		case *MandateRecord:
			must(t, w2.Mandate(*r))
		case *PaymentRecord:
			must(t, w2.Payment(*r))
		case *AmendmentRecord:
			must(t, w2.Amendment(*r))
		}
	}
	must(t, w2.Flush())
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatalf("parsed and written again:\n%s", again.Bytes())
	}
	if p := recs[6].(*PaymentRecord); p.Reference != "MÅNAD ÄRENDE Ö" || p.Period != 5 || p.Repetitions != 12 {
		t.Fatalf("parsed %+v", p)
	}
}

func TestExampleMandateAdvice(t *testing.T) {
	b, err := os.ReadFile("testdata/mandate-advice.txt")
	must(t, err)
	for name, in := range map[string][]byte{
		"as sent":        b,
		"LF, trimmed":    trimmed(b, "\n"),
		"CRLF, trimmed":  trimmed(b, "\r\n"),
		"no final break": bytes.TrimRight(b, "\r\n"),
	} {
		t.Run(name, func(t *testing.T) {
			recs := readAll(t, in)
			if len(recs) != 6 {
				t.Fatalf("%d records", len(recs))
			}
			want := []MandateAdvice{
				{Bankgiro: bg, PayerNumber: "1001", Clearing: "3300", Account: "1212121212", PayerID: "191212121212", Info: "04", Comment: "32", Date: day("2026-11-25")},
				{Bankgiro: bg, PayerNumber: "1002", Clearing: "6789", Account: "12345679", PayerID: "005561234567", Info: "04", Comment: "23", Date: day("2026-11-25")},
				{Bankgiro: bg, PayerNumber: "950", Info: "03", Comment: "33", Date: day("2026-11-25")},
				{Bankgiro: bg, PayerNumber: "951", Clearing: "3300", Account: "8112189876", PayerID: "198112189876", Info: "46", Comment: "02", Date: day("2026-11-24")},
			}
			for i, w := range want {
				if got := *recs[i+1].(*MandateAdvice); !reflect.DeepEqual(got, w) {
					t.Errorf("TK73 %d:\n got %+v\nwant %+v", i+1, got, w)
				}
			}
			if o := recs[0].(*ReportOpening); o.Kind != KindMandateAdvice || o.Bankgiro != bg || o.CustomerNumber != "543210" {
				t.Errorf("opening %+v", o)
			}
		})
	}
}

func trimmed(b []byte, eol string) []byte {
	var out []byte
	for _, l := range strings.Split(strings.TrimRight(string(b), "\r\n"), "\r\n") {
		out = append(out, strings.TrimRight(l, " ")+eol...)
	}
	return out
}

// pad builds a report line from fields at positions.
func pad(parts ...any) string {
	b := []byte(strings.Repeat(" ", 80))
	for i := 0; i < len(parts); i += 2 {
		copy(b[parts[i].(int)-1:], parts[i+1].(string))
	}
	return string(b)
}

func latin(s string) string {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r))
	}
	return string(b)
}

// Report files of every kind, built by position from the fact sheet.
var (
	paymentSpec = strings.Join([]string{
		pad(1, "01AUTOGIRO", 25, "20261201123456000001", 45, "BET. SPEC & STOPP TK", 65, "5432100054321096"),
		pad(1, "15", 3, "00000000000000000000000000012345678", 38, "20261201", 46, "00001", 51, "000000000000024900", 72, "00000001"),
		pad(1, "82202612010    00000000000010010000000249000054321096INV-1", 80, "0"),
		pad(1, "82202612010    00000000000010020000000099000054321096INV-2", 80, "1"),
		pad(1, "16", 3, "00000000000000000000000000012345678", 38, "20261202", 46, "00002", 51, "000000000000005000", 72, "00000001"),
		pad(1, "32202612020    00000000000009880000000050000054321096CREDIT-45", 80, "0"),
		pad(1, "17", 3, "00000000000000000000000000012345678", 38, "20261203", 46, "00003", 51, "000000000000001000", 72, "00000001"),
		pad(1, "77202611010    00000000000010010000000010000054321096INV-0", 70, "20261203", 78, "02"),
		pad(1, "09202612019900", 15, "000001000000000001000001000000000001000001000000000001"),
	}, "\r\n") + "\r\n"
	rejected = strings.Join([]string{
		pad(1, "01AUTOGIRO", 25, "20261126", 45, "AVVISADE BET UPPDR", 65, "5432100054321096"),
		pad(1, "82202612010   0000000000001001000000024900INV-1", 59, "01"),
		pad(1, "32202612020   0000000000000988000000005000CREDIT-45", 59, "09"),
		pad(1, "092026112699000000010000000050000000010000000249"+"00"),
	}, "\r\n") + "\r\n"
	cancellations = strings.Join([]string{
		pad(1, "01AUTOGIRO", 25, "20261126", 45, latin("MAKULERING/ÄNDRING"), 65, "5432100054321096"),
		pad(1, "2520261201000000000000098782000000024900REFERENS00000000INV-2026-000123", 73, "12"),
		pad(1, "2920261201000000000000098782000000000100000000002026121500000000000000000", 73, "18"),
		pad(1, "09202611269900", 29, "000000000000000000000002", 53, "0000000000025000000000000000"),
	}, "\r\n") + "\r\n"
	// Date changes of every code Bankgirot answers (TK26–29): all of a
	// payer's payments, those of one date, one payer's, one payment.
	dateChanges = strings.Join([]string{
		pad(1, "01AUTOGIRO", 25, "20261126", 45, latin("MAKULERING/ÄNDRING"), 65, "5432100054321096"),
		pad(1, "2620261201000000000000100182000000024900000000002026121000000000000000000", 73, "14"),
		pad(1, "2720261201000000000000100282000000009900000000002026121100000000000000000", 73, "18"),
		pad(1, "2820261201000000000000100332000000005000000000002026121200000000000000000", 73, "06"),
		pad(1, "2920261201000000000000100482000000000100REFERENS20261213INV-4", 73, "15"),
		pad(1, "09202611269900", 29, "000000005000000001000003", 53, "0000000000034900000000000000"),
	}, "\r\n") + "\r\n"
	emandates = strings.Join([]string{
		pad(1, "512026112699000054321096AG-EMEDGIV"),
		pad(1, "52", 3, "0054321096", 13, "0000000000001003", 29, "3300001212121212", 45, "191212121212", 62, "0"),
		pad(1, "53Please start on the 1st"),
		pad(1, "54Tolvan Tolvansson", 39, "Storgatan 1"),
		pad(1, "5611122STOCKHOLM"),
		pad(1, "592026112699000000004"),
	}, "\r\n") + "\r\n"
)

func TestReports(t *testing.T) {
	recs := readAll(t, []byte(paymentSpec))
	p := recs[2].(*PaymentResult)
	if !p.Completed() || p.PayerNumber != "1001" || p.Amount != 24900 || p.Reference != "INV-1" {
		t.Errorf("completed debit %+v", p)
	}
	if f := recs[3].(*PaymentResult); f.Completed() || f.Status != '1' {
		t.Errorf("failed debit %+v", f)
	}
	if r := recs[7].(*Refund); r.Code != "02" || r.RefundDate != day("2026-12-03") || r.Amount != 1000 {
		t.Errorf("refund %+v", r)
	}

	recs = readAll(t, []byte(rejected))
	if r := recs[1].(*RejectedPayment); r.PayerNumber != "1001" || r.Amount != 24900 || r.Comment != "01" || r.Reference != "INV-1" {
		t.Errorf("rejected %+v", r)
	}

	recs = readAll(t, []byte(cancellations))
	if c := recs[1].(*CancellationResult); !c.Cancelled() || c.PayerNumber != "987" || c.Reference != "INV-2026-000123" || c.Amount != 24900 {
		t.Errorf("cancellation %+v", c)
	}
	if c := recs[2].(*CancellationResult); c.Cancelled() || c.NewDate != day("2026-12-15") {
		t.Errorf("date change %+v", c)
	}
	if o := recs[0].(*ReportOpening); o.Kind != KindCancellations {
		t.Errorf("opening %+v", o)
	}

	recs = readAll(t, []byte(dateChanges))
	for i, want := range []CancellationResult{
		{TK: 26, PayerNumber: "1001", PaymentTK: 82, Amount: 24900, NewDate: day("2026-12-10"), Comment: "14"},
		{TK: 27, PayerNumber: "1002", PaymentTK: 82, Amount: 9900, NewDate: day("2026-12-11"), Comment: "18"},
		{TK: 28, PayerNumber: "1003", PaymentTK: 32, Amount: 5000, NewDate: day("2026-12-12"), Comment: "06"},
		{TK: 29, PayerNumber: "1004", PaymentTK: 82, Amount: 100, NewDate: day("2026-12-13"), Reference: "INV-4", Comment: "15"},
	} {
		c := *recs[i+1].(*CancellationResult)
		want.Pos, want.Date = c.Pos, day("2026-12-01")
		if !reflect.DeepEqual(c, want) {
			t.Errorf("TK%d:\n got %+v\nwant %+v", want.TK, c, want)
		}
	}

	recs = readAll(t, []byte(emandates))
	e := recs[1].(*EMandate)
	if e.PayerNumber != "1003" || e.Clearing != "3300" || e.Account != "1212121212" || e.Town != "STOCKHOLM" || len(e.Address) != 2 || e.Info != "Please start on the 1st" {
		t.Errorf("e-mandate %+v", e)
	}
	if len(recs) != 3 {
		t.Errorf("%d records", len(recs))
	}
}

func TestReportErrors(t *testing.T) {
	advice, _ := os.ReadFile("testdata/mandate-advice.txt")
	lines := strings.Split(string(advice), "\r\n")
	with := func(i int, l string) string {
		c := append([]string(nil), lines...)
		c[i] = l
		return strings.Join(c, "\r\n")
	}
	for _, tc := range []struct {
		name, in string
		line     int
		reason   string
	}{
		{"empty", "", 1, "empty"},
		{"not autogiro", "hello\r\n", 1, "transaction code"},
		{"no opening", lines[1], 1, "before the section's opening"},
		{"truncated", strings.Join(lines[:3], "\r\n"), 4, "incomplete"},
		{"bad count", with(5, "092026112599000000003"), 6, "says 3"},
		{"bad digit", with(2, strings.Replace(lines[2], "6789", "67X9", 1)), 3, "bank account"},
		{"bad date", with(1, strings.Replace(lines[1], "20261125", "20261341", 1)), 2, "not a date"},
		{"other bankgiro", with(1, strings.Replace(lines[1], "0054321096", "0054321097", 1)), 2, "not the section's"},
		{"too long", with(1, lines[1]+"X"), 2, "81 characters"},
		{"unknown report", with(0, strings.Replace(lines[0], "AG-MEDAVI", "AG-OTHER ", 1)), 1, "unknown report"},
		{"old layout", "0120261125AUTOGIRO9900\r\n", 1, "old-layout"},
		{"old medavi", "012026112599000054321096AG-MEDAVI\r\n", 1, "old-layout"},
		{"wrong record", with(1, "82"+lines[1][2:]), 2, "does not belong"},
		{"stray after closing", string(advice) + lines[1], 7, "before the section's opening"},
		{"mixed submission", "0120261123AUTOGIRO                                            5432100054321096\r\n" +
			"04005432109600000000000010013300001212121212191212121212\r\n" +
			"82202612010    00000000000009870000000249000054321096INV\r\n", 3, "own TK01"},
		{"refund of another bankgiro", strings.Replace(paymentSpec, "00000000000010010000000010000054321096INV-0", "00000000000010010000000010000054321097INV-0", 1), 8, "not the section's"},
		{"refund without date", strings.Replace(paymentSpec, "INV-0           20261203", "INV-0           2026120X", 1), 8, "refund date"},
		{"date change total", strings.Replace(dateChanges, "0000000000034900", "0000000000034901", 1), 6, "total of debits"},
		{"old spec status", strings.Replace(paymentSpec, pad(1, "82202612010    00000000000010010000000249000054321096INV-1", 80, "0"), pad(1, "82202612010    00000000000010010000000249000054321096INV-1"), 1), 3, "old-layout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.in))
			var err error
			for err == nil {
				_, err = r.Next()
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a ParseError", err)
			}
			if pe.Line != tc.line || !strings.Contains(pe.Reason, tc.reason) {
				t.Fatalf("error %q, want line %d and %q", err, tc.line, tc.reason)
			}
		})
	}
}

func TestWriterRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(w *Writer) error
		want  string
	}{
		{"payments before mandates", func(w *Writer) error {
			if err := w.Payment(PaymentRecord{TK: TKDebit, Date: day("2026-12-01"), PayerNumber: "1", Amount: 1, Bankgiro: bg}); err != nil {
				return err
			}
			return w.Mandate(MandateRecord{TK: TKCancelMandate, Bankgiro: bg, PayerNumber: "1"})
		}, "in that order"},
		{"other bankgiro", func(w *Writer) error {
			return w.Mandate(MandateRecord{TK: TKCancelMandate, Bankgiro: "9999999", PayerNumber: "1"})
		}, "in a file for"},
		{"not Latin-1", func(w *Writer) error {
			return w.Payment(PaymentRecord{TK: TKDebit, Date: day("2026-12-01"), PayerNumber: "1", Amount: 1, Bankgiro: bg, Reference: "€"})
		}, "ISO-8859-1"},
		{"zero amount", func(w *Writer) error {
			return w.Payment(PaymentRecord{TK: TKDebit, Date: day("2026-12-01"), PayerNumber: "1", Bankgiro: bg})
		}, "not positive"},
		{"too large", func(w *Writer) error {
			return w.Payment(PaymentRecord{TK: TKDebit, Date: day("2026-12-01"), PayerNumber: "1", Amount: 1e12, Bankgiro: bg})
		}, "longer than 12"},
		{"long reference", func(w *Writer) error {
			return w.Payment(PaymentRecord{TK: TKDebit, Date: day("2026-12-01"), PayerNumber: "1", Amount: 1, Bankgiro: bg, Reference: "12345678901234567"})
		}, "longer than 16"},
		{"repetitions once", func(w *Writer) error {
			return w.Payment(PaymentRecord{TK: TKDebit, Date: day("2026-12-01"), Repetitions: 3, PayerNumber: "1", Amount: 1, Bankgiro: bg})
		}, "blank for a one-off"},
		{"genast periodic", func(w *Writer) error {
			return w.Payment(PaymentRecord{TK: TKDebit, Immediately: true, Period: 1, PayerNumber: "1", Amount: 1, Bankgiro: bg})
		}, "GENAST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWriter(io.Discard, Opening{Written: day("2026-11-23"), CustomerNumber: "1", Bankgiro: bg})
			if err := tc.write(w); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" = invalid
	}{
		{"5432-1096", "54321096"}, {"5050-1055", "50501055"}, {"5432-1097", ""}, {"123", ""}, {"991-2346", "9912346"},
	} {
		got, err := Bankgiro(tc.in)
		if (err == nil) != (tc.want != "") || got != tc.want {
			t.Errorf("Bankgiro(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"19121212-1212", "191212121212"}, {"191212121213", ""}, {"121212-1212", ""},
		{"556123-4567", "005561234567"}, {"005561234567", "005561234567"}, {"556123-4568", ""},
		{"19121312-1212", ""}, {"19810272-9876", ""}, {"abc", ""},
	} {
		got, err := PayerID(tc.in)
		if (err == nil) != (tc.want != "") || got != tc.want {
			t.Errorf("PayerID(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ clearing, account, want, field string }{
		{"3300", "121212-1212", "3300-1212121212", ""},    // Nordea personkonto: Luhn
		{"3300", "121212-1213", "", "accountNumber"},      //
		{"6789", "12345679", "6789-012345679", ""},        // Handelsbanken: MOD11, 9 digits
		{"6789", "12345678", "", "accountNumber"},         //
		{"5000", "1000004", "5000-1000004", ""},           // SEB, type 1 comment 1
		{"5000", "1000005", "", "accountNumber"},          //
		{"9020", "1000018", "9020-1000018", ""},           // Länsförsäkringar 9020, type 1 comment 2
		{"8327-9", "9 123 456 00", "83279-912345600", ""}, // Swedbank with clearing check digit
		{"8327-8", "912345600", "", "clearingNumber"},     //
		{"8327", "912345601", "", "accountNumber"},        //
		{"0100", "1234567", "", "clearingNumber"},         // no bank
		{"12", "1", "", "clearingNumber"},                 //
		{"5000", "12345678", "", "accountNumber"},         // too long for type 1
	} {
		got, err := ParseBankAccount(tc.clearing, tc.account)
		var ae *AccountError
		switch {
		case tc.want != "" && (err != nil || got.String() != tc.want):
			t.Errorf("ParseBankAccount(%q, %q) = %v, %v; want %s", tc.clearing, tc.account, got, err, tc.want)
		case tc.want == "" && (!errors.As(err, &ae) || ae.Field != tc.field):
			t.Errorf("ParseBankAccount(%q, %q) = %v, %v; want an error on %s", tc.clearing, tc.account, got, err, tc.field)
		}
	}
}

// TestPaymentDate: a debit is sent for its due date moved to a Swedish
// banking day, and never sooner than LeadDays banking days after today.
func TestPaymentDate(t *testing.T) {
	for _, tc := range []struct{ due, today, want string }{
		{"2026-12-15", "2026-12-01", "2026-12-15"},
		{"2026-12-24", "2026-12-01", "2026-12-28"}, // Christmas: the next banking day
		{"2026-12-01", "2026-12-01", "2026-12-03"}, // too late: two banking days ahead
		{"2026-12-22", "2026-12-22", "2026-12-28"}, // over Christmas
		{"2026-06-18", "2026-06-17", "2026-06-22"}, // over midsummer
	} {
		if got := PaymentDate(day(tc.due), day(tc.today)); !got.Equal(day(tc.want)) {
			t.Errorf("PaymentDate(%s, %s) = %s, want %s", tc.due, tc.today, got.Format(time.DateOnly), tc.want)
		}
	}
}
