package autogiro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/kadens/kadens/internal/bankday"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// Stockholm is the time zone of Bankgirot's dates.
var Stockholm = mustLoad("Europe/Stockholm")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.FixedZone("CET", 3600)
	}
	return loc
}

// Today is the Swedish calendar day of now.
func Today(now time.Time) time.Time { return bankday.Date(now.In(Stockholm)) }

// Counts are the records of an export file by kind.
type Counts struct {
	NewMandates          int `json:"newMandates"`
	MandateCancellations int `json:"mandateCancellations"`
	Debits               int `json:"debits"`
	Refunds              int `json:"refunds"`
	PaymentCancellations int `json:"paymentCancellations"`
}

func (c Counts) total() int {
	return c.NewMandates + c.MandateCancellations + c.Debits + c.Refunds + c.PaymentCancellations
}

// ErrNothingToExport is the answer to an export with nothing pending.
var ErrNothingToExport = validation.Field("organizationId", "nothing is pending for the organization's Autogiro accounts: no new or cancelled mandate, no payment to send or cancel (payments wait until their mandate is active)")

// ExportFile is what an export wrote.
type ExportFile struct {
	AutogiroExportFile
	Counts Counts
}

// Export writes one submission file with everything pending for the
// organization's Autogiro accounts: for each account (bankgiro) a mandate
// section (new mandates TK04, cancellations TK03), a payment section
// (debits TK82, refunds TK32; only of active mandates) and an amendment
// section (cancellations of sent payments, TK25). It claims what it writes
// in the same transaction that stores the file, so nothing is exported
// twice, even by concurrent exports. progress, if not nil, is told the
// number of records written now and then.
func Export(ctx context.Context, st *store.Store, organizationID string, now time.Time, progress func(records int)) (ExportFile, error) {
	var out ExportFile
	err := st.InTx(ctx, func(tx *store.Tx) error {
		accounts, err := AccountsOf(ctx, tx, organizationID)
		if errors.Is(err, store.ErrNotFound) {
			return validation.Field("organizationId", "there is no organization %s", organizationID)
		}
		if err != nil {
			return err
		}
		if len(accounts) == 0 {
			return validation.Field("organizationId", "organization %s has no Autogiro account", organizationID)
		}
		f := AutogiroExportFile{ID: store.NewID(), OrganizationID: organizationID, CreatedAt: now.UTC().Truncate(time.Microsecond)}
		today := Today(now)
		todayS := today.Format(time.DateOnly)
		// Bankgirot needs payment orders by the banking day before the
		// payment date.
		earliest := bankday.Sweden.After(today, 1).Format(time.DateOnly)
		// The file is spooled to disk and stored in chunks afterwards: on
		// PostgreSQL the claimed payments stream from the server while they
		// are written, and the connection cannot store a chunk meanwhile.
		// So the export holds neither the file nor its payments in memory.
		spool, err := os.CreateTemp("", "kadens-autogiro-*.tmp")
		if err != nil {
			return fmt.Errorf("autogiro: export: %w", err)
		}
		defer func() {
			spool.Close()
			os.Remove(spool.Name())
		}()
		var counts Counts
		written := 0
		tick := func() {
			written++
			if progress != nil && written%10000 == 0 {
				progress(written)
			}
		}
		for _, a := range accounts {
			w := NewWriter(spool, Opening{Written: today, CustomerNumber: a.BankgiroCustomerNumber, Bankgiro: a.BankgiroNumber})
			mandates, err := ClaimMandates(ctx, tx, a.ID, f.ID, todayS, now)
			if err != nil {
				return fmt.Errorf("autogiro: export: %w", err)
			}
			sort.Slice(mandates, func(i, j int) bool { return lessPayer(mandates[i].PayerNumber, mandates[j].PayerNumber) })
			for _, m := range mandates {
				rec := MandateRecord{TK: TKMandate, Bankgiro: a.BankgiroNumber, PayerNumber: m.PayerNumber}
				if !m.InternetBank { // an internet-bank mandate is approved by its payer number alone
					rec.Clearing, rec.Account, rec.PayerID = fileClearing(m.Clearing), m.Account, m.PayerID
				}
				if err := w.Mandate(rec); err != nil {
					return fmt.Errorf("autogiro: export mandate %s: %w", m.ID, err)
				}
				counts.NewMandates++
				tick()
			}
			cancels, err := ClaimMandateCancellations(ctx, tx, a.ID, f.ID, todayS, now)
			if err != nil {
				return fmt.Errorf("autogiro: export: %w", err)
			}
			sort.Slice(cancels, func(i, j int) bool { return lessPayer(cancels[i].PayerNumber, cancels[j].PayerNumber) })
			for _, m := range cancels {
				if err := w.Mandate(MandateRecord{TK: TKCancelMandate, Bankgiro: a.BankgiroNumber, PayerNumber: m.PayerNumber}); err != nil {
					return fmt.Errorf("autogiro: export mandate cancellation %s: %w", m.ID, err)
				}
				counts.MandateCancellations++
				tick()
			}
			err = ClaimPayments(ctx, tx, a.ID, f.ID, todayS, earliest, now, func(p AutogiroPaymentItem) error {
				rec := PaymentRecord{TK: TKDebit, Date: mustDate(p.PaymentDate), PayerNumber: p.PayerNumber,
					Amount: p.Amount, Bankgiro: a.BankgiroNumber, Reference: p.Reference}
				if p.Kind == AutogiroRefund {
					rec.TK = TKPayout
					counts.Refunds++
				} else {
					counts.Debits++
				}
				if err := w.Payment(rec); err != nil {
					return fmt.Errorf("autogiro: export transaction %s: %w", p.ID, err)
				}
				tick()
				return nil
			})
			if err != nil {
				return fmt.Errorf("autogiro: export: %w", err)
			}
			f.DebitTotal += w.DebitTotal
			f.RefundTotal += w.PayoutTotal
			amend, err := ClaimPaymentCancellations(ctx, tx, a.ID, f.ID, todayS, now)
			if err != nil {
				return fmt.Errorf("autogiro: export: %w", err)
			}
			if len(amend) > 0 {
				payers, err := PayerNumbers(ctx, tx, a.ID)
				if err != nil {
					return fmt.Errorf("autogiro: export: %w", err)
				}
				sortPayments(amend, payers)
			}
			for _, p := range amend {
				code := TKDebit
				if p.Kind == AutogiroRefund {
					code = TKPayout
				}
				if err := w.Amendment(AmendmentRecord{TK: TKCancelOne, Bankgiro: a.BankgiroNumber, PayerNumber: p.PayerNumber,
					Date: mustDate(p.PaymentDate), Amount: p.Amount, PaymentTK: code, Reference: p.Reference}); err != nil {
					return fmt.Errorf("autogiro: export cancellation of transaction %s: %w", p.ID, err)
				}
				counts.PaymentCancellations++
				tick()
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if counts.total() == 0 {
			return ErrNothingToExport
		}
		cj, err := json.Marshal(counts)
		if err != nil {
			return err
		}
		f.Counts = string(cj)
		f.FileName = FileName(accounts[0].BankgiroCustomerNumber, now)
		if f.Size, err = spool.Seek(0, io.SeekCurrent); err != nil {
			return fmt.Errorf("autogiro: export: %w", err)
		}
		if err := InsertExportFile(ctx, tx, f); err != nil {
			return err
		}
		if _, err := spool.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("autogiro: export: %w", err)
		}
		cw := ExportFileWriter(ctx, tx, f.ID)
		if _, err := io.Copy(cw, spool); err != nil {
			return fmt.Errorf("autogiro: export: %w", err)
		}
		if err := cw.Close(); err != nil {
			return err
		}
		out = ExportFile{AutogiroExportFile: f, Counts: counts}
		if progress != nil {
			progress(written)
		}
		return nil
	})
	if err != nil {
		return ExportFile{}, err
	}
	return out, nil
}

// FileName is Bankgirot's dataset name of a submission file sent by
// file transfer: BFEP.IAGAG.K0nnnnnn.Dyymmdd.Thhmmss (Swedish time).
func FileName(customerNumber string, now time.Time) string {
	t := now.In(Stockholm)
	return fmt.Sprintf("BFEP.IAGAG.K0%06s.D%s.T%s", customerNumber, t.Format("060102"), t.Format("150405"))
}

// fileClearing is the 4-digit clearing number a file carries.
func fileClearing(c string) string {
	if len(c) > 4 {
		return c[:4]
	}
	return c
}

func mustDate(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{} // the writer refuses a missing date
	}
	return t
}

// lessPayer orders payer numbers numerically.
func lessPayer(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// sortPayments orders payments by date, payer and id, so a file's order
// does not depend on the database's. The payer number is looked up once
// per payment, and payments are compared in place: in a file of 100,000
// the map lookups and struct copies of each comparison were a fifth of
// the export's Go time.
func sortPayments(ps []AutogiroPaymentItem, payers map[string]string) {
	for i := range ps {
		ps[i].PayerNumber = payers[ps[i].MandateID]
	}
	sort.Slice(ps, func(i, j int) bool {
		a, b := &ps[i], &ps[j]
		if a.PaymentDate != b.PaymentDate {
			return a.PaymentDate < b.PaymentDate
		}
		if a.PayerNumber != b.PayerNumber {
			return lessPayer(a.PayerNumber, b.PayerNumber)
		}
		return a.ID < b.ID
	})
}
