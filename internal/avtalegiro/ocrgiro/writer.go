package ocrgiro

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Writer writes one transmission record by record. It keeps the counts,
// sums and dates the end records need, so a file of any size is written in
// constant memory. Calls must follow the grammar: Begin, then per
// assignment BeginAssignment, its transactions and EndAssignment, then
// Close. The first error sticks: later calls return it.
type Writer struct {
	w   *bufio.Writer
	err error

	begun, closed bool
	inAssignment  bool
	assignment    AssignmentStart
	lastNumber    int

	// running totals of the open assignment and the whole file
	aTransactions, aRecords int
	aSum                    int64
	aFirst, aLast           Date
	tTransactions, tRecords int
	tSum                    int64
	tFirst                  Date

	buf line
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10)}
}

func (w *Writer) fail(format string, args ...any) error {
	if w.err == nil {
		w.err = fmt.Errorf("ocrgiro: "+format, args...)
	}
	return w.err
}

func (w *Writer) emit() {
	if w.err != nil {
		return
	}
	if _, err := w.w.Write(w.buf[:]); err != nil {
		w.err = fmt.Errorf("ocrgiro: write: %w", err)
		return
	}
	if err := w.w.WriteByte('\n'); err != nil {
		w.err = fmt.Errorf("ocrgiro: write: %w", err)
	}
	w.aRecords++
	w.tRecords++
}

func digitsOf(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Begin writes the transmission start.
func (w *Writer) Begin(s Start) error {
	if w.err != nil {
		return w.err
	}
	if w.begun {
		return w.fail("Begin called twice")
	}
	switch {
	case !digitsOf(s.Sender, 8):
		return w.fail("data sender %q: must be 8 digits", s.Sender)
	case !digitsOf(s.Number, 7):
		return w.fail("transmission number %q: must be 7 digits", s.Number)
	case !digitsOf(s.Recipient, 8):
		return w.fail("data recipient %q: must be 8 digits", s.Recipient)
	}
	w.begun = true
	b := &w.buf
	b.putID("NY000010")
	copy(b[8:16], s.Sender)
	copy(b[16:23], s.Number)
	copy(b[23:31], s.Recipient)
	b.zeros(32, 80)
	w.emit()
	return w.err
}

// BeginAssignment writes an assignment start.
func (w *Writer) BeginAssignment(a AssignmentStart) error {
	if w.err != nil {
		return w.err
	}
	if !w.begun || w.closed || w.inAssignment {
		return w.fail("BeginAssignment out of order")
	}
	id, ok := assignmentID(a.Service, a.Type)
	if !ok {
		return w.fail("service %d with assignment type %d is not an assignment", a.Service, a.Type)
	}
	agreement := a.AgreementID
	if agreement == "" {
		agreement = "000000000"
	}
	switch {
	case !digitsOf(agreement, 9):
		return w.fail("agreement id %q: must be 9 digits", a.AgreementID)
	case !digitsOf(a.Number, 7):
		return w.fail("assignment number %q: must be 7 digits", a.Number)
	case !digitsOf(a.Account, 11):
		return w.fail("assignment account %q: must be 11 digits", a.Account)
	}
	w.inAssignment, w.assignment, w.lastNumber = true, a, 0
	w.aTransactions, w.aRecords, w.aSum, w.aFirst, w.aLast = 0, 0, 0, Date{}, Date{}
	b := &w.buf
	b.putID(id + "20")
	copy(b[8:17], agreement)
	copy(b[17:24], a.Number)
	copy(b[24:35], a.Account)
	b.zeros(36, 80)
	w.emit()
	return w.err
}

func assignmentID(service, typ int) (string, bool) {
	switch {
	case service == ServiceAvtaleGiro && typ == AssignmentClaims:
		return "NY2100", true
	case service == ServiceAvtaleGiro && typ == AssignmentCancellations:
		return "NY2136", true
	case service == ServiceAvtaleGiro && typ == AssignmentMandates:
		return "NY2124", true
	case service == ServiceOCR && typ == AssignmentClaims:
		return "NY0900", true
	}
	return "", false
}

func (w *Writer) transaction(number int, service, typ int) error {
	if w.err != nil {
		return w.err
	}
	if !w.inAssignment || w.assignment.Service != service || w.assignment.Type != typ {
		return w.fail("transaction %d does not belong in the open assignment", number)
	}
	if number <= w.lastNumber || number > 9_999_999 {
		return w.fail("transaction number %d: must be ascending, 1 to 9999999", number)
	}
	w.lastNumber = number
	return nil
}

// CheckClaim returns what is wrong with a claim or cancellation, or nil.
func CheckClaim(c Claim) error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if c.Type != TypeNoNotice && c.Type != TypeBankNotice && c.Type != TypeCancellation {
		add("transaction type %d: must be 2, 21 or 93", c.Type)
	}
	if c.Due.IsZero() || !c.Due.valid() {
		add("due date %v: must be a date in 2000–2099", c.Due)
	}
	if c.Amount <= 0 || c.Amount > MaxAmount {
		add("amount %d: must be 1 to %d øre", c.Amount, int64(MaxAmount))
	}
	if !ValidKID(c.KID) {
		add("KID %q: must be 1 to 25 digits", c.KID)
	}
	if len([]rune(c.ShortName)) > 10 || !Encodable(c.ShortName) {
		add("payer short name %q: must be up to 10 ISO-8859-1 characters (Fit cuts it)", c.ShortName)
	}
	if len([]rune(c.ExternalRef)) > 25 || !Encodable(c.ExternalRef) {
		add("external reference %q: must be up to 25 ISO-8859-1 characters (Fit cuts it)", c.ExternalRef)
	}
	if len(c.Notice) > 0 && c.Type != TypeBankNotice {
		add("notice lines: only a claim with notice from the bank (type 21) carries them")
	}
	var seen [MaxNoticeLines + 1]bool
	for _, n := range c.Notice {
		switch {
		case n.Line < 1 || n.Line > MaxNoticeLines:
			add("notice line %d: must be 1 to %d", n.Line, MaxNoticeLines)
			continue
		case seen[n.Line]:
			add("notice line %d: given twice", n.Line)
		case strings.TrimSpace(n.Text) == "":
			add("notice line %d: is blank (blank lines are not sent)", n.Line)
		case len([]rune(n.Text)) > NoticeLineLen || !Encodable(n.Text):
			add("notice line %d: must be up to %d ISO-8859-1 characters", n.Line, NoticeLineLen)
		}
		seen[n.Line] = true
	}
	if problems != nil {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// Claim writes a claim (in a claims assignment) or a cancellation (in a
// cancellations assignment): records 30 and 31, then one 49 per non-blank
// half of each notice line of a TypeBankNotice claim.
func (w *Writer) Claim(c Claim) error {
	if w.err != nil {
		return w.err
	}
	want := AssignmentClaims
	if c.Type == TypeCancellation {
		want = AssignmentCancellations
	}
	if err := w.transaction(c.Number, ServiceAvtaleGiro, want); err != nil {
		return err
	}
	if err := CheckClaim(c); err != nil {
		return w.fail("transaction %d: %v", c.Number, err)
	}
	prefix := claimPrefix[c.Type]
	b := &w.buf
	b.putID(prefix + "30")
	b.putNum(9, 15, int64(c.Number))
	b.putDate(16, c.Due)
	b.blanks(22, 32)
	b.putNum(33, 49, c.Amount)
	b.putKIDAt(50, 74, c.KID)
	b.zeros(75, 80)
	w.emit()
	b.putID(prefix + "31")
	b.putNum(9, 15, int64(c.Number))
	b.putText(16, 25, c.ShortName)
	b.blanks(26, 50)
	b.putText(51, 75, c.ExternalRef)
	b.zeros(76, 80)
	w.emit()
	for _, n := range c.Notice {
		first, second := splitNotice(n.Text)
		if strings.TrimSpace(first) != "" {
			w.notice(c.Number, n.Line, 1, first)
		}
		if strings.TrimSpace(second) != "" {
			w.notice(c.Number, n.Line, 2, second)
		}
	}
	w.count(c.Amount)
	if w.aFirst.IsZero() || c.Due.Before(w.aFirst) {
		w.aFirst = c.Due
	}
	if w.aLast.IsZero() || w.aLast.Before(c.Due) {
		w.aLast = c.Due
	}
	if w.tFirst.IsZero() || c.Due.Before(w.tFirst) {
		w.tFirst = c.Due
	}
	return w.err
}

var claimPrefix = map[int]string{TypeNoNotice: "NY2102", TypeBankNotice: "NY2121", TypeCancellation: "NY2193"}

// splitNotice cuts a notice line into its two 40-character halves.
func splitNotice(s string) (string, string) {
	r := []rune(s)
	if len(r) <= 40 {
		return s, ""
	}
	return string(r[:40]), string(r[40:])
}

func (w *Writer) notice(number, lineNo, column int, text string) {
	b := &w.buf
	b.putID("NY212149")
	b.putNum(9, 15, int64(number))
	b[15] = '4'
	b.putNum(17, 19, int64(lineNo))
	b[19] = byte('0' + column)
	b.putText(21, 60, text)
	b.zeros(61, 80)
	w.emit()
}

func (w *Writer) count(amount int64) {
	w.aTransactions++
	w.tTransactions++
	w.aSum += amount
	w.tSum += amount
}

// Mandate writes a mandate record (Nets' side; used by the fake bank).
func (w *Writer) Mandate(m Mandate) error {
	if err := w.transaction(m.Serial, ServiceAvtaleGiro, AssignmentMandates); err != nil {
		return err
	}
	if m.Registration < 0 || m.Registration > 2 || !ValidKID(m.KID) {
		return w.fail("mandate %d: registration type %d / KID %q", m.Serial, m.Registration, m.KID)
	}
	b := &w.buf
	b.putID("NY219470")
	b.putNum(9, 15, int64(m.Serial))
	b[15] = byte('0' + m.Registration)
	b.putKIDAt(17, 41, m.KID)
	b[41] = 'N'
	if m.Notice {
		b[41] = 'J'
	}
	b.zeros(43, 80)
	w.emit()
	w.count(0)
	return w.err
}

// Payment writes an OCR giro payment (Nets' side; used by the fake bank).
func (w *Writer) Payment(p Payment) error {
	if err := w.transaction(p.Number, ServiceOCR, AssignmentClaims); err != nil {
		return err
	}
	switch {
	case p.Type < 10 || p.Type > 21:
		return w.fail("payment %d: transaction type %d", p.Number, p.Type)
	case p.Amount < 0 || p.Amount > MaxAmount:
		return w.fail("payment %d: amount %d", p.Number, p.Amount)
	case !ValidKID(p.KID) && p.KID != "":
		return w.fail("payment %d: KID %q", p.Number, p.KID)
	case !Encodable(p.FreeText) || len([]rune(p.FreeText)) > 40:
		return w.fail("payment %d: free text %q", p.Number, p.FreeText)
	}
	sign := p.Sign
	if sign != '-' {
		sign = '0'
	}
	prefix := fmt.Sprintf("NY09%02d", p.Type)
	b := &w.buf
	b.putID(prefix + "30")
	b.putNum(9, 15, int64(p.Number))
	b.putDate(16, p.NetsDate)
	b.putDigits(22, 23, p.Centre)
	b.putDigits(24, 25, p.DayCode)
	b.putDigits(26, 26, p.PartialSettlement)
	b.putDigits(27, 31, p.Serial)
	b[31] = sign
	b.putNum(33, 49, p.Amount)
	b.putKIDAt(50, 74, p.KID)
	b.zeros(75, 80)
	w.emit()
	b.putID(prefix + "31")
	b.putNum(9, 15, int64(p.Number))
	b.putDigits(16, 25, p.FormNumber)
	b.putDigits(26, 34, p.ArchiveRef)
	if len(p.Filler31) == 7 && Encodable(p.Filler31) {
		copy(b[34:41], p.Filler31)
	} else {
		b.zeros(35, 41)
	}
	b.putDate(42, p.BankDate)
	b.putDigits(48, 58, p.PayerAccount)
	b.zeros(59, 80)
	w.emit()
	if p.Type == 20 || p.Type == 21 {
		b.putID(prefix + "32")
		b.putNum(9, 15, int64(p.Number))
		b.putText(16, 55, p.FreeText)
		b.zeros(56, 80)
		w.emit()
	}
	w.count(p.Amount)
	return w.err
}

// EndAssignment writes the assignment end. Counts and sums are the
// writer's own; for claims and cancellations so are the dates (earliest
// and latest due date), for Nets' assignments they are taken from dates.
func (w *Writer) EndAssignment(dates AssignmentEnd) error {
	if w.err != nil {
		return w.err
	}
	if !w.inAssignment {
		return w.fail("EndAssignment without an assignment")
	}
	if w.aTransactions == 0 {
		return w.fail("assignment %s holds no transactions", w.assignment.Number)
	}
	id, _ := assignmentID(w.assignment.Service, w.assignment.Type)
	b := &w.buf
	b.putID(id + "88")
	b.putNum(9, 16, int64(w.aTransactions))
	b.putNum(17, 24, int64(w.aRecords+1))
	b.putNum(25, 41, w.aSum)
	switch {
	case w.assignment.Service == ServiceAvtaleGiro && w.assignment.Type != AssignmentMandates:
		b.putDate(42, w.aFirst)
		b.putDate(48, w.aLast)
		b.zeros(54, 80)
	case w.assignment.Service == ServiceOCR:
		b.putDate(42, dates.Date1)
		b.putDate(48, dates.Date2)
		b.putDate(54, dates.Date3)
		b.zeros(60, 80)
	default:
		b.zeros(42, 80)
	}
	w.emit()
	w.inAssignment = false
	return w.err
}

// Close writes the transmission end and flushes. date is the 89 record's
// date for a file without claims (Nets' date); a file with claims or
// cancellations carries its earliest due date instead.
func (w *Writer) Close(date Date) error {
	if w.err != nil {
		return w.err
	}
	if !w.begun || w.inAssignment || w.closed {
		return w.fail("Close out of order")
	}
	if !w.tFirst.IsZero() {
		date = w.tFirst
	}
	w.closed = true
	b := &w.buf
	b.putID("NY000089")
	b.putNum(9, 16, int64(w.tTransactions))
	b.putNum(17, 24, int64(w.tRecords+1))
	b.putNum(25, 41, w.tSum)
	b.putDate(42, date)
	b.zeros(48, 80)
	w.emit()
	if w.err == nil {
		if err := w.w.Flush(); err != nil {
			w.err = fmt.Errorf("ocrgiro: write: %w", err)
		}
	}
	return w.err
}
