package invoicedoc

import (
	"testing"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
)

// measurer sets text in the PDF's own fonts and measures it, as the
// renderer does before it cuts text short with an ellipsis.
func measurer(t *testing.T) func(bold bool, size float64, s string) float64 {
	t.Helper()
	p := &pdfWriter{}
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	return func(bold bool, size float64, s string) float64 {
		p.font(bold, size)
		w, err := p.doc.MeasureTextWidth(s)
		if err != nil || p.err != nil {
			t.Fatalf("measure %q: %v %v", s, err, p.err)
		}
		return w
	}
}

// TestColumnsFit: no header of the line table is cut short in any
// language ("MVA-sats" was), and amounts up to 999 999.99 and every VAT
// rate with a decimal fit their columns.
func TestColumnsFit(t *testing.T) {
	width := measurer(t)
	total := 0.0
	for _, c := range columns {
		total += c.w
	}
	if total > contentW+0.01 {
		t.Fatalf("columns are %.2f points wide, the page has %.2f", total, contentW)
	}
	for _, lang := range Languages {
		for i, h := range allLabels[lang].lineHeaders() {
			// lineHeader sets headers in c.w − 4.
			if w, room := width(true, headerSize, h), columns[i].w-4; w > room {
				t.Errorf("%s header %q is %.1f points wide; column %d has %.1f", lang, h, w, i, room)
			}
		}
		nok, _ := money.LookupCurrency("NOK")
		rate, err := catalog.ParsePercentText("12.5")
		if err != nil {
			t.Fatal(err)
		}
		f := formatter{lang: lang, cur: nok}
		amount := FormatAmount(-99999999, nok, lang)
		values := []string{"999", amount, amount, f.percent(rate), amount, amount, amount}
		for i, s := range values {
			// Rows set values in c.w − 2.
			if w, room := width(false, lineSize, s), columns[i+1].w-2; w > room {
				t.Errorf("%s value %q is %.1f points wide; column %d has %.1f", lang, s, w, i+1, room)
			}
		}
	}
}

// TestPaymentBoxFits: what a payer types is never cut short: the longest
// KID, a kontonummer, the longest IBAN (Malta, 31 characters) with an
// 11-character BIC, a due date and a large amount, in every language.
func TestPaymentBoxFits(t *testing.T) {
	width := measurer(t)
	nok, _ := money.LookupCurrency("NOK")
	for _, lang := range Languages {
		l := allLabels[lang]
		p := &pdfWriter{v: view{L: l, IBAN: "MT84 MALT 0110 0001 2345 MTLC AST0 01S", BIC: "MALTMTMTXXX"}}
		for _, tc := range []struct {
			what  string
			bold  bool
			size  float64
			s     string
			width float64
		}{
			{"KID", true, 15, billing.KID(9999999999, billing.KIDMod11), boxKIDW}, // the longest KID
			{"account number", true, 12, "8888.88.88888", boxAccountW},
			{"due date", true, 11, "28.02.2027", boxDueW},
			{"amount", true, 11, "NOK " + FormatAmount(9999999999, nok, lang), boxAmountW},
			{"IBAN line", false, 9, p.ibanLine(), boxIBANW},
			{"KID label", true, 7.5, l.KID, boxKIDW},
			{"account label", true, 7.5, l.AccountNumber, boxAccountW},
			{"due date label", true, 7.5, l.DueDate, boxDueW},
			{"amount label", true, 7.5, l.TotalToPay, boxAmountW},
			{"KID note", false, 7.5, l.KIDNote, boxIBANW},
		} {
			if w := width(tc.bold, tc.size, tc.s); w > tc.width {
				t.Errorf("%s %s %q is %.1f points wide in a box of %.1f", lang, tc.what, tc.s, w, tc.width)
			}
		}
	}
}
