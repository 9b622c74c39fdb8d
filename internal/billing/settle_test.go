package billing

import "testing"

func TestSettlement(t *testing.T) {
	for _, tc := range []struct {
		name             string
		s                Settlement
		offer            int64
		applied, surplus int64
		demand, invoice  string
	}{
		{"open", Settlement{Amount: 9000}, 9000, 9000, 0, DemandOpen, InvoiceIssued},
		{"partly paid", Settlement{Amount: 9000, Paid: 4000}, 6000, 5000, 1000, DemandPartiallyPaid, InvoicePartiallyPaid},
		{"paid", Settlement{Amount: 9000, Paid: 9000}, 100, 0, 100, DemandPaid, InvoicePaid},
		{"partly credited only", Settlement{Amount: 8400, Credited: 5700}, 2700, 2700, 0, DemandOpen, InvoiceIssued},
		{"credited then paid", Settlement{Amount: 8400, Credited: 5700, Paid: 2700}, 1, 0, 1, DemandPaid, InvoicePaid},
		{"fully credited", Settlement{Amount: 8400, Credited: 8400}, 50, 0, 50, DemandCredited, InvoiceCredited},
		{"paid then credited", Settlement{Amount: 9000, Paid: 9000, Credited: 4800}, 0, 0, 0, DemandPaid, InvoicePaid},
		{"zero amount", Settlement{}, 0, 0, 0, DemandPaid, InvoicePaid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, s := tc.s.Apply(tc.offer)
			if a != tc.applied || s != tc.surplus {
				t.Errorf("Apply(%d) = %d, %d; want %d, %d", tc.offer, a, s, tc.applied, tc.surplus)
			}
			d, i := tc.s.Statuses()
			if d != tc.demand || i != tc.invoice {
				t.Errorf("Statuses = %s, %s; want %s, %s", d, i, tc.demand, tc.invoice)
			}
		})
	}
}

func TestSettlementConsistent(t *testing.T) {
	for _, tc := range []struct {
		s    Settlement
		want bool
	}{
		{Settlement{Amount: 100}, true},
		{Settlement{Amount: 100, Paid: 60, Credited: 40}, true},
		{Settlement{Amount: 100, Paid: 60, Credited: 41}, false},
		{Settlement{Amount: 100, Paid: -1}, false},
		{Settlement{Amount: 100, Credited: -1}, false},
		{Settlement{Amount: -5, Paid: 10}, true},
		{Settlement{}, true},
	} {
		if got := tc.s.Consistent(); got != tc.want {
			t.Errorf("%+v: Consistent() = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestAccountTotalsBalance(t *testing.T) {
	got := AccountTotals{Invoiced: 1000, Credited: 200, Paid: 300, Charges: 50, Allowances: 25}.Balance()
	if got != 525 {
		t.Fatalf("Balance() = %d, want 525", got)
	}
}
