package ocrgiro_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
)

const benchN = 100_000

// BenchmarkWriteClaims writes a claim file of 100,000 claims (half with a
// two-line bank notice) to io.Discard: the format's share of an export.
func BenchmarkWriteClaims100k(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		w := ocrgiro.NewWriter(io.Discard)
		_ = w.Begin(ocrgiro.Start{Sender: "12345678", Number: "0000001", Recipient: ocrgiro.NetsID})
		_ = w.BeginAssignment(ocrgiro.AssignmentStart{Service: 21, Type: 0, Number: "0000001", Account: "12345678903"})
		c := ocrgiro.Claim{Type: ocrgiro.TypeNoNotice, Due: day(2027, 3, 1), Amount: 29900, KID: "000123400001012",
			ShortName: "NORDMANN O", ExternalRef: "Kadens faktura 1012"}
		notice := []ocrgiro.NoticeLine{{Line: 1, Text: "Premium, 1 mnd: 01.03.2027-31.03.2027 / kr 299,00 inkl. mva"}}
		for i := 1; i <= benchN; i++ {
			c.Number = i
			c.Type, c.Notice = ocrgiro.TypeNoNotice, nil
			if i%2 == 0 {
				c.Type, c.Notice = ocrgiro.TypeBankNotice, notice
			}
			if err := w.Claim(c); err != nil {
				b.Fatal(err)
			}
		}
		_ = w.EndAssignment(ocrgiro.AssignmentEnd{})
		if err := w.Close(ocrgiro.Date{}); err != nil {
			b.Fatal(err)
		}
	}
}

// OCRFile returns an OCR giro file of n AvtaleGiro payments.
func ocrFile(b *testing.B, n int) []byte {
	var buf bytes.Buffer
	w := ocrgiro.NewWriter(&buf)
	_ = w.Begin(ocrgiro.Start{Sender: ocrgiro.NetsID, Number: "0001301", Recipient: "12345678"})
	_ = w.BeginAssignment(ocrgiro.AssignmentStart{Service: 9, Type: 0, AgreementID: "001234567", Number: "0000001", Account: "12345678903"})
	for i := 1; i <= n; i++ {
		if err := w.Payment(ocrgiro.Payment{Type: 15, Number: i, NetsDate: day(2027, 1, 15), Centre: "13", DayCode: "15",
			PartialSettlement: "1", Serial: "00042", Amount: 29900, KID: "000123400001012", FormNumber: "0", ArchiveRef: "150112345",
			BankDate: day(2027, 1, 15), PayerAccount: "98765432103"}); err != nil {
			b.Fatal(err)
		}
	}
	d := day(2027, 1, 15)
	_ = w.EndAssignment(ocrgiro.AssignmentEnd{Date1: d, Date2: d, Date3: d})
	if err := w.Close(d); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkReadPayments100k reads an OCR file of 100,000 payments item by
// item: the format's share of an import.
func BenchmarkReadPayments100k(b *testing.B) {
	file := ocrFile(b, benchN)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		r := ocrgiro.NewReader(bytes.NewReader(file))
		n := 0
		for {
			item, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := item.(ocrgiro.Payment); ok {
				n++
			}
		}
		if n != benchN {
			b.Fatalf("read %d payments", n)
		}
	}
}
