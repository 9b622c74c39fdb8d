package invoicedoc

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/signintech/gopdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/kadens/kadens/internal/store"
)

// PDFContentType is the media type PDF writes.
const PDFContentType = "application/pdf"

// A4 in points, and the layout grid.
const (
	pageW, pageH = 595.28, 841.89
	margin       = 42.0 // ≈ 15 mm
	contentW     = pageW - 2*margin
	bottomLimit  = pageH - 56 // rows stop here; the footer is below
)

// columns of the line table: description, quantity, unit price, discount,
// VAT rate, net, VAT, gross (points; they fill contentW). Every header of
// every language fits its column in headerSize bold, and amounts up to
// 999 999.99 fit in lineSize (TestColumnsFit measures them).
var columns = []struct {
	w     float64
	right bool
}{{153, false}, {34, true}, {58, true}, {52, true}, {46, true}, {58, true}, {52, true}, {58.28, true}}

// Font sizes of the line table.
const (
	headerSize = 7.5
	lineSize   = 8.5
)

// PDF writes inv as an A4 PDF with the same content as HTML except the
// logo (rendering never fetches anything). Text is set in the Go fonts
// (golang.org/x/image/font/gofont, BSD licence), embedded as subsets, so
// every Latin character (æ, ø, å, …) renders; each text run carries a
// ToUnicode map, so the text can be copied and searched. The output is a
// function of inv and o alone: the creation date is the issue time.
func PDF(w io.Writer, inv store.Invoice, o Options) error {
	v, err := newView(inv, o)
	if err != nil {
		return err
	}
	p := &pdfWriter{v: v}
	if err := p.start(); err != nil {
		return err
	}
	p.doc.SetInfo(gopdf.PdfInfo{Title: fmt.Sprintf("%s %d", v.L.Invoice, v.Number), Author: v.Seller.Name,
		Subject: v.L.KID + " " + v.KID, Creator: "Kadens", Producer: "Kadens", CreationDate: inv.IssuedAt.In(time.UTC)})
	p.render()
	if p.err != nil {
		return fmt.Errorf("invoicedoc: pdf of invoice %s: %w", inv.ID, p.err)
	}
	if _, err := p.doc.WriteTo(w); err != nil {
		return fmt.Errorf("invoicedoc: write pdf of invoice %s: %w", inv.ID, err)
	}
	return nil
}

// pdfWriter lays out one document, keeping the first error so the layout
// code reads top to bottom.
type pdfWriter struct {
	doc  gopdf.GoPdf
	v    view
	y    float64
	page int
	err  error
}

// start begins an A4 document in points with the Go fonts.
func (p *pdfWriter) start() error {
	p.doc.Start(gopdf.Config{PageSize: *gopdf.PageSizeA4, Unit: gopdf.UnitPT})
	for _, f := range []struct {
		family string
		ttf    []byte
	}{{"regular", goregular.TTF}, {"bold", gobold.TTF}} {
		if err := p.doc.AddTTFFontData(f.family, f.ttf); err != nil {
			return fmt.Errorf("invoicedoc: pdf font: %w", err)
		}
	}
	return nil
}

func (p *pdfWriter) check(err error) {
	if p.err == nil {
		p.err = err
	}
}

func (p *pdfWriter) font(bold bool, size float64) {
	family := "regular"
	if bold {
		family = "bold"
	}
	p.check(p.doc.SetFont(family, "", size))
}

func (p *pdfWriter) grey(on bool) {
	if on {
		p.doc.SetTextColor(100, 100, 100)
	} else {
		p.doc.SetTextColor(20, 20, 20)
	}
}

// text writes s in a box of width w at (x, y), left or right aligned,
// cut short with an ellipsis when it does not fit, so no text ever runs
// into its neighbour.
func (p *pdfWriter) text(x, y, w float64, s string, right bool) {
	if s == "" {
		return
	}
	s = p.fit(s, w)
	align := gopdf.Left | gopdf.Top
	if right {
		align = gopdf.Right | gopdf.Top
	}
	p.doc.SetXY(x, y)
	p.check(p.doc.CellWithOption(&gopdf.Rect{W: w, H: 12}, s, gopdf.CellOption{Align: align}))
}

// fit returns s, or its longest prefix that fits in w with an ellipsis.
func (p *pdfWriter) fit(s string, w float64) string {
	width := func(s string) float64 {
		n, err := p.doc.MeasureTextWidth(s)
		p.check(err)
		return n
	}
	if width(s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && width(string(r)+"…") > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

func (p *pdfWriter) rule(y, width float64) {
	p.doc.SetLineWidth(width)
	p.doc.Line(margin, y, margin+contentW, y)
}

func (p *pdfWriter) newPage() {
	p.doc.AddPage()
	p.page++
	p.y = margin
	p.font(false, 7.5)
	p.grey(true)
	p.text(margin, pageH-40, contentW, fmt.Sprintf("%s %d · %s · %s %d", p.v.L.Invoice, p.v.Number, p.v.Seller.Name, p.v.L.Page, p.page), true)
	p.grey(false)
}

// need starts a new page when h points do not fit on this one, and
// reports whether it did.
func (p *pdfWriter) need(h float64) bool {
	if p.y+h <= bottomLimit {
		return false
	}
	p.newPage()
	return true
}

func (p *pdfWriter) render() {
	v := p.v
	p.newPage()

	// Seller, left: the name on up to two lines.
	p.font(true, 14)
	name, err := p.doc.SplitTextWithWordWrap(v.Seller.Name, 250)
	p.check(err)
	if len(name) > 2 {
		name = append(name[:1], strings.Join(name[1:], " "))
	}
	y := p.y
	for _, n := range name {
		p.text(margin, y, 250, n, false)
		y += 17
	}
	p.font(false, 9)
	y += 3
	for _, s := range []string{v.SellerNumber, v.SellerRegister} {
		if s != "" {
			p.text(margin, y, 280, s, false)
			y += 12
		}
	}
	p.grey(true)
	for _, s := range v.SellerAddress {
		p.text(margin, y, 280, s, false)
		y += 12
	}
	p.grey(false)
	sellerBottom := y

	// Title and facts, right.
	right := margin + contentW
	p.font(true, 20)
	p.text(right-220, p.y, 220, v.L.Invoice, true)
	facts := [][2]string{{v.L.InvoiceNumber, fmt.Sprint(v.Number)}, {v.L.IssueDate, v.IssueDate}, {v.L.DueDate, v.DueDate}}
	if v.Period != "" {
		facts = append(facts, [2]string{v.L.Period, v.Period})
	}
	facts = append(facts, [2]string{v.L.Currency, v.Currency}, [2]string{v.L.Status, v.Status})
	y = p.y + 30
	for _, f := range facts {
		p.font(false, 9)
		p.grey(true)
		p.text(right-240, y, 100, f[0], false)
		p.grey(false)
		p.text(right-140, y, 140, f[1], true)
		y += 12
	}
	p.y = max(y, sellerBottom) + 16

	// Buyer and invoice contact.
	top := p.y
	p.party(margin, v.L.BillTo, v.Buyer.Name, v.BuyerAddress, v.Buyer.Email, v.Buyer.Phone, v.L.CustomerNumber+" "+v.BuyerNumber)
	bottom := p.y
	if c := v.Buyer.InvoiceContact; c != nil {
		p.y = top
		p.party(margin+contentW/2, v.L.InvoiceContact, c.Name, v.ContactAddress, c.Email, c.Phone, "")
		bottom = max(bottom, p.y)
	}
	p.y = bottom + 14

	// Lines.
	p.lineHeader()
	for _, l := range v.Lines {
		p.font(false, lineSize)
		desc, err := p.doc.SplitText(l.Description, columns[0].w-6)
		p.check(err)
		if len(desc) == 0 {
			desc = []string{""}
		}
		h := float64(len(desc))*11 + 6
		if l.Period != "" {
			h += 10
		}
		if p.need(h) {
			p.lineHeader()
		}
		p.font(false, lineSize)
		for i, d := range desc {
			p.text(margin+2, p.y+3+float64(i)*11, columns[0].w-4, d, false)
		}
		if l.Period != "" {
			p.font(false, 7.5)
			p.grey(true)
			p.text(margin+2, p.y+3+float64(len(desc))*11, columns[0].w-4, l.Period, false)
			p.grey(false)
			p.font(false, 8.5)
		}
		x := margin + columns[0].w
		for i, s := range []string{l.Quantity, l.UnitPrice, l.Discount, l.VATRate, l.Net, l.VAT, l.Gross} {
			c := columns[i+1]
			p.text(x, p.y+3, c.w-2, s, c.right)
			x += c.w
		}
		p.y += h
		p.doc.SetStrokeColor(210, 210, 210)
		p.rule(p.y, 0.4)
		p.doc.SetStrokeColor(0, 0, 0)
	}
	p.font(false, 7.5)
	p.grey(true)
	p.text(margin, p.y+4, contentW, v.PricesNote, false)
	p.grey(false)
	p.y += 24

	// VAT summary, left, and totals, right.
	p.need(float64(len(v.VATTotals))*12 + 70)
	top = p.y
	p.font(true, 8)
	p.grey(true)
	p.text(margin, p.y, 250, v.L.VATSummary, false)
	p.y += 13
	vatCols := []string{v.L.VATRate, v.L.Net, v.L.VAT, v.L.Gross}
	for i, s := range vatCols {
		p.text(margin+float64(i)*62, p.y, 60, s, true)
	}
	p.grey(false)
	p.y += 12
	p.doc.SetLineWidth(0.6)
	p.doc.Line(margin, p.y, margin+248, p.y)
	p.y += 3
	p.font(false, 8.5)
	for _, t := range v.VATTotals {
		for i, s := range []string{t.Rate, t.Net, t.VAT, t.Gross} {
			p.text(margin+float64(i)*62, p.y, 60, s, true)
		}
		p.y += 12
	}
	vatBottom := p.y
	p.y = top
	p.font(false, 9)
	for _, row := range [][2]string{{v.L.TotalNet, v.Net}, {v.L.TotalVAT, v.VAT}} {
		p.text(right-230, p.y, 140, row[0], false)
		p.text(right-90, p.y, 90, row[1], true)
		p.y += 13
	}
	p.doc.SetLineWidth(0.8)
	p.doc.Line(right-230, p.y+1, right, p.y+1)
	p.y += 5
	p.font(true, 11)
	p.text(right-230, p.y, 140, v.L.TotalToPay+" ("+v.Currency+")", false)
	p.text(right-90, p.y, 90, v.Gross, true)
	p.y = max(vatBottom, p.y+16) + 18

	p.paymentBox()
}

// Columns of the payment box (x from the margin, widths): the KID, the
// account number, the due date and, right-aligned, the amount. The
// values must never be cut short (TestPaymentBoxFits).
const (
	boxKIDX, boxKIDW         = 10.0, 160.0
	boxAccountX, boxAccountW = 175.0, 125.0
	boxDueX, boxDueW         = 305.0, 70.0
	boxAmountW               = 120.0
	boxIBANW                 = contentW - 20
	boxH                     = 68.0
)

// paymentBox writes what a payer needs together: KID, account number, due
// date and amount, and the IBAN and BIC for payments from abroad.
func (p *pdfWriter) paymentBox() {
	v := p.v
	right := margin + contentW
	p.need(boxH + 6)
	p.doc.SetLineWidth(1)
	p.doc.RectFromUpperLeftWithStyle(margin, p.y, contentW, boxH, "D")
	p.font(true, 7.5)
	p.grey(true)
	p.text(margin+boxKIDX, p.y+8, boxKIDW, v.L.KID, false)
	if v.AccountNumber != "" {
		p.text(margin+boxAccountX, p.y+8, boxAccountW, v.L.AccountNumber, false)
	}
	p.text(margin+boxDueX, p.y+8, boxDueW, v.L.DueDate, false)
	p.text(right-10-boxAmountW, p.y+8, boxAmountW, v.L.TotalToPay, true)
	p.grey(false)
	p.font(true, 15)
	p.text(margin+boxKIDX, p.y+21, boxKIDW, v.KID, false)
	p.font(true, 12)
	p.text(margin+boxAccountX, p.y+22, boxAccountW, v.AccountNumber, false)
	p.font(true, 11)
	p.text(margin+boxDueX, p.y+23, boxDueW, v.DueDate, false)
	p.text(right-10-boxAmountW, p.y+23, boxAmountW, v.Currency+" "+v.Gross, true)
	if iban := p.ibanLine(); iban != "" {
		p.font(false, 9)
		p.text(margin+10, p.y+40, boxIBANW, iban, false)
	}
	p.font(false, 7.5)
	p.grey(true)
	p.text(margin+10, p.y+53, boxIBANW, v.L.KIDNote, false)
	p.grey(false)
	p.y += boxH
}

// ibanLine is "IBAN NO93 8601 1117 947   BIC DNBANOKK", or "" without an
// IBAN.
func (p *pdfWriter) ibanLine() string {
	if p.v.IBAN == "" {
		return ""
	}
	s := p.v.L.IBAN + " " + p.v.IBAN
	if p.v.BIC != "" {
		s += "   " + p.v.L.BIC + " " + p.v.BIC
	}
	return s
}

// party writes a labelled address block at x and moves p.y below it.
func (p *pdfWriter) party(x float64, label, name string, address []string, email, phone, extra string) {
	p.font(true, 7.5)
	p.grey(true)
	p.text(x, p.y, 240, label, false)
	p.grey(false)
	p.y += 12
	p.font(true, 9.5)
	p.text(x, p.y, 240, name, false)
	p.y += 13
	p.font(false, 9)
	lines := append([]string(nil), address...)
	if email != "" {
		lines = append(lines, p.v.L.Email+": "+email)
	}
	if phone != "" {
		lines = append(lines, p.v.L.Phone+": "+phone)
	}
	for _, l := range lines {
		p.text(x, p.y, 240, l, false)
		p.y += 12
	}
	if extra != "" {
		p.grey(true)
		p.text(x, p.y, 240, extra, false)
		p.grey(false)
		p.y += 12
	}
}

// lineHeader writes the header row of the line table.
func (p *pdfWriter) lineHeader() {
	p.font(true, headerSize)
	p.grey(true)
	x := margin
	for i, s := range p.v.L.lineHeaders() {
		c := columns[i]
		p.text(x+2, p.y, c.w-4, s, c.right)
		x += c.w
	}
	p.grey(false)
	p.y += 12
	p.rule(p.y, 0.8)
	p.y += 1
}

// lineHeaders are the headers of the line table's columns.
func (l labels) lineHeaders() []string {
	return []string{l.Description, l.Quantity, l.UnitPrice, l.Discount, l.VATRate, l.Net, l.VAT, l.Gross}
}
