package autogiro

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// ImportResult says what importing a report changed.
type ImportResult struct {
	ImportID        string `json:"importId"`
	Kind            string `json:"kind" description:"The report: mandate advice, payment specification, rejected payments, cancellations/changes or internet-bank mandates."`
	AlreadyImported bool   `json:"alreadyImported" description:"The same file was imported before; nothing changed now, and the counts are those of the first import."`
	Records         int    `json:"records"`

	MandatesActivated  int `json:"mandatesActivated"`
	MandatesRejected   int `json:"mandatesRejected"`
	MandatesCancelled  int `json:"mandatesCancelled" description:"Ended by the payer, the payer's bank or Bankgirot."`
	MandatesConfirmed  int `json:"mandatesConfirmed" description:"Cancellations Kadens sent, confirmed."`
	MandatesRequested  int `json:"mandatesRequested" description:"Internet-bank mandates received; the next export approves them."`
	PaymentsCompleted  int `json:"paymentsCompleted"`
	PaymentsFailed     int `json:"paymentsFailed"`
	PaymentsRetrying   int `json:"paymentsRetrying" description:"Insufficient funds, and Bankgirot will try again (status 9)."`
	PaymentsCancelled  int `json:"paymentsCancelled"`
	PaymentsRedated    int `json:"paymentsRedated" description:"Sent payments Bankgirot moved to a new payment date (TK26–29 with comment code 14 or 18)."`
	RefundsByPayerBank int `json:"refundsByPayerBank" description:"Completed debits the payer's bank paid back (TK77): each is marked on its transaction, and a paid-back debit of an invoice becomes a charge on the subscriber's account."`
	Unchanged          int `json:"unchanged" description:"Records that repeat what Kadens knew."`

	// Notes name the records that matched nothing, or that need a person.
	Notes []string `json:"notes"`
}

const maxNotes = 100

func (r *ImportResult) note(line int, format string, args ...any) {
	if len(r.Notes) < maxNotes {
		r.Notes = append(r.Notes, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
	}
}

// Import applies one of Bankgirot's reports, read as a stream, in one
// transaction: all of it or nothing. A malformed file is a 400 naming the
// line. The same file twice (by SHA-256) changes nothing and answers the
// first import's result with AlreadyImported. After the commit, completed
// and failed debits of invoices become Kadens payments (Settle) and
// ended mandates release their payment agreements (Release).
func Import(ctx context.Context, st *store.Store, r io.Reader, now time.Time) (ImportResult, error) {
	var res ImportResult
	h := sha256.New()
	err := st.InTx(ctx, func(tx *store.Tx) error {
		res = ImportResult{ImportID: store.NewID(), Notes: []string{}}
		ap := applier{ctx: ctx, tx: tx, res: &res, now: now, batchSize: int(batchRecords.Load())}
		rd := NewReader(io.TeeReader(r, h))
		for {
			rec, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			var pe *ParseError
			if errors.As(err, &pe) {
				return validation.Field("file", "line %d: %s", pe.Line, pe.Reason)
			}
			if err != nil {
				return err
			}
			if err := ap.apply(rec); err != nil {
				return err
			}
		}
		if err := ap.applyBatch(); err != nil {
			return err
		}
		if err := ap.flush(); err != nil {
			return err
		}
		if res.Kind == "" {
			return validation.Field("file", "line 1: a submission file (Kadens' own export), not a report from Bankgirot")
		}
		summary, already, err := RecordImport(ctx, tx, res.ImportID, hex.EncodeToString(h.Sum(nil)), res.Kind, now)
		if err != nil {
			return err
		}
		if already {
			var first ImportResult
			if err := json.Unmarshal([]byte(summary), &first); err != nil {
				return fmt.Errorf("autogiro: import: stored summary: %w", err)
			}
			first.AlreadyImported = true
			res = first
			return errAlreadyImported
		}
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		return SetImportSummary(ctx, tx, res.ImportID, string(b))
	})
	if err != nil && !errors.Is(err, errAlreadyImported) {
		return ImportResult{}, err
	}
	if err := Settle(ctx, st, now); err != nil {
		return res, err
	}
	if err := BookRefunds(ctx, st, now); err != nil {
		return res, err
	}
	if err := Release(ctx, st, now); err != nil {
		return res, err
	}
	return res, nil
}

// errAlreadyImported rolls back a repeated file's second application.
var errAlreadyImported = errors.New("autogiro: file imported before")

// applier applies records of one report inside the import's transaction.
// Records are applied in batches (batchRecords): the transactions a
// batch's payment records can name are read with one statement, so
// memory stays the same whatever the file's or the account's size.
type applier struct {
	ctx     context.Context
	tx      *store.Tx
	res     *ImportResult
	now     time.Time
	account AutogiroAccount
	// sectionID marks the transactions this section changed, so a later
	// batch of it finds them again (OpenPayments).
	sectionID string
	// matching: the section's records name transactions.
	matching bool
	// batch holds records read but not applied yet, up to batchSize.
	batch     []Record
	batchSize int
	// open payments the current batch can name by payer, kind, amount and
	// reference; a record takes the first.
	open map[paymentKey][]*AutogiroPaymentItem
	// pending are transaction states not written yet, by state.
	pending map[result][]string
}

// batchRecords is how many records are matched against the database at
// once: large enough that the per-statement cost vanishes, small enough
// that the batch and its transactions take a few hundred kilobytes.
// Atomic because tests shrink it while other imports run.
var batchRecords atomic.Int64

func init() { batchRecords.Store(1000) }

type paymentKey struct {
	payer, kind, ref string
	amount           int64
}

// normRef matches references as Bankgirot may return them: blank-trimmed
// and, in some reports, zero-padded.
func normRef(s string) string { return strings.TrimLeft(strings.TrimSpace(s), "0") }

func (a *applier) section(o *ReportOpening) error {
	if err := a.applyBatch(); err != nil {
		return err
	}
	if err := a.flush(); err != nil {
		return err
	}
	a.res.Kind = o.Kind
	acc, err := AccountByBankgiro(a.ctx, a.tx, o.Bankgiro)
	if errors.Is(err, store.ErrNotFound) {
		return validation.Field("file", "line %d: no Autogiro account of this tenant has bankgiro %s", o.Line, FormatBankgiro(o.Bankgiro))
	}
	if err != nil {
		return err
	}
	a.account = acc
	a.sectionID = store.NewID()
	a.matching = o.Kind == KindPaymentSpec || o.Kind == KindRejected || o.Kind == KindCancellations
	return nil
}

// keyOf is the transaction a record names, if it names one.
func keyOf(rec Record) (paymentKey, bool) {
	switch r := rec.(type) {
	case *PaymentResult:
		return paymentKey{r.PayerNumber, kindOf(r.TK), normRef(r.Reference), r.Amount}, true
	case *RejectedPayment:
		return paymentKey{r.PayerNumber, kindOf(r.TK), normRef(r.Reference), r.Amount}, true
	case *CancellationResult:
		return paymentKey{r.PayerNumber, kindOf(r.PaymentTK), normRef(r.Reference), r.Amount}, true
	}
	return paymentKey{}, false
}

// applyBatch reads the open payments the batch's records name (after
// writing the states already decided, so the database has them) and
// applies the records in file order.
func (a *applier) applyBatch() error {
	if len(a.batch) == 0 {
		return nil
	}
	a.open = map[paymentKey][]*AutogiroPaymentItem{}
	if a.matching {
		if err := a.flush(); err != nil {
			return err
		}
		var keys []AutogiroPaymentKey
		for _, rec := range a.batch {
			if k, ok := keyOf(rec); ok {
				a.open[k] = nil
				keys = append(keys, AutogiroPaymentKey{Payer: k.payer, Amount: k.amount})
			}
		}
		err := OpenPayments(a.ctx, a.tx, a.account.ID, a.sectionID, keys, func(p AutogiroPaymentItem) error {
			k := paymentKey{p.PayerNumber, p.Kind, normRef(p.Reference), p.Amount}
			if list, ok := a.open[k]; ok { // the query's payer × amount is wider than the keys
				a.open[k] = append(list, &p)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for i, rec := range a.batch {
		a.batch[i] = nil
		if err := a.applyRecord(rec); err != nil {
			return err
		}
	}
	a.batch = a.batch[:0]
	a.open = nil
	return nil
}

// take finds the open payment a report record speaks of: first by the
// status it must have, preferring the payment date given.
func (a *applier) take(payer, kind, ref string, amount int64, day time.Time, statuses ...string) *AutogiroPaymentItem {
	list := a.open[paymentKey{payer, kind, normRef(ref), amount}]
	var best *AutogiroPaymentItem
	for _, p := range list {
		ok := false
		for _, s := range statuses {
			ok = ok || p.Status == s
		}
		if !ok {
			continue
		}
		if best == nil || p.PaymentDate == day.Format(time.DateOnly) {
			best = p
		}
	}
	return best
}

func kindOf(tk int) string {
	if tk == TKPayout {
		return AutogiroRefund
	}
	return AutogiroDebit
}

func (a *applier) apply(rec Record) error {
	switch r := rec.(type) {
	case *ReportOpening:
		return a.section(r)
	case *Closing:
		return nil
	case *Opening, *MandateRecord, *PaymentRecord, *AmendmentRecord:
		return validation.Field("file", "line %d: a submission file (Kadens' own export), not a report from Bankgirot", rec.LineNumber())
	}
	a.batch = append(a.batch, rec)
	if len(a.batch) >= a.batchSize {
		return a.applyBatch()
	}
	return nil
}

// applyRecord applies one record of a section, with a.open holding the
// payments of its batch.
func (a *applier) applyRecord(rec Record) error {
	a.res.Records++
	switch r := rec.(type) {
	case *MandateAdvice:
		return a.advice(r)
	case *PaymentResult:
		p := a.take(r.PayerNumber, kindOf(r.TK), r.Reference, r.Amount, r.Date, AutogiroSent, AutogiroCancelled)
		if p == nil {
			if a.take(r.PayerNumber, kindOf(r.TK), r.Reference, r.Amount, r.Date, AutogiroCompleted, AutogiroFailed) != nil {
				a.res.Unchanged++
				return nil
			}
			a.res.note(r.Line, "TK%02d of payer %s, %s öre, reference %q matches no sent transaction", r.TK, r.PayerNumber, strconv.FormatInt(r.Amount, 10), r.Reference)
			return nil
		}
		switch r.Status {
		case '0':
			a.res.PaymentsCompleted++
			return a.set(p, AutogiroCompleted, "0", true)
		case '9':
			a.res.PaymentsRetrying++
			return SetTransactionResult(a.ctx, a.tx, p.ID, p.Status, "9", false, a.now)
		default:
			a.res.PaymentsFailed++
			return a.set(p, AutogiroFailed, string(r.Status), true)
		}
	case *RejectedPayment:
		p := a.take(r.PayerNumber, kindOf(r.TK), r.Reference, r.Amount, r.Date, AutogiroSent, AutogiroCancelled)
		if p == nil {
			a.res.note(r.Line, "rejected TK%02d of payer %s, %d öre matches no sent transaction", r.TK, r.PayerNumber, r.Amount)
			return nil
		}
		a.res.PaymentsFailed++
		return a.set(p, AutogiroFailed, "rejected "+r.Comment, true)
	case *CancellationResult:
		kind := kindOf(r.PaymentTK)
		p := a.take(r.PayerNumber, kind, r.Reference, r.Amount, r.Date, AutogiroSent, AutogiroCancelled)
		if p == nil {
			a.res.note(r.Line, "TK%02d (comment %s) of payer %s, %d öre matches no sent transaction", r.TK, r.Comment, r.PayerNumber, r.Amount)
			return nil
		}
		switch {
		case r.TK >= 26 && (r.Comment == "14" || r.Comment == "18"):
			return a.redate(p, r)
		case r.TK <= 25 && r.Comment == "12", r.TK == 3 || r.TK == 11 || r.TK == 21:
			if p.Status == AutogiroCancelled {
				a.res.Unchanged++
			} else {
				a.res.PaymentsCancelled++
			}
			return a.set(p, AutogiroCancelled, fmt.Sprintf("%02d/%s", r.TK, r.Comment), false)
		default:
			a.res.note(r.Line, "TK%02d of transaction %s: comment code %s (not cancelled)", r.TK, p.ID, r.Comment)
			return SetTransactionResult(a.ctx, a.tx, p.ID, p.Status, fmt.Sprintf("%02d/%s", r.TK, r.Comment), false, a.now)
		}
	case *Refund:
		return a.refund(r)
	case *PaymentSummary:
		a.res.Records--
		return nil
	case *EMandate:
		return a.emandate(r)
	}
	return nil
}

// set records a transaction's new state; the UPDATEs are batched by
// state (flush), since a payment specification may hold 100,000 records.
func (a *applier) set(p *AutogiroPaymentItem, status, code string, settle bool) error {
	// Only a debit of an invoice becomes a payment (Settle).
	settle = settle && p.HasInvoice && p.Kind == AutogiroDebit
	k := result{status, code, settle}
	if a.pending == nil {
		a.pending = map[result][]string{}
	}
	a.pending[k] = append(a.pending[k], p.ID)
	p.Status = status
	if len(a.pending[k]) >= 500 {
		return a.flushOne(k)
	}
	return nil
}

type result struct {
	status, code string
	settle       bool
}

func (a *applier) flushOne(k result) error {
	ids := a.pending[k]
	delete(a.pending, k)
	return SetTransactionResults(a.ctx, a.tx, ids, a.sectionID, k.status, k.code, k.settle, a.now)
}

// flush writes every batched state.
func (a *applier) flush() error {
	for k := range a.pending {
		if err := a.flushOne(k); err != nil {
			return err
		}
	}
	return nil
}

func (a *applier) advice(r *MandateAdvice) error {
	ms, err := MandatesByPayer(a.ctx, a.tx, a.account.ID, r.PayerNumber)
	if err != nil {
		return err
	}
	code := r.Info + "/" + r.Comment
	pick := func(statuses ...string) *AutogiroMandate {
		for i := range ms {
			for _, s := range statuses {
				if ms[i].Status == s {
					return &ms[i]
				}
			}
		}
		return nil
	}
	switch r.Info {
	case "04", "42": // a new mandate: activated or refused
		m := pick(AutogiroSent, AutogiroCreated, AutogiroActive, AutogiroRejected)
		if m == nil {
			a.res.note(r.Line, "mandate advice %s for payer %s matches no mandate", code, r.PayerNumber)
			return nil
		}
		if r.Comment == "32" {
			if m.Status == AutogiroActive {
				a.res.Unchanged++
				return nil
			}
			if m.Status == AutogiroRejected {
				a.res.note(r.Line, "payer %s: mandate %s was rejected before; this advice says active", r.PayerNumber, m.ID)
				return nil
			}
			a.res.MandatesActivated++
			return SetMandate(a.ctx, a.tx, m.ID, AutogiroActive, code, a.now)
		}
		if m.Status == AutogiroRejected {
			a.res.Unchanged++
			return nil
		}
		a.res.MandatesRejected++
		return EndMandate(a.ctx, a.tx, *m, AutogiroRejected, code, "Bankgirot", false, a.now)
	case "03": // our cancellation
		m := pick(AutogiroCancelled)
		if m == nil {
			a.res.note(r.Line, "cancellation advice %s for payer %s matches no cancelled mandate", code, r.PayerNumber)
			return nil
		}
		if m.StatusCode == code {
			a.res.Unchanged++
			return nil
		}
		if r.Comment == "33" {
			a.res.MandatesConfirmed++
		} else {
			a.res.note(r.Line, "cancellation of mandate %s: comment code %s", m.ID, r.Comment)
		}
		return SetMandate(a.ctx, a.tx, m.ID, AutogiroCancelled, code, a.now)
	case "46", "43", "44", "10", "93": // ended by the payer, their bank or Bankgirot
		m := pick(AutogiroActive, AutogiroSent, AutogiroCreated)
		if m == nil {
			if pick(AutogiroCancelled, AutogiroRejected) != nil {
				a.res.Unchanged++
				return nil
			}
			a.res.note(r.Line, "mandate advice %s for payer %s matches no mandate", code, r.PayerNumber)
			return nil
		}
		by := "Bankgirot"
		if r.Info == "46" || r.Info == "93" {
			by = "Payer"
		}
		a.res.MandatesCancelled++
		return EndMandate(a.ctx, a.tx, *m, AutogiroCancelled, code, by, false, a.now)
	}
	a.res.note(r.Line, "mandate advice %s for payer %s: Kadens does not act on information code %s", code, r.PayerNumber, r.Info)
	return nil
}

// emandate turns an internet-bank mandate request into a mandate of the
// subscriber whose number is the payer number, approved by the next
// export.
func (a *applier) emandate(r *EMandate) error {
	if r.Message != "0" {
		a.res.Unchanged++ // a reminder of a request received before
		return nil
	}
	ms, err := MandatesByPayer(a.ctx, a.tx, a.account.ID, r.PayerNumber)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Status == AutogiroCreated || m.Status == AutogiroSent || m.Status == AutogiroActive {
			a.res.Unchanged++
			return nil
		}
	}
	n, err := strconv.ParseInt(r.PayerNumber, 10, 64)
	var sub string
	if err == nil {
		sub, err = a.tx.SubscriberByNumber(a.ctx, n)
	}
	if err != nil {
		a.res.note(r.Line, "internet-bank mandate of payer %s: no subscriber has that number; answer it by hand", r.PayerNumber)
		return nil
	}
	_, err = CreateMandateIn(a.ctx, a.tx, AutogiroMandate{AccountID: a.account.ID, SubscriberID: sub,
		PayerNumber: r.PayerNumber, ClearingNumber: r.Clearing, BankAccountNumber: r.Account, PayerID: r.PayerID,
		InternetBank: true}, a.now)
	if err != nil {
		return err
	}
	a.res.MandatesRequested++
	return nil
}

// redate applies a date change Bankgirot confirmed (TK26–29, comment 14
// or 18) to the sent payment it names: the payment date becomes the new
// one; the state stays. Kadens never asks for date changes itself, but a
// payee may through Bankgirot's internet service, and the report follows.
func (a *applier) redate(p *AutogiroPaymentItem, r *CancellationResult) error {
	code := fmt.Sprintf("%02d/%s", r.TK, r.Comment)
	if r.NewDate.IsZero() {
		a.res.note(r.Line, "TK%02d of transaction %s: comment code %s without a new payment date", r.TK, p.ID, r.Comment)
		return nil
	}
	if p.Status != AutogiroSent {
		a.res.note(r.Line, "TK%02d of transaction %s: moved to %s, but the transaction is %s", r.TK, p.ID, r.NewDate.Format(time.DateOnly), p.Status)
		return nil
	}
	day := r.NewDate.Format(time.DateOnly)
	if p.PaymentDate == day {
		a.res.Unchanged++
		return nil
	}
	a.res.PaymentsRedated++
	p.PaymentDate = day
	return SetTransactionDate(a.ctx, a.tx, p.ID, day, code, a.now)
}

// refund applies a TK77: the payer's bank paid a completed debit back
// (refund code 01 no mandate, 02 mandate revoked, 03 unexpected amount).
// The debit stays Completed — the money was collected — and is marked
// with the refund; a debit of an invoice is charged to the subscriber's
// account again after the commit (BookRefunds), so the ledger shows the
// amount as owed. The debit is found by payer, amount and reference,
// preferring one not paid back yet and then the original payment date;
// when every match is paid back already, the record is unchanged.
//
// The mark is a claim (SetPayerRefund), and a lost claim reads
// the debits again: another import running at once may have marked the
// debit picked here between the read and the mark, and on PostgreSQL the
// read does not see that until the other commits. Without the second read
// two reports paying back two debits alike would both mark the first and
// one refund would be lost. Each lost claim is a debit another import has
// marked and committed, so the loop ends.
func (a *applier) refund(r *Refund) error {
	day := r.Date.Format(time.DateOnly)
	for {
		list, err := CompletedDebits(a.ctx, a.tx, a.account.ID, r.PayerNumber, r.Amount)
		if err != nil {
			return err
		}
		var best *AutogiroPaymentItem
		for i := range list {
			p := &list[i]
			if normRef(p.Reference) != normRef(r.Reference) {
				continue
			}
			switch {
			case best == nil,
				best.Refunded && !p.Refunded,
				best.Refunded == p.Refunded && p.PaymentDate == day && best.PaymentDate != day:
				best = p
			}
		}
		if best == nil {
			a.res.note(r.Line, "TK77: the payer's bank paid back %d öre of payer %s's debit of %s (refund code %s), which matches no completed debit: settle it with the payer", r.Amount, r.PayerNumber, day, r.Code)
			return nil
		}
		if best.Refunded {
			a.res.Unchanged++
			return nil
		}
		claimed, err := SetPayerRefund(a.ctx, a.tx, best.ID, r.RefundDate.Format(time.DateOnly), r.Code, a.now)
		if err != nil {
			return err
		}
		if claimed {
			a.res.RefundsByPayerBank++
			return nil
		}
	}
}
