package billing

// Settlement is where a payment demand stands: what it claims, what was
// paid against it and what credit notes took off it (minor units).
type Settlement struct {
	Amount   int64
	Paid     int64
	Credited int64
}

// Outstanding is what is still owed; never negative.
func (s Settlement) Outstanding() int64 { return max(s.Amount-s.Paid-s.Credited, 0) }

// Apply splits an amount (a payment or a credit) offered to the demand
// into the part it absorbs (up to what is outstanding) and the surplus,
// which the caller books on the subscriber account as an allowance.
func (s Settlement) Apply(amount int64) (applied, surplus int64) {
	applied = min(amount, s.Outstanding())
	return applied, amount - applied
}

// Statuses returns the stored statuses of the demand and its invoice:
//
//   - Credited: credit notes took off the whole amount (nothing was paid);
//   - Paid: nothing outstanding and something was paid (credits may have
//     taken off the rest), or a zero-amount demand;
//   - PartiallyPaid: something paid, something outstanding;
//   - Open/Issued: nothing paid yet (a partial credit alone does not change
//     the status; the outstanding amount shows what is left).
func (s Settlement) Statuses() (demand, invoice string) {
	switch {
	case s.Amount > 0 && s.Credited >= s.Amount:
		return DemandCredited, InvoiceCredited
	case s.Outstanding() == 0:
		return DemandPaid, InvoicePaid
	case s.Paid > 0:
		return DemandPartiallyPaid, InvoicePartiallyPaid
	default:
		return DemandOpen, InvoiceIssued
	}
}

// Consistent reports whether paid and credited are within the amount:
// neither negative, and together never more than a non-negative amount
// (settling applies no more than is outstanding).
func (s Settlement) Consistent() bool {
	return s.Paid >= 0 && s.Credited >= 0 && (s.Amount < 0 || s.Paid+s.Credited <= s.Amount)
}

// AccountTotals are the totals behind a subscriber account's balance:
// its invoices' gross, what credit notes and succeeded payments applied to
// them, and the remaining amounts of its open charges and allowances.
type AccountTotals struct {
	Invoiced, Credited, Paid, Charges, Allowances int64
}

// Balance is what the account's ledger entries sum to when every change
// wrote its entry: invoices − credit notes − payments + charges −
// allowances.
func (t AccountTotals) Balance() int64 {
	return t.Invoiced - t.Credited - t.Paid + t.Charges - t.Allowances
}
