package peppol

import (
	"testing"

	"github.com/kadens/kadens/internal/catalog"
)

// TestCategoryVAT: rounding as the BR-CO-17 rule computes it.
func TestCategoryVAT(t *testing.T) {
	for _, tc := range []struct {
		taxable, rate, want int64
	}{
		{6, 25, 2}, // 0.015 → 0.02
		{47900, 25, 11975},
		{2, 25, 1},   // 0.005 → 0.01
		{-2, 25, 0},  // −0.005 → 0.00 (half up, as XPath round)
		{-6, 25, -1}, // −0.015 → −0.01
		{-47900, 25, -11975},
		{39900, 0, 0},
		{1001, 15, 150}, // 1.5015 → 1.50
	} {
		if got := categoryVAT(tc.taxable, catalog.PercentOf(tc.rate)); got != tc.want {
			t.Errorf("%d at %d %%: %d, want %d", tc.taxable, tc.rate, got, tc.want)
		}
	}
}
