package avtalegiro_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/validation"
)

var t0 = time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)

func newTenant(t *testing.T, s *store.Store, name string) context.Context {
	t.Helper()
	return seed.Tenant(t, s, name, t0)
}

// agOCR is an OCR giro file of n payments on account 12345678903;
// serial numbers the transmission and day varies the end records (the
// same payments in other bytes).
func agOCR(t *testing.T, serial, n, day int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ocrgiro.NewWriter(&buf)
	d := ocrgiro.Date{Year: 2027, Month: 2, Day: day}
	_ = w.Begin(ocrgiro.Start{Sender: ocrgiro.NetsID, Number: fmt.Sprintf("%07d", serial), Recipient: "12345678"})
	_ = w.BeginAssignment(ocrgiro.AssignmentStart{Service: 9, Type: 0, AgreementID: "001234567", Number: fmt.Sprintf("%07d", serial), Account: "12345678903"})
	for i := 1; i <= n; i++ {
		if err := w.Payment(ocrgiro.Payment{Type: 15, Number: i, NetsDate: d, Centre: "13", DayCode: "15", PartialSettlement: "1",
			Serial: "00042", Amount: 29900, KID: "000123400000018", FormNumber: "0", ArchiveRef: "150112345", BankDate: d, PayerAccount: "98765432103"}); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.EndAssignment(ocrgiro.AssignmentEnd{Date1: d, Date2: d, Date3: d})
	if err := w.Close(d); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func agAccount(t *testing.T, s *store.Store, ctx context.Context) {
	t.Helper()
	if _, err := avtalegiro.CreateAccount(ctx, s, avtalegiro.AvtaleGiroAccount{Name: "a", BankAccountNumber: "12345678903", CustomerUnitID: "12345678",
		KIDAlgorithm: "MOD10", KIDLength: 15, LeadDays: 4, BaseComboAPIEndpointURL: "http://bank"}, t0); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAvtaleGiroFileChunks: a file larger than several chunks, imported
// from a reader that hands out bytes unevenly, is stored in chunks that
// read back as the same bytes; the same file again (also as another
// reader) is a repeat that changes nothing; other bytes with the same
// payments are a 400; a malformed file stores nothing.
func TestAvtaleGiroFileChunks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := newTenant(t, s, "a")
		agAccount(t, s, ctx)
		file := agOCR(t, 1, 5000, 15) // 810 kB: four chunks
		imp, err := avtalegiro.ImportFile(ctx, s, iotest.HalfReader(bytes.NewReader(file)), t0)
		if err != nil || imp.Repeated || imp.Payments != 5000 || imp.Kind != "Payments" {
			t.Fatalf("import: %+v %v", imp, err)
		}
		f, err := avtalegiro.File(ctx, s, imp.FileID)
		sum := sha256.Sum256(file)
		if err != nil || f.SHA256 != hex.EncodeToString(sum[:]) || f.Transactions != 5000 {
			t.Fatalf("file: %+v %v", f, err)
		}
		if got := readAll(t, avtalegiro.FileContent(ctx, s, imp.FileID)); !bytes.Equal(got, file) {
			t.Fatalf("read back %d bytes, want the %d imported", len(got), len(file))
		}
		var chunks int
		if err := s.DB().QueryRow(`SELECT COUNT(*) FROM avtalegiro_file_chunks WHERE file_id = $1`, imp.FileID).Scan(&chunks); err != nil || chunks != 4 {
			t.Fatalf("%d chunks %v", chunks, err)
		}
		again, err := avtalegiro.ImportFile(ctx, s, iotest.OneByteReader(bytes.NewReader(file[:100_000])), t0)
		if err == nil {
			t.Fatalf("a truncated file imported: %+v", again)
		}
		again, err = avtalegiro.ImportFile(ctx, s, bytes.NewReader(file), t0)
		if err != nil || !again.Repeated || again.FileID != imp.FileID || again.Kind != "Payments" {
			t.Fatalf("again: %+v %v", again, err)
		}
		_, err = avtalegiro.ImportFile(ctx, s, bytes.NewReader(agOCR(t, 1, 5000, 16)), t0)
		var verrs validation.Errors
		if !errors.As(err, &verrs) || !strings.Contains(err.Error(), "imported before from another file") {
			t.Fatalf("same payments, other bytes: %v", err)
		}
		var files, payments int
		if err := s.DB().QueryRow(`SELECT (SELECT COUNT(*) FROM avtalegiro_files), (SELECT COUNT(*) FROM avtalegiro_payments),
			(SELECT COUNT(*) FROM avtalegiro_file_chunks)`).Scan(&files, &payments, &chunks); err != nil {
			t.Fatal(err)
		}
		if files != 1 || payments != 5000 || chunks != 4 {
			t.Fatalf("%d files, %d payments, %d chunks after the repeats", files, payments, chunks)
		}
		other := newTenant(t, s, "b")
		if _, err := io.ReadAll(avtalegiro.FileContent(other, s, imp.FileID)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another tenant reads the file: %v", err)
		}
	})
}
