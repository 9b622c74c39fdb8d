// Package ocrgiro reads and writes the Nets "NY" OCR giro files that
// AvtaleGiro uses: claim and cancellation assignments a payee sends, and
// the mandate notifications and OCR giro payments that come back. It is
// pure (no I/O beyond the io.Reader/io.Writer it is given) and streams:
// a Reader yields one transaction at a time and a Writer keeps only the
// running counts and sums, so memory does not grow with the file.
//
// Records are 80 bytes of ISO-8859-1, one per line (LF; a CR before it is
// accepted on input). Numeric fields are zero-padded and right-aligned,
// text fields blank-padded and left-aligned, KIDs right-aligned and
// blank-padded. Dates are DDMMYY. The layouts follow the Nets AvtaleGiro
// and OCR giro system specifications (docs/AVTALEGIRO.md).
package ocrgiro

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// RecordLen is the width of every record in bytes.
const RecordLen = 80

// Service codes (positions 3–4).
const (
	ServiceOCR        = 9  // OCR giro payments reported by Nets
	ServiceAvtaleGiro = 21 // AvtaleGiro claims, cancellations, mandates
)

// Assignment types (positions 5–6 of records 20 and 88).
const (
	AssignmentClaims        = 0  // service 21: claims; service 9: payments
	AssignmentCancellations = 36 // service 21
	AssignmentMandates      = 24 // service 21
)

// Transaction types (positions 5–6 of 30, 31, 32, 49, 70).
const (
	// TypeNoNotice is a claim the payee notifies the payer of itself:
	// the bank sends no notice, and it carries no notice lines.
	TypeNoNotice = 2
	// TypeBankNotice is a claim the bank gives notice of ("AvtaleGiro
	// info"); only it may carry notice lines (records 49).
	TypeBankNotice = 21
	// TypeCancellation cancels a claim sent earlier.
	TypeCancellation = 93
	// TypeMandate is a mandate record from Nets.
	TypeMandate = 94
	// TypeAvtaleGiroPayment is an OCR giro payment of an AvtaleGiro claim.
	TypeAvtaleGiroPayment = 15
)

// NetsID is the data sender/recipient number of Nets itself.
const NetsID = "00008080"

// Mandate registration types (position 16 of record 70).
const (
	MandateActive  = 0 // one of all active mandates (a full overview)
	MandateNew     = 1 // new or changed
	MandateDeleted = 2 // deleted
)

// Limits of the notice lines of a TypeBankNotice claim.
const (
	MaxNoticeLines = 42
	NoticeLineLen  = 80 // two records of 40 characters
)

// MaxAmount is the largest amount the 17-digit amount field holds, in øre.
const MaxAmount = 99_999_999_999_999_999

// SyntaxError says which line of a file is wrong and why.
type SyntaxError struct {
	Line   int // 1-based; 0 for the file as a whole
	Reason string
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 {
		return "ocrgiro: " + e.Reason
	}
	return fmt.Sprintf("ocrgiro: line %d: %s", e.Line, e.Reason)
}

// Date is a calendar date as the files write it (DDMMYY, years 2000–2099).
// The zero Date is the all-zeros field.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf returns the calendar date of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// IsZero reports whether d is the zero date (written 000000).
func (d Date) IsZero() bool { return d == Date{} }

// Time returns d at midnight UTC.
func (d Date) Time() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

// Before reports whether d is earlier than e.
func (d Date) Before(e Date) bool {
	if d.Year != e.Year {
		return d.Year < e.Year
	}
	if d.Month != e.Month {
		return d.Month < e.Month
	}
	return d.Day < e.Day
}

func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

func (d Date) valid() bool {
	if d.IsZero() {
		return true
	}
	return d.Year >= 2000 && d.Year <= 2099 && DateOf(d.Time()) == d
}

// line is one record being written or read: 80 bytes.
type line [RecordLen]byte

// putNum writes v zero-padded into positions from..to (1-based, inclusive).
func (l *line) putNum(from, to int, v int64) {
	for i := to - 1; i >= from-1; i-- {
		l[i] = byte('0' + v%10)
		v /= 10
	}
}

// putDigits writes a digit string right-aligned and zero-padded.
func (l *line) putDigits(from, to int, s string) {
	n := to - from + 1
	for i := 0; i < n; i++ {
		j := len(s) - n + i
		if j >= 0 {
			l[from-1+i] = s[j]
		} else {
			l[from-1+i] = '0'
		}
	}
}

// putText writes s encoded as ISO-8859-1, left-aligned and blank-padded,
// cut to the field's width in bytes. Characters without an ISO-8859-1 form
// are written '?'; callers validate text first (Encodable).
func (l *line) putText(from, to int, s string) {
	i := from - 1
	for _, r := range s {
		if i >= to {
			break
		}
		b, ok := charmap.ISO8859_1.EncodeRune(r)
		if !ok {
			b = '?'
		}
		l[i] = b
		i++
	}
	for ; i < to; i++ {
		l[i] = ' '
	}
}

// putKIDAt writes a KID right-aligned and blank-padded in from..to.
func (l *line) putKIDAt(from, to int, kid string) {
	pad := to - from + 1 - len(kid)
	for i := 0; i < pad; i++ {
		l[from-1+i] = ' '
	}
	copy(l[from-1+pad:to], kid)
}

func (l *line) putDate(from int, d Date) {
	if d.IsZero() {
		l.putNum(from, from+5, 0)
		return
	}
	l.putNum(from, from+1, int64(d.Day))
	l.putNum(from+2, from+3, int64(d.Month))
	l.putNum(from+4, from+5, int64(d.Year%100))
}

func (l *line) putID(id string) { copy(l[:8], id) }

func (l *line) zeros(from, to int) {
	for i := from - 1; i < to; i++ {
		l[i] = '0'
	}
}

func (l *line) blanks(from, to int) {
	for i := from - 1; i < to; i++ {
		l[i] = ' '
	}
}

// field is a parsed view of one input record with the line number for
// errors; the parse methods record the first problem in err.
type field struct {
	b   []byte
	n   int
	err *SyntaxError
}

func (f *field) fail(format string, args ...any) {
	if f.err == nil {
		f.err = &SyntaxError{Line: f.n, Reason: fmt.Sprintf(format, args...)}
	}
}

func (f *field) num(from, to int, name string) int64 {
	var v int64
	for i := from - 1; i < to; i++ {
		c := f.b[i]
		if c < '0' || c > '9' {
			f.fail("%s (positions %d–%d) must be digits, not %q", name, from, to, latin1(f.b[from-1:to]))
			return 0
		}
		v = v*10 + int64(c-'0')
	}
	return v
}

// digits returns the field's digits as they are (leading zeros kept).
func (f *field) digits(from, to int, name string) string {
	f.num(from, to, name)
	return string(f.b[from-1 : to])
}

func (f *field) zeros(from, to int) {
	for i := from - 1; i < to; i++ {
		if f.b[i] != '0' {
			f.fail("positions %d–%d are filler and must be zeros", from, to)
			return
		}
	}
}

func (f *field) blanks(from, to int) {
	for i := from - 1; i < to; i++ {
		if f.b[i] != ' ' {
			f.fail("positions %d–%d are filler and must be blanks", from, to)
			return
		}
	}
}

// text returns an alphanumeric field decoded from ISO-8859-1 without its
// trailing blanks.
func (f *field) text(from, to int) string {
	return strings.TrimRight(latin1(f.b[from-1:to]), " ")
}

// kid reads a KID: digits right-aligned, blank-padded; an all-blank field
// is the empty KID.
func (f *field) kid(from, to int) string {
	s := f.b[from-1 : to]
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	for j := i; j < len(s); j++ {
		if s[j] < '0' || s[j] > '9' {
			f.fail("KID (positions %d–%d) must be digits, right-aligned and padded with blanks, not %q", from, to, latin1(s))
			return ""
		}
	}
	return string(s[i:])
}

func (f *field) date(from int, name string) Date {
	v := f.num(from, from+5, name)
	if f.err != nil || v == 0 {
		return Date{}
	}
	d := Date{Year: 2000 + int(v%100), Month: time.Month(v / 100 % 100), Day: int(v / 10000)}
	if !d.valid() {
		f.fail("%s %s is not a date (DDMMYY)", name, string(f.b[from-1:from+5]))
		return Date{}
	}
	return d
}

// latin1 decodes ISO-8859-1 bytes.
func latin1(b []byte) string {
	ascii := true
	for _, c := range b {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b)
	}
	var sb strings.Builder
	for _, c := range b {
		sb.WriteRune(charmap.ISO8859_1.DecodeByte(c))
	}
	return sb.String()
}

// Encodable reports whether s is printable text the files can carry:
// ISO-8859-1 characters without control characters.
func Encodable(s string) bool {
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return false
		}
		if _, ok := charmap.ISO8859_1.EncodeRune(r); !ok {
			return false
		}
	}
	return true
}

// ValidKID reports whether kid fits the KID field: 1–25 digits.
func ValidKID(kid string) bool {
	if kid == "" || len(kid) > 25 {
		return false
	}
	for i := 0; i < len(kid); i++ {
		if kid[i] < '0' || kid[i] > '9' {
			return false
		}
	}
	return true
}

// Fit makes s fit a text field of n characters: characters without an
// ISO-8859-1 form (and control characters) become '?', and the rest is
// cut to n characters. Names come from subscribers, who may write any
// script; a claim must not fail for that.
func Fit(s string, n int) string {
	plain := len(s) <= n
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f
	}
	if plain {
		return strings.TrimRight(s, " ") // the common case: short ASCII text, no allocation
	}
	var sb strings.Builder
	i := 0
	for _, r := range s {
		if i == n {
			break
		}
		if _, ok := charmap.ISO8859_1.EncodeRune(r); !ok || r < 0x20 || (r >= 0x7f && r < 0xa0) {
			r = '?'
		}
		sb.WriteRune(r)
		i++
	}
	return strings.TrimRight(sb.String(), " ")
}
