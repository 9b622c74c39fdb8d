package ocrgiro_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The fact sheet's example files parse and re-serialize to the same bytes.
func TestExamplesRoundTrip(t *testing.T) {
	for _, name := range []string{"claims.txt", "cancellation.txt", "mandates.txt", "ocr-incoming.txt"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			tr, err := ocrgiro.Parse(bytes.NewReader(in))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			var out bytes.Buffer
			if err := ocrgiro.Write(&out, tr); err != nil {
				t.Fatalf("write: %v", err)
			}
			if !bytes.Equal(in, out.Bytes()) {
				t.Errorf("re-serialized differs:\n%s\nwant\n%s", out.Bytes(), in)
			}
		})
	}
}

// What the examples hold, field by field.
func TestExamplesContent(t *testing.T) {
	read := func(name string) *ocrgiro.Transmission {
		f, err := os.Open(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tr, err := ocrgiro.Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	claims := read("claims.txt")
	a := claims.Assignments[0]
	if a.Start.Account != "12345678903" || a.Start.Number != "2211001" || len(a.Claims) != 2 {
		t.Fatalf("claims assignment = %+v", a.Start)
	}
	c := a.Claims[0]
	if c.Type != ocrgiro.TypeBankNotice || c.Amount != 29900 || c.KID != "000123400001012" ||
		c.Due != (ocrgiro.Date{Year: 2027, Month: time.January, Day: 15}) || c.ShortName != "NORDMANN O" ||
		c.ExternalRef != "Kadens faktura 1012" || len(c.Notice) != 1 ||
		c.Notice[0].Text != "Premium, 1 mnd: 01.01.2027-31.01.2027 / kr 299,00 inkl. mva" {
		t.Errorf("claim 1 = %+v", c)
	}
	if c2 := a.Claims[1]; c2.Type != ocrgiro.TypeNoNotice || c2.Amount != 124950 || len(c2.Notice) != 0 {
		t.Errorf("claim 2 = %+v", c2)
	}
	m := read("mandates.txt").Assignments[0].Mandates
	if len(m) != 3 || !m[0].Notice || m[1].Notice || m[2].Registration != ocrgiro.MandateDeleted || m[2].KID != "000999900000012" {
		t.Errorf("mandates = %+v", m)
	}
	p := read("ocr-incoming.txt").Assignments[0].Payments
	if len(p) != 1 || p[0].Type != ocrgiro.TypeAvtaleGiroPayment || p[0].Amount != 29900 || p[0].KID != "000123400001012" ||
		p[0].PayerAccount != "98765432103" || p[0].ArchiveRef != "150112345" {
		t.Errorf("payments = %+v", p)
	}
}

func day(y int, m time.Month, d int) ocrgiro.Date { return ocrgiro.Date{Year: y, Month: m, Day: d} }

// goldenFiles are files Kadens writes, checked byte for byte.
var goldenFiles = map[string]*ocrgiro.Transmission{
	"claims-bank-notice.golden": {
		Start: ocrgiro.Start{Sender: "12345678", Number: "0101001", Recipient: ocrgiro.NetsID},
		Assignments: []ocrgiro.Assignment{{
			Start: ocrgiro.AssignmentStart{Service: ocrgiro.ServiceAvtaleGiro, Type: ocrgiro.AssignmentClaims, Number: "0000007", Account: "12345678903"},
			Claims: []ocrgiro.Claim{
				{Type: ocrgiro.TypeBankNotice, Number: 1, Due: day(2027, 3, 1), Amount: 19900, KID: "000123400001053",
					ShortName: "Ørnes Åse", ExternalRef: "Avis mars 2027",
					Notice: []ocrgiro.NoticeLine{{Line: 1, Text: "Dagsavisen digital, mars 2027"}, {Line: 3, Text: strings.Repeat("æ", 40) + "kr 199,00"}}},
				{Type: ocrgiro.TypeBankNotice, Number: 2, Due: day(2027, 2, 26), Amount: 1, KID: "12345674", Notice: []ocrgiro.NoticeLine{{Line: 42, Text: "Siste linje"}}},
			},
		}},
	},
	"claims-no-notice.golden": {
		Start: ocrgiro.Start{Sender: "12345678", Number: "0101002", Recipient: ocrgiro.NetsID},
		Assignments: []ocrgiro.Assignment{{
			Start: ocrgiro.AssignmentStart{Service: ocrgiro.ServiceAvtaleGiro, Type: ocrgiro.AssignmentClaims, Number: "0000008", Account: "12345678903"},
			Claims: []ocrgiro.Claim{
				{Type: ocrgiro.TypeNoNotice, Number: 1, Due: day(2027, 3, 1), Amount: 19900, KID: "000123400001053"},
				{Type: ocrgiro.TypeNoNotice, Number: 5, Due: day(2027, 4, 1), Amount: 99999999, KID: "000123400001061", ShortName: ocrgiro.Fit("Zoë Ångström-李", 10)},
			},
		}},
	},
	"cancellation.golden": {
		Start: ocrgiro.Start{Sender: "12345678", Number: "0101003", Recipient: ocrgiro.NetsID},
		Assignments: []ocrgiro.Assignment{{
			Start:  ocrgiro.AssignmentStart{Service: ocrgiro.ServiceAvtaleGiro, Type: ocrgiro.AssignmentCancellations, Number: "0000009", Account: "12345678903"},
			Claims: []ocrgiro.Claim{{Type: ocrgiro.TypeCancellation, Number: 1, Due: day(2027, 3, 1), Amount: 19900, KID: "000123400001053", ExternalRef: "Avis mars 2027"}},
		}},
	},
}

func TestGolden(t *testing.T) {
	for name, tr := range goldenFiles {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := ocrgiro.Write(&out, tr); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("differs from %s:\n%s", path, out.Bytes())
			}
			for i, l := range bytes.Split(bytes.TrimSuffix(want, []byte("\n")), []byte("\n")) {
				if len(l) != ocrgiro.RecordLen {
					t.Errorf("line %d is %d bytes", i+1, len(l))
				}
			}
			back, err := ocrgiro.Parse(bytes.NewReader(want))
			if err != nil {
				t.Fatalf("parse back: %v", err)
			}
			if got, want := fmt.Sprint(back.Assignments[0].Claims), fmt.Sprint(tr.Assignments[0].Claims); got != want {
				t.Errorf("read back %s, wrote %s", got, want)
			}
		})
	}
}

// Rules of the writer: what it refuses.
func TestWriterRefuses(t *testing.T) {
	base := ocrgiro.Claim{Type: ocrgiro.TypeNoNotice, Number: 1, Due: day(2027, 1, 1), Amount: 100, KID: "12345674"}
	cases := []struct {
		name   string
		change func(*ocrgiro.Claim)
		want   string
	}{
		{"notice on type 02", func(c *ocrgiro.Claim) { c.Notice = []ocrgiro.NoticeLine{{Line: 1, Text: "x"}} }, "only a claim with notice"},
		{"line 43", func(c *ocrgiro.Claim) { c.Type = 21; c.Notice = []ocrgiro.NoticeLine{{Line: 43, Text: "x"}} }, "must be 1 to 42"},
		{"blank line", func(c *ocrgiro.Claim) { c.Type = 21; c.Notice = []ocrgiro.NoticeLine{{Line: 1, Text: "  "}} }, "is blank"},
		{"line too long", func(c *ocrgiro.Claim) {
			c.Type = 21
			c.Notice = []ocrgiro.NoticeLine{{Line: 1, Text: strings.Repeat("x", 81)}}
		}, "up to 80"},
		{"not latin-1", func(c *ocrgiro.Claim) { c.ExternalRef = "€ 10" }, "external reference"},
		{"zero amount", func(c *ocrgiro.Claim) { c.Amount = 0 }, "amount 0"},
		{"KID letters", func(c *ocrgiro.Claim) { c.KID = "12a" }, "KID"},
		{"KID 26 digits", func(c *ocrgiro.Claim) { c.KID = strings.Repeat("1", 26) }, "KID"},
		{"no due date", func(c *ocrgiro.Claim) { c.Due = ocrgiro.Date{} }, "due date"},
		{"type 15", func(c *ocrgiro.Claim) { c.Type = 15 }, "transaction type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.change(&c)
			w := ocrgiro.NewWriter(io.Discard)
			_ = w.Begin(ocrgiro.Start{Sender: "12345678", Number: "0000001", Recipient: ocrgiro.NetsID})
			_ = w.BeginAssignment(ocrgiro.AssignmentStart{Service: 21, Type: 0, Number: "0000001", Account: "12345678903"})
			err := w.Claim(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("descending numbers", func(t *testing.T) {
		w := ocrgiro.NewWriter(io.Discard)
		_ = w.Begin(ocrgiro.Start{Sender: "12345678", Number: "0000001", Recipient: ocrgiro.NetsID})
		_ = w.BeginAssignment(ocrgiro.AssignmentStart{Service: 21, Type: 0, Number: "0000001", Account: "12345678903"})
		c := base
		c.Number = 2
		if err := w.Claim(c); err != nil {
			t.Fatal(err)
		}
		c.Number = 2
		if err := w.Claim(c); err == nil || !strings.Contains(err.Error(), "ascending") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("cancellation in a claims assignment", func(t *testing.T) {
		w := ocrgiro.NewWriter(io.Discard)
		_ = w.Begin(ocrgiro.Start{Sender: "12345678", Number: "0000001", Recipient: ocrgiro.NetsID})
		_ = w.BeginAssignment(ocrgiro.AssignmentStart{Service: 21, Type: 0, Number: "0000001", Account: "12345678903"})
		c := base
		c.Type = ocrgiro.TypeCancellation
		if err := w.Claim(c); err == nil {
			t.Fatal("accepted")
		}
	})
}

// Broken files are refused with the line and the reason.
func TestReaderErrors(t *testing.T) {
	claims, err := os.ReadFile(filepath.Join("testdata", "claims.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(claims), "\n"), "\n")
	edit := func(n int, f func(string) string) string {
		c := append([]string(nil), lines...)
		c[n-1] = f(c[n-1])
		return strings.Join(c, "\n") + "\n"
	}
	set := func(s string, pos int, v string) string { return s[:pos-1] + v + s[pos-1+len(v):] }
	cases := []struct {
		name string
		file string
		line int
		want string
	}{
		{"empty", "", 1, "empty"},
		{"short line", edit(3, func(s string) string { return s[:79] }), 3, "79 characters"},
		{"utf-8 ø", edit(4, func(s string) string { return s[:15] + "ø" + s[16:] }), 4, "81 characters"},
		{"wrong sum in 88", edit(9, func(s string) string { return set(s, 25, "00000000000154851") }), 9, "sum of 154851"},
		{"wrong count in 88", edit(9, func(s string) string { return set(s, 9, "00000003") }), 9, "3 transactions"},
		{"wrong records in 89", edit(10, func(s string) string { return set(s, 17, "00000011") }), 10, "11 records"},
		{"wrong first due in 88", edit(9, func(s string) string { return set(s, 42, "160127") }), 9, "due dates"},
		{"wrong 89 date", edit(10, func(s string) string { return set(s, 42, "200127") }), 10, "earliest due date"},
		{"bad date", edit(3, func(s string) string { return set(s, 16, "310227") }), 3, "not a date"},
		{"left-aligned KID", edit(3, func(s string) string { return set(s, 50, "000123400001012          ") }), 3, "KID"},
		{"zero transaction number", edit(3, func(s string) string { return set(s, 9, "0000000") }), 3, "more than 0"},
		{"31 number differs", edit(4, func(s string) string { return set(s, 9, "0000009") }), 4, "differs"},
		{"notice line 43", edit(5, func(s string) string { return set(s, 17, "043") }), 5, "1 to 42"},
		{"notice column 3", edit(5, func(s string) string { return set(s, 20, "3") }), 5, "column 3"},
		{"49 on type 02", strings.Join(append(append(append([]string{}, lines[:8]...), lines[4]), lines[8:]...), "\n") + "\n", 9, "type 21"},
		{"missing end", strings.Join(lines[:9], "\n") + "\n", 9, "without a transmission end"},
		{"not NY", edit(2, func(s string) string { return set(s, 1, "XX") }), 2, "format code"},
		{"filler not zeros", edit(1, func(s string) string { return set(s, 80, "1") }), 1, "filler"},
		{"extra after end", string(claims) + lines[0] + "\n", 11, "follows the transmission end"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ocrgiro.Parse(strings.NewReader(tc.file))
			var se *ocrgiro.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a SyntaxError", err)
			}
			if se.Line != tc.line || !strings.Contains(se.Reason, tc.want) {
				t.Fatalf("err = %v, want line %d and %q", err, tc.line, tc.want)
			}
		})
	}
}

// CRLF line ends are read like LF.
func TestReaderCRLF(t *testing.T) {
	in, _ := os.ReadFile(filepath.Join("testdata", "ocr-incoming.txt"))
	crlf := bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))
	if _, err := ocrgiro.Parse(bytes.NewReader(crlf)); err != nil {
		t.Fatal(err)
	}
}

// Anything the reader accepts, the writer writes back identically (for
// files whose notice records are in line order), and the reader never
// panics.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"claims.txt", "cancellation.txt", "mandates.txt", "ocr-incoming.txt", "claims-bank-notice.golden"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		tr, err := ocrgiro.Parse(bytes.NewReader(in))
		if err != nil {
			var se *ocrgiro.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("not a SyntaxError: %v", err)
			}
			return
		}
		var out bytes.Buffer
		if err := ocrgiro.Write(&out, tr); err != nil {
			return // e.g. notice halves the writer would not split that way
		}
		again, err := ocrgiro.Parse(&out)
		if err != nil {
			t.Fatalf("re-serialized file does not parse: %v\n%s", err, out.Bytes())
		}
		if fmt.Sprint(again) != fmt.Sprint(tr) {
			t.Fatalf("round trip changed the content:\n%v\n%v", tr, again)
		}
	})
}

// Claims the writer accepts are read back as written.
func FuzzWriteClaim(f *testing.F) {
	f.Add(21, int64(29900), "000123400001012", "NORDMANN O", "Kadens faktura", "Premium, 1 mnd: 01.01.2027-31.01.2027 / kr 299,00", 15)
	f.Add(2, int64(1), "1", "", "", "", 1)
	f.Add(93, int64(99999999999999999), "1234567890123456789012345", "ÆØÅæøå", "ÿ", "", 28)
	f.Fuzz(func(t *testing.T, typ int, amount int64, kid, name, ref, notice string, dd int) {
		c := ocrgiro.Claim{Type: typ, Number: 1, Due: day(2027, 2, dd), Amount: amount, KID: kid, ShortName: name, ExternalRef: ref}
		if notice != "" {
			c.Notice = []ocrgiro.NoticeLine{{Line: 1, Text: notice}}
		}
		if ocrgiro.CheckClaim(c) != nil {
			return
		}
		at := ocrgiro.AssignmentClaims
		if typ == ocrgiro.TypeCancellation {
			at = ocrgiro.AssignmentCancellations
		}
		tr := &ocrgiro.Transmission{Start: ocrgiro.Start{Sender: "12345678", Number: "0000001", Recipient: ocrgiro.NetsID},
			Assignments: []ocrgiro.Assignment{{Start: ocrgiro.AssignmentStart{Service: 21, Type: at, Number: "0000001", Account: "12345678903"}, Claims: []ocrgiro.Claim{c}}}}
		var out bytes.Buffer
		if err := ocrgiro.Write(&out, tr); err != nil {
			t.Fatalf("write: %v", err)
		}
		back, err := ocrgiro.Parse(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("parse: %v\n%s", err, out.Bytes())
		}
		got := back.Assignments[0].Claims[0]
		if got.Amount != c.Amount || got.KID != c.KID || got.Due != c.Due ||
			got.ShortName != strings.TrimRight(c.ShortName, " ") || got.ExternalRef != strings.TrimRight(c.ExternalRef, " ") {
			t.Fatalf("read back %+v, wrote %+v", got, c)
		}
	})
}
