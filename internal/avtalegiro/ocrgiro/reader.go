package ocrgiro

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Reader reads a transmission item by item, checking each record's layout
// and the grammar as it goes and the counts, sums and dates of the end
// records when it reaches them. Any problem is a *SyntaxError naming the
// line. Memory does not grow with the file.
type Reader struct {
	sc   *bufio.Scanner
	n    int // line number of cur
	cur  []byte
	have bool // cur holds a line not yet consumed
	eof  bool
	err  error

	started, ended bool
	start          Start
	inAssignment   bool
	assignment     AssignmentStart
	lastNumber     int

	aTransactions, aRecords int
	aSum                    int64
	aFirst, aLast           Date
	tTransactions, tRecords int
	tSum                    int64
	tFirst                  Date
	claims                  bool
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 4096)
	return &Reader{sc: sc}
}

func (r *Reader) fail(line int, format string, args ...any) error {
	if r.err == nil {
		r.err = &SyntaxError{Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	return r.err
}

// peek makes cur the next line, reading it if needed; false at the end.
func (r *Reader) peek() bool {
	if r.have {
		return true
	}
	if r.eof || r.err != nil {
		return false
	}
	if !r.sc.Scan() {
		r.eof = true
		if err := r.sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				r.fail(r.n+1, "is longer than %d characters", RecordLen)
			} else {
				r.err = fmt.Errorf("ocrgiro: read: %w", err)
			}
		}
		return false
	}
	r.n++
	b := r.sc.Bytes()
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	if len(b) != RecordLen {
		r.fail(r.n, "is %d characters long; every record is %d (ISO-8859-1, one byte per character)", len(b), RecordLen)
		return false
	}
	if b[0] != 'N' || b[1] != 'Y' {
		r.fail(r.n, "does not start with the format code NY")
		return false
	}
	r.cur, r.have = b, true
	return true
}

// Line returns the number of the last line read.
func (r *Reader) Line() int { return r.n }

// kind returns positions 3–8 of cur: service, type and record type.
func (r *Reader) kind() string { return string(r.cur[2:8]) }

func (r *Reader) take() field {
	r.have = false
	r.aRecords++
	r.tRecords++
	return field{b: r.cur, n: r.n}
}

func (r *Reader) check(f *field) error {
	if f.err != nil {
		if r.err == nil {
			r.err = f.err
		}
		return r.err
	}
	return nil
}

// Start reads the transmission start. Next calls it when it was not.
func (r *Reader) Start() (Start, error) {
	if r.started {
		return r.start, r.err
	}
	r.started = true
	if !r.peek() {
		if r.err != nil {
			return Start{}, r.err
		}
		return Start{}, r.fail(1, "the file is empty; it must start with a transmission start (NY000010)")
	}
	if r.kind() != "000010" {
		return Start{}, r.fail(r.n, "must be a transmission start (NY000010), not %s", latin1(r.cur[:8]))
	}
	f := r.take()
	r.start = Start{Sender: f.digits(9, 16, "data sender"), Number: f.digits(17, 23, "transmission number"),
		Recipient: f.digits(24, 31, "data recipient")}
	f.zeros(32, 80)
	return r.start, r.check(&f)
}

// Next returns the next item: an AssignmentStart, Claim, Mandate, Payment,
// AssignmentEnd or End (by value). After the End it returns io.EOF.
func (r *Reader) Next() (any, error) {
	if !r.started {
		if _, err := r.Start(); err != nil {
			return nil, err
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.ended {
		if r.peek() {
			return nil, r.fail(r.n, "follows the transmission end")
		}
		if r.err != nil {
			return nil, r.err
		}
		return nil, io.EOF
	}
	if !r.peek() {
		if r.err != nil {
			return nil, r.err
		}
		return nil, r.fail(r.n, "the file ends without a transmission end (NY000089)")
	}
	k := r.kind()
	switch {
	case k == "000089":
		return r.end()
	case k[4:] == "20":
		return r.assignmentStart()
	case k[4:] == "88":
		return r.assignmentEnd()
	}
	if !r.inAssignment {
		return nil, r.fail(r.n, "record %s is outside an assignment", latin1(r.cur[:8]))
	}
	a := r.assignment
	switch {
	case a.Service == ServiceAvtaleGiro && a.Type == AssignmentMandates && k == "219470":
		return r.mandate()
	case a.Service == ServiceAvtaleGiro && a.Type == AssignmentClaims && (k == "210230" || k == "212130"):
		return r.claim()
	case a.Service == ServiceAvtaleGiro && a.Type == AssignmentCancellations && k == "219330":
		return r.claim()
	case a.Service == ServiceOCR && k[:2] == "09" && k[4:] == "30":
		return r.payment()
	}
	return nil, r.fail(r.n, "record %s does not belong here (assignment %s of service %02d, type %02d)",
		latin1(r.cur[:8]), a.Number, a.Service, a.Type)
}

func (r *Reader) assignmentStart() (any, error) {
	if r.inAssignment {
		return nil, r.fail(r.n, "a new assignment starts before assignment %s ended", r.assignment.Number)
	}
	k := r.kind()
	var a AssignmentStart
	switch k {
	case "210020":
		a.Service, a.Type = ServiceAvtaleGiro, AssignmentClaims
	case "213620":
		a.Service, a.Type = ServiceAvtaleGiro, AssignmentCancellations
	case "212420":
		a.Service, a.Type = ServiceAvtaleGiro, AssignmentMandates
	case "090020":
		a.Service, a.Type = ServiceOCR, AssignmentClaims
	default:
		return nil, r.fail(r.n, "NY%s is not an assignment start this format knows", k)
	}
	r.aTransactions, r.aRecords, r.aSum, r.aFirst, r.aLast, r.lastNumber = 0, 0, 0, Date{}, Date{}, 0
	f := r.take()
	a.AgreementID = f.digits(9, 17, "agreement id")
	a.Number = f.digits(18, 24, "assignment number")
	a.Account = f.digits(25, 35, "assignment account")
	f.zeros(36, 80)
	if err := r.check(&f); err != nil {
		return nil, err
	}
	r.inAssignment, r.assignment = true, a
	return a, nil
}

// transactionNumber checks a new transaction's number (ascending, > 0).
func (r *Reader) transactionNumber(f *field) int {
	n := int(f.num(9, 15, "transaction number"))
	if f.err == nil && (n <= 0 || n <= r.lastNumber) {
		f.fail("transaction number %d must be more than 0 and more than the one before (%d)", n, r.lastNumber)
	}
	r.lastNumber = n
	return n
}

// second takes the record that must follow a 30: same prefix, record type
// rec and transaction number n.
func (r *Reader) second(prefix, rec string, n int) (field, error) {
	first := r.n
	if !r.peek() {
		if r.err != nil {
			return field{}, r.err
		}
		return field{}, r.fail(first, "transaction %d has no amount item 2 (%s%s) after it", n, prefix, rec)
	}
	if string(r.cur[:6]) != prefix || string(r.cur[6:8]) != rec {
		return field{}, r.fail(r.n, "must be %s%s, amount item %s of transaction %d", prefix, rec, rec[1:], n)
	}
	f := r.take()
	if got := int(f.num(9, 15, "transaction number")); f.err == nil && got != n {
		f.fail("transaction number %d differs from its amount item 1's (%d)", got, n)
	}
	return f, r.check(&f)
}

func (r *Reader) claim() (any, error) {
	var c Claim
	prefix := string(r.cur[:6])
	f := r.take()
	c.Type = int(f.num(5, 6, "transaction type"))
	c.Number = r.transactionNumber(&f)
	c.Due = f.date(16, "due date")
	if f.err == nil && c.Due.IsZero() {
		f.fail("due date must be given")
	}
	f.blanks(22, 32)
	c.Amount = f.num(33, 49, "amount")
	c.KID = f.kid(50, 74)
	f.zeros(75, 80)
	if f.err == nil && c.KID == "" {
		f.fail("KID must be given")
	}
	if err := r.check(&f); err != nil {
		return nil, err
	}
	g, err := r.second(prefix, "31", c.Number)
	if err != nil {
		return nil, err
	}
	c.ShortName = g.text(16, 25)
	g.blanks(26, 50)
	c.ExternalRef = g.text(51, 75)
	g.zeros(76, 80)
	if err := r.check(&g); err != nil {
		return nil, err
	}
	// Notice lines follow their claim's 31 directly (type 21 only).
	halves := map[[2]int]string{}
	var order []int
	for r.peek() && r.kind() == "212149" {
		if c.Type != TypeBankNotice {
			return nil, r.fail(r.n, "notice records (NY212149) belong only to claims with notice from the bank (type 21)")
		}
		h := r.take()
		if got := int(h.num(9, 15, "transaction number")); h.err == nil && got != c.Number {
			h.fail("transaction number %d differs from its claim's (%d)", got, c.Number)
		}
		if h.err == nil && h.b[15] != '4' {
			h.fail("notice type (position 16) must be 4")
		}
		lineNo := int(h.num(17, 19, "notice line"))
		col := int(h.num(20, 20, "notice column"))
		if h.err == nil && (lineNo < 1 || lineNo > MaxNoticeLines) {
			h.fail("notice line %d must be 1 to %d", lineNo, MaxNoticeLines)
		}
		if h.err == nil && col != 1 && col != 2 {
			h.fail("notice column %d must be 1 or 2", col)
		}
		text := latin1(h.b[20:60])
		h.zeros(61, 80)
		if _, dup := halves[[2]int{lineNo, col}]; h.err == nil && dup {
			h.fail("notice line %d column %d is given twice", lineNo, col)
		}
		if err := r.check(&h); err != nil {
			return nil, err
		}
		if _, ok1 := halves[[2]int{lineNo, 1}]; !ok1 {
			if _, ok2 := halves[[2]int{lineNo, 2}]; !ok2 {
				order = append(order, lineNo)
			}
		}
		halves[[2]int{lineNo, col}] = text
	}
	if r.err != nil {
		return nil, r.err
	}
	for _, ln := range order {
		first, ok := halves[[2]int{ln, 1}]
		if !ok {
			first = "                                        "
		}
		text := first + halves[[2]int{ln, 2}]
		for len(text) > 0 && text[len(text)-1] == ' ' {
			text = text[:len(text)-1]
		}
		c.Notice = append(c.Notice, NoticeLine{Line: ln, Text: text})
	}
	r.count(c.Amount)
	r.claims = true
	if r.aFirst.IsZero() || c.Due.Before(r.aFirst) {
		r.aFirst = c.Due
	}
	if r.aLast.IsZero() || r.aLast.Before(c.Due) {
		r.aLast = c.Due
	}
	if r.tFirst.IsZero() || c.Due.Before(r.tFirst) {
		r.tFirst = c.Due
	}
	return c, nil
}

func (r *Reader) count(amount int64) {
	r.aTransactions++
	r.tTransactions++
	r.aSum += amount
	r.tSum += amount
}

func (r *Reader) mandate() (any, error) {
	f := r.take()
	var m Mandate
	m.Serial = r.transactionNumber(&f)
	m.Registration = int(f.num(16, 16, "registration type"))
	if f.err == nil && m.Registration > 2 {
		f.fail("registration type %d must be 0, 1 or 2", m.Registration)
	}
	m.KID = f.kid(17, 41)
	if f.err == nil && m.KID == "" {
		f.fail("KID must be given")
	}
	switch f.b[41] {
	case 'J':
		m.Notice = true
	case 'N':
	default:
		f.fail("written notice (position 42) must be J or N, not %q", latin1(f.b[41:42]))
	}
	f.zeros(43, 80)
	if err := r.check(&f); err != nil {
		return nil, err
	}
	r.count(0)
	return m, nil
}

func (r *Reader) payment() (any, error) {
	prefix := string(r.cur[:6])
	f := r.take()
	var p Payment
	p.Type = int(f.num(5, 6, "transaction type"))
	if f.err == nil && (p.Type < 10 || p.Type > 21) {
		f.fail("transaction type %d is not an OCR giro payment (10–21)", p.Type)
	}
	p.Number = r.transactionNumber(&f)
	p.NetsDate = f.date(16, "Nets date")
	p.Centre = f.digits(22, 23, "centre id")
	p.DayCode = f.digits(24, 25, "day code")
	p.PartialSettlement = f.digits(26, 26, "partial settlement")
	p.Serial = f.digits(27, 31, "serial number")
	p.Sign = f.b[31]
	if p.Sign != '0' && p.Sign != '-' {
		f.fail("sign (position 32) must be 0 or -")
	}
	p.Amount = f.num(33, 49, "amount")
	p.KID = f.kid(50, 74)
	f.zeros(75, 80)
	if err := r.check(&f); err != nil {
		return nil, err
	}
	g, err := r.second(prefix, "31", p.Number)
	if err != nil {
		return nil, err
	}
	p.FormNumber = g.digits(16, 25, "form number")
	p.ArchiveRef = g.digits(26, 34, "agreement id or archive reference")
	p.Filler31 = latin1(g.b[34:41]) // not validated: Nets' own sample has digits here
	p.BankDate = g.date(42, "bank date")
	p.PayerAccount = g.digits(48, 58, "payer account")
	g.zeros(59, 80)
	if err := r.check(&g); err != nil {
		return nil, err
	}
	if p.Type == 20 || p.Type == 21 {
		h, err := r.second(prefix, "32", p.Number)
		if err != nil {
			return nil, err
		}
		p.FreeText = h.text(16, 55)
		h.zeros(56, 80)
		if err := r.check(&h); err != nil {
			return nil, err
		}
	}
	r.count(p.Amount)
	return p, nil
}

func (r *Reader) assignmentEnd() (any, error) {
	if !r.inAssignment {
		return nil, r.fail(r.n, "an assignment end without an assignment start")
	}
	a := r.assignment
	if id, _ := assignmentID(a.Service, a.Type); string(r.cur[:6]) != id {
		return nil, r.fail(r.n, "must end assignment %s with %s88, not %s", a.Number, id, latin1(r.cur[:8]))
	}
	f := r.take()
	var e AssignmentEnd
	e.Transactions = int(f.num(9, 16, "number of transactions"))
	e.Records = int(f.num(17, 24, "number of records"))
	e.Sum = f.num(25, 41, "sum of amounts")
	switch {
	case a.Service == ServiceOCR:
		e.Date1 = f.date(42, "Nets date")
		e.Date2 = f.date(48, "earliest date")
		e.Date3 = f.date(54, "latest date")
		f.zeros(60, 80)
	case a.Type == AssignmentMandates:
		f.zeros(42, 80)
	default:
		e.Date1 = f.date(42, "earliest due date")
		e.Date2 = f.date(48, "latest due date")
		f.zeros(54, 80)
	}
	if err := r.check(&f); err != nil {
		return nil, err
	}
	switch {
	case e.Transactions != r.aTransactions:
		return nil, r.fail(r.n, "says %d transactions; assignment %s holds %d", e.Transactions, a.Number, r.aTransactions)
	case e.Records != r.aRecords:
		return nil, r.fail(r.n, "says %d records; assignment %s holds %d (with its start and end)", e.Records, a.Number, r.aRecords)
	case e.Sum != r.aSum:
		return nil, r.fail(r.n, "says a sum of %d øre; the amounts of assignment %s add up to %d", e.Sum, a.Number, r.aSum)
	case a.Service == ServiceAvtaleGiro && a.Type != AssignmentMandates && (e.Date1 != r.aFirst || e.Date2 != r.aLast):
		return nil, r.fail(r.n, "says due dates %v to %v; the claims of assignment %s are due %v to %v", e.Date1, e.Date2, a.Number, r.aFirst, r.aLast)
	case r.aTransactions == 0:
		return nil, r.fail(r.n, "assignment %s holds no transactions", a.Number)
	}
	r.inAssignment = false
	return e, nil
}

func (r *Reader) end() (any, error) {
	if r.inAssignment {
		return nil, r.fail(r.n, "the transmission ends before assignment %s ended", r.assignment.Number)
	}
	f := r.take()
	var e End
	e.Transactions = int(f.num(9, 16, "number of transactions"))
	e.Records = int(f.num(17, 24, "number of records"))
	e.Sum = f.num(25, 41, "sum of amounts")
	e.Date = f.date(42, "date")
	f.zeros(48, 80)
	if err := r.check(&f); err != nil {
		return nil, err
	}
	switch {
	case e.Transactions != r.tTransactions:
		return nil, r.fail(r.n, "says %d transactions; the file holds %d", e.Transactions, r.tTransactions)
	case e.Records != r.tRecords:
		return nil, r.fail(r.n, "says %d records; the file holds %d", e.Records, r.tRecords)
	case e.Sum != r.tSum:
		return nil, r.fail(r.n, "says a sum of %d øre; the assignments add up to %d", e.Sum, r.tSum)
	case r.claims && e.Date != r.tFirst:
		return nil, r.fail(r.n, "says date %v; the earliest due date in the file is %v", e.Date, r.tFirst)
	}
	r.ended = true
	return e, nil
}
