package autogiro

import (
	"strings"
)

// record turns the current line into a record; nil means the line was
// consumed without one to return (never happens today, kept for TK53–56).
func (rd *Reader) record() (Record, error) {
	rd.sawAny = true
	tk := rd.tk()
	f := &fields{rd: rd}
	if tk < 0 {
		return nil, rd.fail("positions 1–2 %q are not a transaction code", latin1Text(rd.field(1, 2)))
	}
	if tk == TKOpening {
		return rd.opening(f)
	}
	if tk == TKEMandateOpen {
		return rd.emandateOpening(f)
	}
	switch rd.kind {
	case "":
		return nil, rd.fail("TK%02d before the section's opening record (TK01)", tk)
	case KindSubmission:
		return rd.submissionRecord(f, tk)
	}
	if tk == TKClosing || tk == TKEMandateClose {
		return rd.closing(f, tk)
	}
	var rec Record
	switch rd.kind {
	case KindMandateAdvice:
		if tk != TKMandateAdvice {
			break
		}
		a := &MandateAdvice{Pos: Pos{rd.line}}
		a.Bankgiro = f.bankgiro(3, 12)
		a.PayerNumber = f.payer(13, 28)
		if s := rd.field(29, 44); strings.TrimSpace(s) != "" {
			f.digits(29, 44, "bank account")
			if strings.Trim(s, "0") != "" {
				a.Clearing, a.Account = s[:4], strings.TrimLeft(s[4:], "0")
			}
		}
		if strings.TrimSpace(rd.field(45, 56)) != "" {
			a.PayerID = f.digits(45, 56, "payer ID")
		}
		a.Info = f.digits(62, 63, "information code")
		if rd.field(64, 65) != "  " { // information code 10 carries none
			a.Comment = f.digits(64, 65, "comment code")
		}
		a.Date = f.date(66, 73, "date")
		rec = a
	case KindPaymentSpec:
		switch tk {
		case TKDeposit, TKWithdrawal, TKRefundWithdraw:
			s := &PaymentSummary{Pos: Pos{rd.line}, TK: tk}
			s.PayeeAccount = strings.TrimLeft(f.digits(3, 37, "payee account"), "0")
			s.Date = f.date(38, 45, "payment date")
			s.Serial = f.digits(46, 50, "serial number")
			s.Total = f.amount(51, 68, "total amount")
			s.Count = f.count(72, 79, "number of payments")
			rec = s
		case TKDebit, TKPayout:
			p := &PaymentResult{Pos: Pos{rd.line}, TK: tk}
			p.Date = f.date(3, 10, "payment date")
			p.Period = strings.TrimSpace(rd.field(11, 11))
			p.Repetitions = strings.TrimSpace(rd.field(12, 14))
			p.PayerNumber = f.payer(16, 31)
			p.Amount = f.amount(32, 43, "amount")
			p.Bankgiro = f.bankgiro(44, 53)
			p.Reference = f.text(54, 69)
			p.Status = rd.buf[79]
			switch p.Status {
			case '0', '1', '2', '9':
			case ' ':
				f.bad("payment status (position 80) is blank: an old-layout payment specification, which Kadens does not read")
			default:
				f.bad("payment status (position 80) %q is not 0, 1, 2 or 9", p.Status)
			}
			if p.Status == '9' && tk == TKPayout {
				f.bad("payment status 9 (retry) is for debits only")
			}
			if p.Completed() {
				rd.totals[tk] += p.Amount
			} else {
				rd.failed[tk]++
			}
			rec = p
		case TKRefund:
			r := &Refund{Pos: Pos{rd.line}}
			r.Date = f.date(3, 10, "original payment date")
			r.PayerNumber = f.payer(16, 31)
			r.Amount = f.amount(32, 43, "amount")
			r.Bankgiro = f.bankgiro(44, 53)
			r.Reference = f.text(54, 69)
			r.RefundDate = f.date(70, 77, "refund date")
			r.Code = f.digits(78, 79, "refund code")
			rec = r
		}
	case KindRejected:
		if tk != TKDebit && tk != TKPayout {
			break
		}
		r := &RejectedPayment{Pos: Pos{rd.line}, TK: tk}
		r.Date = f.date(3, 10, "payment date")
		r.Period = strings.TrimSpace(rd.field(11, 11))
		r.Repetitions = strings.TrimSpace(rd.field(12, 14))
		r.PayerNumber = f.payer(15, 30)
		r.Amount = f.amount(31, 42, "amount")
		r.Reference = f.text(43, 58)
		r.Comment = f.digits(59, 60, "comment code")
		rd.totals[tk] += r.Amount
		rec = r
	case KindCancellations:
		if tk != 3 && tk != 11 && (tk < 21 || tk > 29) {
			break
		}
		c := &CancellationResult{Pos: Pos{rd.line}, TK: tk}
		c.Date = f.optDate(3, 10, "payment date")
		c.PayerNumber = f.payer(11, 26)
		switch pc := rd.field(27, 28); pc {
		case "82", "32":
			c.PaymentTK = int(pc[0]-'0')*10 + int(pc[1]-'0')
		case "  ", "00":
		default:
			f.bad("payment code (positions 27–28) %q is not 82 or 32", pc)
		}
		c.Amount = f.amount(29, 40, "amount")
		c.NewDate = f.optDate(49, 56, "new payment date")
		if rd.field(41, 48) == "REFERENS" {
			c.Reference = f.text(57, 72)
		}
		c.Comment = f.digits(73, 74, "comment code")
		rd.totals[c.PaymentTK] += c.Amount
		rd.counts[c.PaymentTK]++
		rec = c
	case KindEMandates:
		switch {
		case tk == TKEMandate:
			e := &EMandate{Pos: Pos{rd.line}}
			e.Bankgiro = f.bankgiro(3, 12)
			e.PayerNumber = f.payer(13, 28)
			if s := f.digits(29, 44, "bank account"); strings.Trim(s, "0") != "" {
				e.Clearing, e.Account = s[:4], strings.TrimLeft(s[4:], "0")
			}
			e.PayerID = f.digits(45, 56, "payer ID")
			e.Message = f.digits(62, 62, "message type")
			rd.records++
			if f.err != nil {
				return nil, f.err
			}
			if e.Bankgiro != rd.bankgiro {
				return nil, rd.fail("bankgiro %s is not the section's %s", e.Bankgiro, rd.bankgiro)
			}
			rd.pending = e
			return rd.Next()
		case tk >= 53 && tk <= 56:
			return nil, rd.fail("TK%02d without the TK52 it belongs to", tk)
		}
	}
	if rec == nil {
		return nil, rd.fail("TK%02d does not belong in a %s section", tk, rd.kind)
	}
	if f.err != nil {
		return nil, f.err
	}
	rd.counts[tk]++
	rd.records++
	switch r := rec.(type) {
	case *MandateAdvice:
		if r.Bankgiro != rd.bankgiro {
			return nil, rd.fail("bankgiro %s is not the section's %s", r.Bankgiro, rd.bankgiro)
		}
	case *PaymentResult:
		if r.Bankgiro != rd.bankgiro {
			return nil, rd.fail("bankgiro %s is not the section's %s", r.Bankgiro, rd.bankgiro)
		}
	case *Refund:
		if r.Bankgiro != rd.bankgiro {
			return nil, rd.fail("bankgiro %s is not the section's %s", r.Bankgiro, rd.bankgiro)
		}
	}
	return rec, nil
}

// emandateExtra adds a TK53–56 to the pending TK52.
func (rd *Reader) emandateExtra(tk int) error {
	f := &fields{rd: rd}
	e := rd.pending
	rd.records++
	rd.counts[tk]++
	switch tk {
	case 53:
		e.Info = f.text(3, 38)
	case 54, 55:
		for _, l := range []string{f.text(3, 38), f.text(39, 74)} {
			if l != "" {
				e.Address = append(e.Address, l)
			}
		}
	case 56:
		e.PostalCode = f.digits(3, 7, "postal code")
		e.Town = f.text(8, 38)
	}
	return f.err
}

func (rd *Reader) startSection(kind string) {
	rd.kind = kind
	rd.counts = map[int]int{}
	rd.totals = map[int]int64{}
	rd.failed = map[int]int{}
	rd.records = 0
	rd.subKind = 0
}

func (rd *Reader) opening(f *fields) (Record, error) {
	if rd.kind != "" && rd.kind != KindSubmission {
		return nil, rd.fail("a new TK01 before the %s section's closing record", rd.kind)
	}
	if rd.field(11, 22) == "AUTOGIRO9900" || strings.HasPrefix(rd.field(25, 40), "AG-MEDAVI") {
		return nil, rd.fail("an old-layout report (TK01 %q): Kadens reads the new layout; ask Bankgirot to switch the payee's reports to it", strings.TrimSpace(latin1Text(rd.field(1, 40))))
	}
	if rd.field(11, 18) == "AUTOGIRO" && rd.field(3, 10) != "AUTOGIRO" {
		if rd.kind == "" && rd.sawSubmissionEnd() {
			return nil, rd.fail("a submission section after a report section")
		}
		o := &Opening{Pos: Pos{rd.line}}
		o.Written = f.date(3, 10, "file date")
		f.blank(19, 62, "reserved")
		o.CustomerNumber = strings.TrimLeft(f.digits(63, 68, "customer number"), "0")
		o.Bankgiro = f.bankgiro(69, 78)
		if f.err != nil {
			return nil, f.err
		}
		rd.startSection(KindSubmission)
		rd.bankgiro = o.Bankgiro
		return o, nil
	}
	if rd.kind == KindSubmission {
		return nil, rd.fail("a report section inside a submission file")
	}
	if strings.TrimSpace(rd.field(3, 22)) != "AUTOGIRO" {
		return nil, rd.fail("not an Autogiro file: TK01 says neither AUTOGIRO at positions 3–22 (a report) nor at 11–18 (a submission)")
	}
	content := f.text(45, 64)
	kind, ok := reportContent[content]
	if !ok {
		return nil, rd.fail("unknown report %q at positions 45–64: Kadens reads AG-MEDAVI, BET. SPEC & STOPP TK, AVVISADE BET UPPDR and MAKULERING/ÄNDRING", content)
	}
	o := &ReportOpening{Pos: Pos{rd.line}, Kind: kind}
	if kind == KindPaymentSpec {
		o.Timestamp = f.digits(25, 44, "timestamp")
		o.Date = f.date(25, 32, "date")
	} else {
		o.Date = f.date(25, 32, "date")
	}
	o.CustomerNumber = strings.TrimLeft(f.digits(65, 70, "customer number"), "0")
	o.Bankgiro = f.bankgiro(71, 80)
	if f.err != nil {
		return nil, f.err
	}
	rd.startSection(kind)
	rd.bankgiro = o.Bankgiro
	return o, nil
}

// sawSubmissionEnd: reports and submissions are never mixed in one file;
// once a report section has closed, rd.kind is "" and rd.bankgiro set.
func (rd *Reader) sawSubmissionEnd() bool { return rd.bankgiro != "" }

func (rd *Reader) emandateOpening(f *fields) (Record, error) {
	if rd.kind != "" {
		return nil, rd.fail("TK51 inside a %s section", rd.kind)
	}
	o := &ReportOpening{Pos: Pos{rd.line}, Kind: KindEMandates}
	o.Date = f.date(3, 10, "date")
	o.Bankgiro = f.bankgiro(15, 24)
	if c := f.text(25, 44); c != "AG-EMEDGIV" {
		f.bad("positions 25–44 %q are not AG-EMEDGIV", c)
	}
	if f.err != nil {
		return nil, f.err
	}
	rd.startSection(KindEMandates)
	rd.bankgiro = o.Bankgiro
	return o, nil
}

func (rd *Reader) closing(f *fields, tk int) (Record, error) {
	if (tk == TKEMandateClose) != (rd.kind == KindEMandates) {
		return nil, rd.fail("TK%02d does not close a %s section", tk, rd.kind)
	}
	c := &Closing{Pos: Pos{rd.line}, Kind: rd.kind}
	c.Date = f.date(3, 10, "date")
	if s := rd.field(11, 14); s != "9900" {
		f.bad("positions 11–14 %q are not Bankgirot's clearing number 9900", s)
	}
	check := func(from, to int, name string, got int64) {
		if want := f.amount(from, to, name); f.err == nil && want != got {
			f.bad("the closing record says %d for %s; the section has %d", want, name, got)
		}
	}
	n := func(tk int) int64 { return int64(rd.counts[tk]) }
	switch rd.kind {
	case KindMandateAdvice:
		check(15, 21, "the number of TK73 records", n(TKMandateAdvice))
	case KindPaymentSpec:
		check(15, 20, "the number of TK15 records", n(TKDeposit))
		check(21, 32, "the number of completed TK82 records", n(TKDebit)-int64(rd.failed[TKDebit]))
		check(33, 38, "the number of TK16 records", n(TKWithdrawal))
		check(39, 50, "the number of completed TK32 records", n(TKPayout)-int64(rd.failed[TKPayout]))
		check(51, 56, "the number of TK17 records", n(TKRefundWithdraw))
		check(57, 68, "the number of TK77 records", n(TKRefund))
	case KindRejected:
		check(15, 20, "the number of rejected payouts", n(TKPayout))
		check(21, 32, "the total of rejected payouts", rd.totals[TKPayout])
		check(33, 38, "the number of rejected debits", n(TKDebit))
		check(39, 50, "the total of rejected debits", rd.totals[TKDebit])
	case KindCancellations:
		if v := f.signed(29, 40, "the total of payouts"); f.err == nil && v != rd.totals[TKPayout] {
			f.bad("the closing record says %d for the total of payouts; the section has %d", v, rd.totals[TKPayout])
		}
		check(41, 46, "the number of payouts", int64(rd.counts[TKPayout]))
		check(47, 52, "the number of debits", int64(rd.counts[TKDebit]))
		if v := f.signed(57, 68, "the total of debits"); f.err == nil && v != rd.totals[TKDebit] {
			f.bad("the closing record says %d for the total of debits; the section has %d", v, rd.totals[TKDebit])
		}
	case KindEMandates:
		// The manual counts "all records"; whether the TK51 and TK59 are
		// among them it does not say, so either reading is accepted.
		want := f.amount(15, 21, "the number of records")
		if got := int64(rd.records); f.err == nil && want != got && want != got+2 {
			f.bad("the closing record says %d records; the section has %d", want, got)
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	rd.kind = ""
	return c, nil
}

func (rd *Reader) submissionRecord(f *fields, tk int) (Record, error) {
	var (
		rec     Record
		section int
		bg      string
	)
	switch tk {
	case TKMandate, TKCancelMandate, TKChangePayer:
		section = SectionMandates
		m := &MandateRecord{Pos: Pos{rd.line}, TK: tk}
		m.Bankgiro = f.bankgiro(3, 12)
		m.PayerNumber = f.payer(13, 28)
		switch tk {
		case TKMandate:
			if strings.TrimSpace(rd.field(29, 44)) != "" {
				m.Clearing = f.digits(29, 32, "clearing number")
				m.Account = strings.TrimLeft(f.digits(33, 44, "account number"), "0")
			}
			if strings.TrimSpace(rd.field(45, 56)) != "" {
				m.PayerID = f.digits(45, 56, "payer ID")
			}
			f.blank(57, 76, "reserved")
			switch s := rd.field(77, 78); s {
			case "AV":
				m.Reject = true
			case "  ":
			default:
				f.bad("positions 77–78 %q are neither blank nor AV", s)
			}
		case TKCancelMandate:
			f.blank(29, 80, "reserved")
		case TKChangePayer:
			if b := f.bankgiro(29, 38); b != m.Bankgiro && f.err == nil {
				f.bad("the second bankgiro (positions 29–38) differs from the first")
			}
			m.NewPayerNumber = f.payer(39, 54)
		}
		bg, rec = m.Bankgiro, m
	case TKDebit, TKPayout:
		section = SectionPayments
		p := &PaymentRecord{Pos: Pos{rd.line}, TK: tk}
		if rd.field(3, 10) == "GENAST  " {
			p.Immediately = true
		} else {
			p.Date = f.date(3, 10, "payment date")
		}
		p.Period = f.count(11, 11, "period code")
		if p.Period > 8 {
			f.bad("period code %d is not 0–8", p.Period)
		}
		if strings.TrimSpace(rd.field(12, 14)) != "" {
			p.Repetitions = f.count(12, 14, "repetitions")
			if p.Period == 0 || p.Repetitions == 0 {
				f.bad("repetitions (positions 12–14) must be blank for a one-off payment and 001–999 otherwise")
			}
		}
		if p.Immediately && p.Period != 0 {
			f.bad("GENAST is allowed with period code 0 only")
		}
		f.blank(15, 15, "reserved")
		p.PayerNumber = f.payer(16, 31)
		p.Amount = f.amount(32, 43, "amount")
		if p.Amount == 0 && f.err == nil {
			f.bad("amount (positions 32–43) is zero")
		}
		p.Bankgiro = f.bankgiro(44, 53)
		p.Reference = f.text(54, 69)
		f.blank(70, 80, "reserved")
		bg, rec = p.Bankgiro, p
	default:
		fl, ok := amendmentFields[tk]
		if !ok {
			return nil, rd.fail("TK%02d does not belong in a submission file", tk)
		}
		section = SectionAmendments
		a := &AmendmentRecord{Pos: Pos{rd.line}, TK: tk}
		a.Bankgiro = f.bankgiro(3, 12)
		if fl.payer {
			a.PayerNumber = f.payer(13, 28)
		} else {
			f.blank(13, 28, "payer number")
		}
		if fl.date {
			a.Date = f.date(29, 36, "payment date")
		} else {
			f.blank(29, 36, "payment date")
		}
		if fl.amount {
			a.Amount = f.amount(37, 48, "amount")
			a.PaymentTK = f.count(49, 50, "payment code")
			if a.PaymentTK != TKDebit && a.PaymentTK != TKPayout && f.err == nil {
				f.bad("payment code (positions 49–50) is not 82 or 32")
			}
			a.Reference = f.text(59, 74)
		} else {
			f.blank(37, 50, "amount and payment code")
			f.blank(59, 74, "reference")
		}
		if fl.newDate {
			a.NewDate = f.date(51, 58, "new payment date")
		} else {
			f.blank(51, 58, "new payment date")
		}
		f.blank(75, 80, "reserved")
		bg, rec = a.Bankgiro, a
	}
	if f.err != nil {
		return nil, f.err
	}
	if bg != rd.bankgiro {
		return nil, rd.fail("bankgiro %s is not the section's %s (TK01)", bg, rd.bankgiro)
	}
	if rd.subKind != 0 && rd.subKind != section {
		return nil, rd.fail("TK%02d in a section that already holds another kind of record: mandates, payments and amendments each need their own TK01", tk)
	}
	rd.subKind = section
	return rec, nil
}
