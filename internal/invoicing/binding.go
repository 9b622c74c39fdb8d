package invoicing

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
)

// ChargeBindingRemainder is the engine's Hooks.BindingRemainder: a
// cancellation during a ChargeRemainder binding charges the bound periods
// it leaves unserved (docs/ORDERS.md, "Binding periods"). The charge is
// periods × the price of one period of sub's package, booked at at on the
// subscriber's account in the subscription's currency, described
// "Remaining binding period, N periods", and billed by the account's next
// invoice like any charge. VAT follows the package's product lines: each
// line's part of the period price (after the permanent discount) at its
// product's rate, one charge per rate, so a package of a 25 % and a 0 %
// product charges both parts at their own rates, exactly as its period
// invoices do.
func ChargeBindingRemainder(ctx context.Context, tx *store.Tx, sub store.Subscription, periods int, at time.Time) error {
	if periods <= 0 {
		return nil
	}
	account, err := tx.EnsureAccount(ctx, sub.SubscriberID, sub.Currency, at)
	if err != nil {
		return err
	}
	type part struct {
		rate   catalog.Percent
		amount int64
	}
	var parts []part
	index := map[string]int{}
	for _, lines := range [][]catalog.Line{sub.Package.Products, sub.Package.AdditionalProducts} {
		for _, l := range lines {
			k := l.VATRate.String()
			i, ok := index[k]
			if !ok {
				i = len(parts)
				index[k] = i
				parts = append(parts, part{rate: l.VATRate})
			}
			parts[i].amount += l.Amount.Minor * int64(periods)
		}
	}
	desc := BindingRemainderDescription(periods)
	for _, p := range parts {
		if p.amount <= 0 {
			continue
		}
		if _, err := BookItem(ctx, tx, account, billing.ItemCharge, desc, p.amount, p.rate, at,
			store.ItemSource{Kind: store.ItemSourceBinding, ID: sub.ID}); err != nil {
			return fmt.Errorf("invoicing: binding remainder of %s: %w", sub.ID, err)
		}
	}
	return nil
}

// BindingRemainderDescription is the description of the charge for n
// remaining bound periods.
func BindingRemainderDescription(n int) string {
	if n == 1 {
		return "Remaining binding period, 1 period"
	}
	return fmt.Sprintf("Remaining binding period, %d periods", n)
}
