package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/ledger"
	"github.com/kadens/kadens/internal/store"
)

// The surcharge of a delivery address (docs/PRINT.md, "Surcharge"): the
// per-change and per-edition amounts the address was saved with, booked
// once it applies, by the series' next renewal (before the renewal's
// invoice, which carries it) or by a cancellation. Like the stops' credits
// it is never booked ahead: an address changed or deleted before it
// starts has cost nothing, and nothing booked has to be taken back.
// Booked once per address: delivery_address_charges' unique key.

// ItemSourceAddress is the source kind of an address's charge: its
// delivery_address_charges row, which names the item back.
const ItemSourceAddress = "DeliveryAddress"

func init() {
	ledger.RegisterItemSource(ledger.ItemSource{Kind: ItemSourceAddress, Table: "delivery_address_charges",
		Column: "charge_item_id", Amount: "amount", ItemKind: billing.ItemCharge})
}

// AddressCharge is the booked surcharge of an address.
type AddressCharge struct {
	ID, AddressID, PeriodID string
	Editions                int
	Amount                  int64
	ChargeItemID            *string
	BookedAt                time.Time
}

func addressCharge(ctx context.Context, tx *store.Tx, addressID string) (*AddressCharge, error) {
	cs, err := store.QueryAll(ctx, tx, func(row store.Scanner) (AddressCharge, error) {
		var c AddressCharge
		err := row.Scan(&c.ID, &c.AddressID, &c.PeriodID, &c.Editions, &c.Amount, &c.ChargeItemID, &c.BookedAt)
		c.BookedAt = c.BookedAt.UTC()
		return c, err
	}, `SELECT id, address_id, period_id, editions, amount, charge_item_id, booked_at FROM delivery_address_charges
		WHERE tenant_id = $1 AND address_id = $2`, tx.TenantID(), addressID)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	return &cs[0], nil
}

// addressEditions are the editions a temporary address receives: the
// series' delivery days in its range, before the cancellation's effect,
// less the days a vacation stop of the series takes out (a stop wins over
// an address: no copy goes anywhere). A permanent address has none: its
// surcharge is per change only.
func addressEditions(ctx context.Context, tx *store.Tx, last store.Subscription, a Address, cut *time.Time) (int, error) {
	if a.Kind != AddressTemporary || a.Last == nil {
		return 0, nil
	}
	loc, err := zone(last)
	if err != nil {
		return 0, err
	}
	end := a.Last.AddDays(1)
	for _, t := range []*time.Time{cut, last.CancelEffectiveAt, last.DeactivatedAt} {
		if t != nil && DateOf(*t, loc).Before(end) {
			end = DateOf(*t, loc)
		}
	}
	if !a.First.Before(end) {
		return 0, nil
	}
	w, err := packageWeekdays(ctx, tx, tx.TenantID(), last)
	if err != nil {
		return 0, err
	}
	cal, err := calendarIn(ctx, tx, tx.TenantID(), a.First, end)
	if err != nil {
		return 0, err
	}
	stops, err := seriesStops(ctx, tx, tx.TenantID(), last.ID, false)
	if err != nil {
		return 0, err
	}
	stopped := map[Date]bool{}
	for _, s := range stops {
		for _, d := range s.Missed {
			stopped[d] = true
		}
	}
	n := 0
	for _, d := range (Schedule{Weekdays: w, Calendar: cal}).DeliveryDays(a.First, end) {
		if !stopped[d] {
			n++
		}
	}
	return n, nil
}

// bookSurcharge books address a's surcharge with period last (the
// series' last period) at business time at, once its first day has come,
// and reports whether it booked now. With cut (a cancellation's effect),
// it is booked at once if the address applies before the cut, its
// editions counted up to it.
func bookSurcharge(ctx context.Context, tx *store.Tx, last store.Subscription, a Address, at time.Time, cut *time.Time) (bool, error) {
	if a.DeletedAt != nil || (a.SurchargePerChange == 0 && a.SurchargePerEdition == 0) {
		return false, nil
	}
	loc, err := zone(last)
	if err != nil {
		return false, err
	}
	at = at.UTC().Truncate(time.Microsecond)
	if cut != nil {
		if !a.First.Before(DateOf(*cut, loc)) {
			return false, nil // it never applies
		}
	} else if DateOf(at, loc).Before(a.First) {
		return false, nil // not started
	}
	editions, err := addressEditions(ctx, tx, last, a, cut)
	if err != nil {
		return false, err
	}
	amount := a.SurchargePerChange + a.SurchargePerEdition*int64(editions)
	id := store.NewID()
	res, err := tx.Exec(ctx, `INSERT INTO delivery_address_charges (tenant_id, id, address_id, period_id, editions, amount, booked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant_id, address_id) DO NOTHING`,
		tx.TenantID(), id, a.ID, last.ID, editions, amount, store.TimeParam(at))
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, err
	} else if n == 0 {
		return false, nil // booked before
	}
	if amount == 0 {
		return true, nil
	}
	account, err := tx.EnsureAccount(ctx, last.SubscriberID, last.Currency, at)
	if err != nil {
		return true, err
	}
	desc := fmt.Sprintf("Delivery address %s %s from %s", a.PostalCode, a.City, a.First)
	if a.Last != nil {
		desc = fmt.Sprintf("Temporary delivery address %s %s, %s–%s: %d editions", a.PostalCode, a.City, a.First, *a.Last, editions)
	}
	// VAT 0 %: the surcharge is part of the newspaper's delivery, which is
	// zero-rated in Norway like the paper itself (the stops' credits are
	// too); a title that charges VAT on it is left for later.
	it, err := invoicing.BookItem(ctx, tx, account, billing.ItemCharge, desc, amount, catalog.PercentOf(0), at,
		store.ItemSource{Kind: ItemSourceAddress, ID: id})
	if err != nil {
		return true, err
	}
	_, err = tx.Exec(ctx, `UPDATE delivery_address_charges SET charge_item_id = $3 WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id, it.ID)
	return true, err
}

// BookSurcharge books the surcharge of address id of the series of period
// subscriptionID at at, if it is due, in a transaction of its own, and
// reports whether it booked it now: what the renewal hook does for one
// address (and the tests of its idempotency).
func BookSurcharge(ctx context.Context, st *store.Store, subscriptionID, id string, at time.Time) (bool, error) {
	var booked bool
	err := st.InTxRetrying(ctx, func(tx *store.Tx) error {
		last, a, err := addressOf(ctx, tx, subscriptionID, id)
		if err != nil {
			return err
		}
		booked, err = bookSurcharge(ctx, tx, last, a, at, nil)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("delivery: book surcharge of address %s: %w", id, err)
	}
	return booked, nil
}
