// Package autogiro reads and writes Bankgirot's Autogiro files (the new
// layout, "ny fillayout"): the submission files a payee sends (mandates,
// debit and payout orders, cancellations and date changes) and every report
// that comes back (mandate advice, payment specification, rejected
// payments, cancellations and changes, internet-bank mandates). It also
// validates the identifiers the files carry (validate.go) and knows
// Bankgirot's banking days (bankday.go); those parts are pure, and files are
// streamed record by record, never read whole. The wing's records and
// their SQL (records.go, sql.go, sql_files.go) run on the store's query
// kit; export.go, import.go and billing.go compose them: the export
// endpoint and command, report import, and the hooks billing calls
// (docs/AUTOGIRO.md).
//
// The layout is described in docs/AUTOGIRO.md; positions below are 1-based
// and inclusive as in Bankgirot's manual.
package autogiro

import (
	"fmt"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// RecordLen is the length of every record, without its CRLF.
const RecordLen = 80

// Codes of the records (transaktionskoder) Kadens writes.
const (
	TKOpening        = 1
	TKCancelMandate  = 3
	TKMandate        = 4
	TKChangePayer    = 5
	TKPayout         = 32
	TKDebit          = 82
	TKCancelAll      = 23 // every payment of a payer
	TKCancelDate     = 24 // a payer's payments on one date
	TKCancelOne      = 25 // one payment
	TKMoveAll        = 26
	TKMoveDate       = 27
	TKMovePayerDate  = 28
	TKMoveOne        = 29
	TKMandateAdvice  = 73
	TKClosing        = 9
	TKEMandateOpen   = 51
	TKEMandate       = 52
	TKEMandateClose  = 59
	TKDeposit        = 15
	TKWithdrawal     = 16
	TKRefundWithdraw = 17
	TKRefund         = 77
)

// Opening is the TK01 that starts each section of a submission file.
type Opening struct {
	Pos
	Written        time.Time // the date the file was written
	CustomerNumber string    // payee's customer number at Bankgirot, ≤ 6 digits
	Bankgiro       string    // payee's bankgiro number, digits
}

// MandateRecord is a TK04 (new mandate, or the answer to an internet-bank
// mandate), TK03 (cancel a mandate) or TK05 (change the payer number).
type MandateRecord struct {
	Pos
	TK          int
	Bankgiro    string
	PayerNumber string
	// TK04 of a new mandate on a bank account: the account and the payer's
	// 12-digit ID (personnummer YYYYMMDDNNNN or 00 + organisationsnummer).
	Clearing, Account string
	PayerID           string
	Reject            bool   // TK04 "AV": reject an internet-bank mandate
	NewPayerNumber    string // TK05
}

// PaymentRecord is a TK82 debit order or a TK32 payout (refund) order.
type PaymentRecord struct {
	Pos
	TK          int
	Date        time.Time // zero with Immediately
	Immediately bool      // GENAST: the next possible banking day
	Period      int       // 0 once; 1–8 self-renewing, see docs/AUTOGIRO.md
	Repetitions int       // 0 = blank: once (period 0) or until cancelled
	PayerNumber string
	Amount      int64 // öre, > 0
	Bankgiro    string
	Reference   string // ≤ 16 Latin-1 characters, left-aligned
}

// AmendmentRecord is one of TK23–TK29: cancel payments or change their
// date. Which fields a code carries is in amendmentFields.
type AmendmentRecord struct {
	Pos
	TK          int
	Bankgiro    string
	PayerNumber string
	Date        time.Time // the payment date given (TK24, 25, 27, 28, 29)
	Amount      int64     // TK25, 29
	PaymentTK   int       // 82 or 32 (TK25, 29)
	NewDate     time.Time // TK26–29
	Reference   string    // optional (TK25, 29)
}

// amendmentFields says which of payer, date, amount+code, new date and
// reference each amendment code carries.
var amendmentFields = map[int]struct{ payer, date, amount, newDate bool }{
	TKCancelAll:     {payer: true},
	TKCancelDate:    {payer: true, date: true},
	TKCancelOne:     {payer: true, date: true, amount: true},
	TKMoveAll:       {newDate: true},
	TKMoveDate:      {date: true, newDate: true},
	TKMovePayerDate: {payer: true, date: true, newDate: true},
	TKMoveOne:       {payer: true, date: true, amount: true, newDate: true},
}

// Pos is where a parsed record was in its file (0 for records built in
// memory).
type Pos struct{ Line int }

// LineNumber returns the 1-based line the record was read from.
func (p Pos) LineNumber() int { return p.Line }

// Record is any record the Reader returns.
type Record interface{ LineNumber() int }

// record builds one 80-character record in Latin-1.
type record struct {
	b   [RecordLen + 2]byte
	err error
}

func (r *record) reset(tk int) {
	for i := range r.b[:RecordLen] {
		r.b[i] = ' '
	}
	r.b[RecordLen], r.b[RecordLen+1] = '\r', '\n'
	r.err = nil
	r.num(1, 2, "transaction code", int64(tk))
}

func (r *record) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// digits writes a numeric field from a digit string: right-aligned,
// zero-filled.
func (r *record) digits(from, to int, name, d string) {
	n := to - from + 1
	if len(d) > n {
		r.fail("%s %q is longer than %d digits", name, d, n)
		return
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			r.fail("%s %q is not digits", name, d)
			return
		}
	}
	f := r.b[from-1 : to]
	for i := range f {
		f[i] = '0'
	}
	copy(f[n-len(d):], d)
}

func (r *record) num(from, to int, name string, v int64) {
	if v < 0 {
		r.fail("%s %d is negative", name, v)
		return
	}
	n := to - from + 1
	f := r.b[from-1 : to]
	for i := n - 1; i >= 0; i-- {
		f[i] = byte('0' + v%10)
		v /= 10
	}
	if v != 0 {
		r.fail("%s is longer than %d digits", name, n)
	}
}

func (r *record) text(from, to int, name, s string) {
	f := r.b[from-1 : to]
	i := 0
	for _, c := range s {
		if i == len(f) {
			r.fail("%s %q is longer than %d characters", name, s, len(f))
			return
		}
		b, ok := latin1(c)
		if !ok {
			r.fail("%s %q: %q cannot be written in ISO-8859-1", name, s, c)
			return
		}
		f[i] = b
		i++
	}
}

func (r *record) str(from, to int, s string) { copy(r.b[from-1:to], s) }

func (r *record) date(from, to int, name string, t time.Time) {
	if t.IsZero() {
		r.fail("%s is missing", name)
		return
	}
	if t.Year() < 1000 || t.Year() > 9999 {
		r.fail("%s %s is out of range", name, t.Format(time.DateOnly))
		return
	}
	r.str(from, to, t.Format("20060102"))
}

// latin1 encodes one character to ISO-8859-1, refusing control characters
// (which have no place in a record).
func latin1(c rune) (byte, bool) {
	if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == utf8.RuneError {
		return 0, false
	}
	return charmap.ISO8859_1.EncodeRune(c)
}

// Reference checks a payment reference before it is stored: at most 16
// characters, each one ISO-8859-1 can write.
func Reference(s string) error {
	if utf8.RuneCountInString(s) > 16 {
		return fmt.Errorf("is longer than 16 characters")
	}
	for _, c := range s {
		if _, ok := latin1(c); !ok {
			return fmt.Errorf("%q cannot be written in an Autogiro file (ISO-8859-1, no control characters)", c)
		}
	}
	return nil
}

func (o Opening) encode(r *record) {
	r.reset(TKOpening)
	r.date(3, 10, "file date", o.Written)
	r.str(11, 18, "AUTOGIRO")
	r.digits(63, 68, "customer number", o.CustomerNumber)
	r.digits(69, 78, "bankgiro", o.Bankgiro)
}

func (m MandateRecord) encode(r *record) {
	r.reset(m.TK)
	r.digits(3, 12, "bankgiro", m.Bankgiro)
	r.digits(13, 28, "payer number", m.PayerNumber)
	if m.PayerNumber == "" {
		r.fail("payer number is missing")
	}
	switch m.TK {
	case TKMandate:
		if m.Account != "" {
			r.digits(29, 32, "clearing number", m.Clearing)
			r.digits(33, 44, "account number", m.Account)
		}
		if m.PayerID != "" {
			r.digits(45, 56, "payer ID", m.PayerID)
		}
		if m.Reject {
			r.str(77, 78, "AV")
		}
	case TKCancelMandate:
	case TKChangePayer:
		r.digits(29, 38, "bankgiro", m.Bankgiro)
		r.digits(39, 54, "new payer number", m.NewPayerNumber)
	default:
		r.fail("TK%02d is not a mandate record", m.TK)
	}
}

func (p PaymentRecord) encode(r *record) {
	r.reset(p.TK)
	if p.TK != TKDebit && p.TK != TKPayout {
		r.fail("TK%02d is not a payment record", p.TK)
	}
	switch {
	case p.Immediately && p.Period != 0:
		r.fail("GENAST is allowed with period code 0 only")
	case p.Immediately:
		r.str(3, 10, "GENAST")
	default:
		r.date(3, 10, "payment date", p.Date)
	}
	if p.Period < 0 || p.Period > 8 {
		r.fail("period code %d is not 0–8", p.Period)
	}
	r.num(11, 11, "period code", int64(p.Period))
	switch {
	case p.Repetitions < 0 || p.Repetitions > 999:
		r.fail("repetitions %d is not 1–999", p.Repetitions)
	case p.Repetitions > 0 && p.Period == 0:
		r.fail("repetitions are blank for a one-off payment (period 0)")
	case p.Repetitions > 0:
		r.num(12, 14, "repetitions", int64(p.Repetitions))
	}
	r.digits(16, 31, "payer number", p.PayerNumber)
	if p.Amount <= 0 {
		r.fail("amount %d öre is not positive", p.Amount)
	}
	r.num(32, 43, "amount", p.Amount)
	r.digits(44, 53, "bankgiro", p.Bankgiro)
	r.text(54, 69, "reference", p.Reference)
}

func (a AmendmentRecord) encode(r *record) {
	r.reset(a.TK)
	f, ok := amendmentFields[a.TK]
	if !ok {
		r.fail("TK%02d is not an amendment record", a.TK)
		return
	}
	r.digits(3, 12, "bankgiro", a.Bankgiro)
	if f.payer {
		r.digits(13, 28, "payer number", a.PayerNumber)
	}
	if f.date {
		r.date(29, 36, "payment date", a.Date)
	}
	if f.amount {
		if a.Amount <= 0 {
			r.fail("amount %d öre is not positive", a.Amount)
		}
		r.num(37, 48, "amount", a.Amount)
		if a.PaymentTK != TKDebit && a.PaymentTK != TKPayout {
			r.fail("payment code %d is not 82 or 32", a.PaymentTK)
		}
		r.num(49, 50, "payment code", int64(a.PaymentTK))
		r.text(59, 74, "reference", a.Reference)
	}
	if f.newDate {
		r.date(51, 58, "new payment date", a.NewDate)
	}
}
