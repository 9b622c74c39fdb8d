package autogiro

import (
	"bufio"
	"fmt"
	"io"
)

// Section kinds of a submission file, in the order Kadens writes them:
// Bankgirot processes a file in order, so mandates go before the payments
// that need them and payments before the amendments that change them.
const (
	SectionMandates   = 1 // medgivandeunderlag: TK03, TK04, TK05
	SectionPayments   = 2 // betalningsunderlag: TK82, TK32
	SectionAmendments = 3 // makulerings-/ändringsunderlag: TK23–TK29
)

// Writer writes a submission file to Bankgirot record by record: each
// section kind gets its own TK01, every record is 80 ISO-8859-1 bytes and
// ends in CRLF (the last one too), and there is no closing record. Records
// must come in section order (mandates, payments, amendments); a record
// whose bankgiro is not the file's is refused.
type Writer struct {
	w       *bufio.Writer
	opening Opening
	section int
	rec     record
	// Counts of the records written, by transaction code.
	Counts map[int]int
	// Total of the TK82 and TK32 amounts written, in öre.
	DebitTotal, PayoutTotal int64
}

// NewWriter starts a submission file for one payee bankgiro.
func NewWriter(w io.Writer, o Opening) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), opening: o, Counts: map[int]int{}}
}

func (w *Writer) enter(section int, bankgiro string) error {
	if section < w.section {
		return fmt.Errorf("autogiro: write: section %d after section %d: mandates, payments and amendments go in that order", section, w.section)
	}
	if bankgiro != w.opening.Bankgiro {
		return fmt.Errorf("autogiro: write: record for bankgiro %s in a file for %s", bankgiro, w.opening.Bankgiro)
	}
	if section == w.section {
		return nil
	}
	w.opening.encode(&w.rec)
	if err := w.emit(TKOpening); err != nil {
		return err
	}
	w.section = section
	return nil
}

func (w *Writer) emit(tk int) error {
	if w.rec.err != nil {
		return fmt.Errorf("autogiro: write TK%02d: %w", tk, w.rec.err)
	}
	if _, err := w.w.Write(w.rec.b[:]); err != nil {
		return fmt.Errorf("autogiro: write: %w", err)
	}
	w.Counts[tk]++
	return nil
}

// Mandate writes a TK03, TK04 or TK05.
func (w *Writer) Mandate(m MandateRecord) error {
	if err := w.enter(SectionMandates, m.Bankgiro); err != nil {
		return err
	}
	m.encode(&w.rec)
	return w.emit(m.TK)
}

// Payment writes a TK82 or TK32.
func (w *Writer) Payment(p PaymentRecord) error {
	if err := w.enter(SectionPayments, p.Bankgiro); err != nil {
		return err
	}
	p.encode(&w.rec)
	if err := w.emit(p.TK); err != nil {
		return err
	}
	if p.TK == TKDebit {
		w.DebitTotal += p.Amount
	} else {
		w.PayoutTotal += p.Amount
	}
	return nil
}

// Amendment writes one of TK23–TK29.
func (w *Writer) Amendment(a AmendmentRecord) error {
	if err := w.enter(SectionAmendments, a.Bankgiro); err != nil {
		return err
	}
	a.encode(&w.rec)
	return w.emit(a.TK)
}

// Flush writes what is buffered.
func (w *Writer) Flush() error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("autogiro: write: %w", err)
	}
	return nil
}
