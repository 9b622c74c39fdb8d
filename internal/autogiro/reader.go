package autogiro

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/text/encoding/charmap"
)

// Kinds of file section the Reader knows.
const (
	KindSubmission    = "submission"             // a file to Bankgirot (Kadens' own)
	KindMandateAdvice = "mandate advice"         // AG-MEDAVI
	KindPaymentSpec   = "payment specification"  // BET. SPEC & STOPP TK
	KindRejected      = "rejected payments"      // AVVISADE BET UPPDR
	KindCancellations = "cancellations/changes"  // MAKULERING/ÄNDRING
	KindEMandates     = "internet-bank mandates" // AG-EMEDGIV
)

// reportContent maps positions 45–64 of a new-layout report TK01 to its kind.
var reportContent = map[string]string{
	"AG-MEDAVI":            KindMandateAdvice,
	"BET. SPEC & STOPP TK": KindPaymentSpec,
	"AVVISADE BET UPPDR":   KindRejected,
	"MAKULERING/ÄNDRING":   KindCancellations,
}

// ReportOpening is the TK01 (or TK51) that starts a report section.
type ReportOpening struct {
	Pos
	Kind           string
	Date           time.Time
	Timestamp      string // the payment specification's 20 digits
	CustomerNumber string
	Bankgiro       string
}

// MandateAdvice is a TK73: what became of a mandate.
type MandateAdvice struct {
	Pos
	Bankgiro          string
	PayerNumber       string
	Clearing, Account string // only for some information codes
	PayerID           string
	Info              string // information code, e.g. 04 new mandate
	Comment           string // comment code, e.g. 32 active
	Date              time.Time
}

// PaymentSummary is a TK15 (deposit), TK16 (withdrawal) or TK17 (refund
// withdrawal) of a payment specification.
type PaymentSummary struct {
	Pos
	TK           int
	PayeeAccount string
	Date         time.Time
	Serial       string
	Total        int64
	Count        int
}

// PaymentResult is a TK82 (collected) or TK32 (paid out) of a payment
// specification, with its status (0 completed; 1, 2, 9 failed).
type PaymentResult struct {
	Pos
	TK          int
	Date        time.Time
	Period      string // blank: until cancelled
	Repetitions string
	PayerNumber string
	Amount      int64
	Bankgiro    string
	Reference   string
	Status      byte
}

// Completed reports whether the payment was made.
func (p PaymentResult) Completed() bool { return p.Status == '0' }

// Refund is a TK77: a payer had a debit paid back by their bank.
type Refund struct {
	Pos
	Date        time.Time // original payment date
	PayerNumber string
	Amount      int64
	Bankgiro    string
	Reference   string
	RefundDate  time.Time
	Code        string
}

// RejectedPayment is a TK82/TK32 of the rejected-payments report.
type RejectedPayment struct {
	Pos
	TK          int
	Date        time.Time
	Period      string
	Repetitions string
	PayerNumber string
	Amount      int64
	Reference   string
	Comment     string
}

// CancellationResult is a record of the cancellations-and-changes report:
// TK03, 11, 21–25 cancelled (or not), TK26–29 date changed (or not).
type CancellationResult struct {
	Pos
	TK          int
	Date        time.Time
	PayerNumber string
	PaymentTK   int
	Amount      int64
	NewDate     time.Time // zero unless a date change
	Reference   string
	Comment     string
}

// Cancelled reports whether the record says a payment was cancelled.
func (c CancellationResult) Cancelled() bool { return c.TK <= 25 && c.Comment == "12" }

// EMandate is a TK52: a payer asked for a mandate in their internet bank.
// The TK53–TK56 that follow are gathered into it.
type EMandate struct {
	Pos
	Bankgiro          string
	PayerNumber       string
	Clearing, Account string
	PayerID           string
	Message           string // 0 new, 1 first reminder, 2 second reminder
	Info              string
	Address           []string
	PostalCode, Town  string
}

// Closing is a TK09 (or TK59) that ends a report section; its counts
// have been checked against the records read.
type Closing struct {
	Pos
	Kind string
	Date time.Time
}

// ParseError says what is wrong with a file and where.
type ParseError struct {
	Line   int
	Reason string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// Reader reads an Autogiro file record by record: Kadens' own submission
// files and Bankgirot's new-layout reports. Lines may end in CRLF or LF
// and may have their trailing blanks stripped; they are padded to 80.
// Every record is checked (digits where digits belong, dates, the
// section's bankgiro, the closing record's counts); the first problem ends
// the reading with a *ParseError naming the line.
type Reader struct {
	r    *bufio.Reader
	line int
	buf  [RecordLen]byte

	kind     string // of the open section; "" between sections
	bankgiro string
	subKind  int // submission: the section kind of its records
	sawAny   bool
	pending  *EMandate // a TK52 collecting its TK53–56
	held     bool      // rd.buf holds a line not yet turned into a record
	counts   map[int]int
	totals   map[int]int64
	failed   map[int]int // payment specification: failed TK82/TK32
	records  int
	err      error
}

// NewReader reads from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10)}
}

func (rd *Reader) fail(format string, args ...any) error {
	rd.err = &ParseError{Line: rd.line, Reason: fmt.Sprintf(format, args...)}
	return rd.err
}

// readLine reads the next non-empty line into rd.buf, padded with blanks.
func (rd *Reader) readLine() error {
	for {
		b, err := rd.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			rd.line++
			return rd.fail("the line is longer than %d characters", RecordLen)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("autogiro: read: %w", err)
		}
		if len(b) == 0 && err != nil {
			return io.EOF
		}
		rd.line++
		b = bytes.TrimSuffix(b, []byte{'\n'})
		b = bytes.TrimSuffix(b, []byte{'\r'})
		b = bytes.TrimRight(b, "\x1a") // an old DOS end-of-file mark
		if len(b) == 0 {
			if err != nil {
				return io.EOF
			}
			continue
		}
		if len(b) > RecordLen {
			return rd.fail("the line is %d characters long; records are %d", len(b), RecordLen)
		}
		if i := bytes.IndexFunc(b, func(r rune) bool { return r < 0x20 }); i >= 0 {
			return rd.fail("position %d holds a control character", i+1)
		}
		n := copy(rd.buf[:], b)
		for i := n; i < RecordLen; i++ {
			rd.buf[i] = ' '
		}
		return nil
	}
}

// Next returns the next record, or io.EOF after the last one. After an
// error every call returns it again.
func (rd *Reader) Next() (Record, error) {
	if rd.err != nil {
		return nil, rd.err
	}
	for p := rd.pending; p != nil; {
		// A TK52 is complete when the next record is not one of its own.
		if err := rd.readLine(); err != nil {
			if errors.Is(err, io.EOF) {
				rd.pending = nil
				return p, nil
			}
			return nil, err
		}
		if tk := rd.tk(); tk >= 53 && tk <= 56 {
			if err := rd.emandateExtra(tk); err != nil {
				rd.err = err
				return nil, err
			}
			continue
		}
		rd.pending = nil
		rd.held = true
		return p, nil
	}
	if !rd.held {
		if err := rd.readLine(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, rd.atEOF()
			}
			return nil, err
		}
	}
	rd.held = false
	rec, err := rd.record()
	if err != nil {
		if rd.err == nil {
			rd.err = err
		}
		return nil, rd.err
	}
	if rec == nil {
		return rd.Next()
	}
	return rec, nil
}

func (rd *Reader) atEOF() error {
	switch {
	case !rd.sawAny:
		rd.err = &ParseError{Line: rd.line + 1, Reason: "the file is empty"}
	case rd.kind != "" && rd.kind != KindSubmission:
		rd.err = &ParseError{Line: rd.line + 1, Reason: fmt.Sprintf("the file ends inside a %s section without its closing record: it is incomplete", rd.kind)}
	default:
		return io.EOF
	}
	return rd.err
}

func (rd *Reader) tk() int {
	a, b := rd.buf[0], rd.buf[1]
	if a < '0' || a > '9' || b < '0' || b > '9' {
		return -1
	}
	return int(a-'0')*10 + int(b-'0')
}

// field reads positions from–to of the current line.
func (rd *Reader) field(from, to int) string { return string(rd.buf[from-1 : to]) }

// fields collects the first problem while a record is sliced.
type fields struct {
	rd  *Reader
	err error
}

func (f *fields) bad(format string, args ...any) {
	if f.err == nil {
		f.err = &ParseError{Line: f.rd.line, Reason: fmt.Sprintf(format, args...)}
	}
}

func (f *fields) digits(from, to int, name string) string {
	s := f.rd.field(from, to)
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			f.bad("%s (positions %d–%d) %q is not digits", name, from, to, strings.TrimRight(latin1Text(s), " "))
			return ""
		}
	}
	return s
}

// number is digits without leading zeros ("0" stays).
func (f *fields) number(from, to int, name string) string {
	s := strings.TrimLeft(f.digits(from, to, name), "0")
	if s == "" {
		return "0"
	}
	return s
}

// payer is a payer number without leading zeros.
func (f *fields) payer(from, to int) string { return f.number(from, to, "payer number") }

func (f *fields) bankgiro(from, to int) string {
	return strings.TrimLeft(f.digits(from, to, "bankgiro"), "0")
}

func (f *fields) amount(from, to int, name string) int64 {
	s := f.digits(from, to, name)
	var v int64
	for i := 0; i < len(s); i++ {
		v = v*10 + int64(s[i]-'0')
	}
	return v
}

func (f *fields) count(from, to int, name string) int { return int(f.amount(from, to, name)) }

// signed reads a total that may carry Bankgirot's negative sign in its
// last position (å, J–R for −0 to −9) and returns its absolute value.
func (f *fields) signed(from, to int, name string) int64 {
	s := []byte(f.rd.field(from, to))
	last := s[len(s)-1]
	switch {
	case last == 0xE5: // å
		s[len(s)-1] = '0'
	case last >= 'J' && last <= 'R':
		s[len(s)-1] = '1' + (last - 'J')
	}
	var v int64
	for _, c := range s {
		if c < '0' || c > '9' {
			f.bad("%s (positions %d–%d) is not a number", name, from, to)
			return 0
		}
		v = v*10 + int64(c-'0')
	}
	return v
}

func (f *fields) date(from, to int, name string) time.Time {
	s := f.digits(from, to, name)
	if f.err != nil {
		return time.Time{}
	}
	t, err := time.Parse("20060102", s)
	if err != nil {
		f.bad("%s (positions %d–%d) %q is not a date YYYYMMDD", name, from, to, s)
	}
	return t
}

// optDate is a date field that may be blank or zeros.
func (f *fields) optDate(from, to int, name string) time.Time {
	if s := f.rd.field(from, to); strings.Trim(s, " 0") == "" {
		return time.Time{}
	}
	return f.date(from, to, name)
}

func (f *fields) text(from, to int) string {
	return strings.TrimRight(latin1Text(f.rd.field(from, to)), " ")
}

func (f *fields) blank(from, to int, name string) {
	if s := f.rd.field(from, to); strings.Trim(s, " ") != "" {
		f.bad("%s (positions %d–%d) must be blank", name, from, to)
	}
}

// latin1Text decodes ISO-8859-1 bytes.
func latin1Text(s string) string {
	out, err := charmap.ISO8859_1.NewDecoder().String(s)
	if err != nil {
		return s
	}
	return out
}
