package delivery

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// Delivery addresses as stored (docs/PRINT.md, "Delivery addresses"): the
// tenant's postal code table, the addresses of a series kept on its last
// period (subscription_id, moved forward by the renewal hook like the
// stops), and the organizations' address rules.

// Address states, derived from the days and the tenant's clock.
const (
	AddressPlanned = "Planned" // the first day is still ahead
	AddressActive  = "Active"  // copies go here today
	AddressEnded   = "Ended"   // a temporary address's last day passed, or a later permanent one began
	AddressDeleted = "Deleted"
)

// Address is a delivery address of a subscription series.
type Address struct {
	ID                        string
	SubscriptionID, AskedOnID string
	Kind                      string
	First                     Date
	Last                      *Date
	PostalAddress
	Carrier, Route string
	// SurchargePerChange and SurchargePerEdition are the organization's
	// rules when the address was saved: what the subscriber was told.
	SurchargePerChange, SurchargePerEdition int64
	CreatedAt, UpdatedAt                    time.Time
	DeletedAt                               *time.Time
}

// State is the address's state on day today, among the series' addresses
// all (a permanent address ends where a later one begins).
func (a Address) State(today Date, all []Address) string {
	switch {
	case a.DeletedAt != nil:
		return AddressDeleted
	case today.Before(a.First):
		return AddressPlanned
	case a.Kind == AddressTemporary && a.Last.Before(today):
		return AddressEnded
	case a.Kind == AddressPermanent:
		for _, o := range all {
			if o.ID != a.ID && o.DeletedAt == nil && o.Kind == AddressPermanent && a.First.Before(o.First) && !today.Before(o.First) {
				return AddressEnded
			}
		}
	}
	return AddressActive
}

// NormalizePostalCode is how a postal code is kept and looked up: trimmed,
// upper case ("sw1a 1aa" and "SW1A 1AA" are one code).
func NormalizePostalCode(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

// ---- The postal code table.

// SetPostalCode adds or replaces a row of the context tenant's postal
// code table. Addresses saved before keep the carrier and route they
// were saved with.
func SetPostalCode(ctx context.Context, st *store.Store, p PostalCode, now time.Time) error {
	now = now.UTC().Truncate(time.Microsecond)
	err := st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO delivery_postal_codes (tenant_id, country, postal_code, carrier, route, deliverable, reason, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
			ON CONFLICT (tenant_id, country, postal_code) DO UPDATE SET carrier = excluded.carrier, route = excluded.route,
				deliverable = excluded.deliverable, reason = excluded.reason, updated_at = excluded.updated_at`,
			tx.TenantID(), p.Country, p.PostalCode, p.Carrier, p.Route, p.Deliverable, p.Reason, store.TimeParam(now))
		return err
	})
	if err != nil {
		return fmt.Errorf("delivery: set postal code %s %s: %w", p.Country, p.PostalCode, err)
	}
	return nil
}

const postalColumns = `country, postal_code, carrier, route, deliverable, reason, created_at, updated_at`

func scanPostal(row store.Scanner) (PostalCode, error) {
	var p PostalCode
	err := row.Scan(&p.Country, &p.PostalCode, &p.Carrier, &p.Route, &p.Deliverable, &p.Reason, &p.CreatedAt, &p.UpdatedAt)
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, err
}

func postalCodeIn(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) *sql.Row
}, tenant, country, code string) (PostalCode, error) {
	p, err := scanPostal(q.QueryRow(ctx, `SELECT `+postalColumns+` FROM delivery_postal_codes
		WHERE tenant_id = $1 AND country = $2 AND postal_code = $3`, tenant, country, code))
	return p, store.NotFound(err)
}

// GetPostalCode reads a row of the context tenant's postal code table.
func GetPostalCode(ctx context.Context, st *store.Store, country, code string) (PostalCode, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return PostalCode{}, err
	}
	p, err := postalCodeIn(ctx, st.Reader(), tenant, country, code)
	if err != nil {
		return PostalCode{}, fmt.Errorf("delivery: postal code %s %s: %w", country, code, err)
	}
	return p, nil
}

// PostalCodeCursor is the position after a row of the table, by country
// and postal code.
type PostalCodeCursor struct{ Country, PostalCode string }

// ListPostalCodes lists the table by country and postal code, limit rows
// after the cursor (nil: from the start), and the cursor of the next page
// (nil: none).
func ListPostalCodes(ctx context.Context, st *store.Store, after *PostalCodeCursor, limit int) ([]PostalCode, *PostalCodeCursor, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, nil, err
	}
	q, args := `SELECT `+postalColumns+` FROM delivery_postal_codes WHERE tenant_id = $1`, []any{tenant}
	if after != nil {
		q += ` AND (country > $2 OR (country = $2 AND postal_code > $3))`
		args = append(args, after.Country, after.PostalCode)
	}
	q += fmt.Sprintf(` ORDER BY country, postal_code LIMIT %d`, limit+1)
	ps, err := store.QueryAll(ctx, st.Reader(), scanPostal, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("delivery: postal codes: %w", err)
	}
	if len(ps) <= limit {
		return ps, nil, nil
	}
	ps = ps[:limit]
	last := ps[limit-1]
	return ps, &PostalCodeCursor{Country: last.Country, PostalCode: last.PostalCode}, nil
}

// DeletePostalCode removes a row of the table. Addresses saved with it
// keep their carrier and route; a new address there is refused.
func DeletePostalCode(ctx context.Context, st *store.Store, country, code string) error {
	err := st.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `DELETE FROM delivery_postal_codes WHERE tenant_id = $1 AND country = $2 AND postal_code = $3`,
			tx.TenantID(), country, code)
		if err != nil {
			return err
		}
		return store.OneRow(res)
	})
	if err != nil {
		return fmt.Errorf("delivery: delete postal code %s %s: %w", country, code, err)
	}
	return nil
}

// ---- The address rules.

// SetAddressRules replaces the address rules of the context tenant's
// organization; rules that do not validate are a 400 and write nothing.
func SetAddressRules(ctx context.Context, st *store.Store, organizationID string, r AddressRules, now time.Time) error {
	if err := r.Validate(); err != nil {
		return err
	}
	err := st.InTx(ctx, func(tx *store.Tx) error {
		if err := organizationExists(ctx, tx, tx.TenantID(), organizationID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO delivery_address_rules (tenant_id, organization_id, min_days, max_days, cutoff_hour,
				notice_delivery_days, surcharge_per_change, surcharge_per_edition, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (tenant_id, organization_id) DO UPDATE SET min_days = excluded.min_days, max_days = excluded.max_days,
				cutoff_hour = excluded.cutoff_hour, notice_delivery_days = excluded.notice_delivery_days,
				surcharge_per_change = excluded.surcharge_per_change, surcharge_per_edition = excluded.surcharge_per_edition,
				updated_at = excluded.updated_at`,
			tx.TenantID(), organizationID, r.MinDays, r.MaxDays, r.CutoffHour, r.NoticeDeliveryDays, r.SurchargePerChange,
			r.SurchargePerEdition, store.TimeParam(now.UTC().Truncate(time.Microsecond)))
		return err
	})
	if err != nil {
		return fmt.Errorf("delivery: set address rules of organization %s: %w", organizationID, err)
	}
	return nil
}

// GetAddressRules returns the organization's address rules: its own, or
// DefaultAddressRules (own false) when it set none.
func GetAddressRules(ctx context.Context, st *store.Store, organizationID string) (AddressRules, bool, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return AddressRules{}, false, err
	}
	return addressRulesIn(ctx, st.Reader(), tenant, organizationID)
}

func addressRulesIn(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) *sql.Row
}, tenant, organizationID string) (r AddressRules, own bool, err error) {
	if err := organizationExists(ctx, q, tenant, organizationID); err != nil {
		return AddressRules{}, false, fmt.Errorf("delivery: address rules of organization %s: %w", organizationID, err)
	}
	err = q.QueryRow(ctx, `SELECT min_days, max_days, cutoff_hour, notice_delivery_days, surcharge_per_change, surcharge_per_edition
		FROM delivery_address_rules WHERE tenant_id = $1 AND organization_id = $2`, tenant, organizationID).
		Scan(&r.MinDays, &r.MaxDays, &r.CutoffHour, &r.NoticeDeliveryDays, &r.SurchargePerChange, &r.SurchargePerEdition)
	if errors.Is(err, sql.ErrNoRows) {
		return DefaultAddressRules, false, nil
	}
	if err != nil {
		return AddressRules{}, false, fmt.Errorf("delivery: address rules of organization %s: %w", organizationID, err)
	}
	return r, true, nil
}

// ---- The addresses.

const addressColumns = `id, subscription_id, asked_on_id, kind, first_date, last_date, name, line1, line2, postal_code, city, country,
	carrier, route, surcharge_per_change, surcharge_per_edition, created_at, updated_at, deleted_at`

func scanAddress(row store.Scanner) (Address, error) {
	var a Address
	var first string
	var last *string
	var deleted *time.Time
	if err := row.Scan(&a.ID, &a.SubscriptionID, &a.AskedOnID, &a.Kind, &first, &last, &a.Name, &a.Line1, &a.Line2, &a.PostalCode,
		&a.City, &a.Country, &a.Carrier, &a.Route, &a.SurchargePerChange, &a.SurchargePerEdition, &a.CreatedAt, &a.UpdatedAt, &deleted); err != nil {
		return Address{}, err
	}
	var err error
	if a.First, err = ParseDate(first); err != nil {
		return Address{}, err
	}
	if last != nil {
		d, err := ParseDate(*last)
		if err != nil {
			return Address{}, err
		}
		a.Last = &d
	}
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	if deleted != nil {
		t := deleted.UTC()
		a.DeletedAt = &t
	}
	return a, nil
}

func lastDateParam(d *Date) any {
	if d == nil {
		return nil
	}
	return d.String()
}

// seriesAddresses are the addresses kept on a series' last period (not
// deleted), by first day.
func seriesAddresses(ctx context.Context, q store.Querier, tenant, lastID string) ([]Address, error) {
	return store.QueryAll(ctx, q, scanAddress, `SELECT `+addressColumns+` FROM delivery_addresses
		WHERE tenant_id = $1 AND subscription_id = $2 AND deleted_at IS NULL ORDER BY first_date, id`, tenant, lastID)
}

// checkAddress decides req for the series whose last period is last,
// leaving out address except (the one being changed).
func checkAddress(ctx context.Context, tx *store.Tx, last store.Subscription, req AddressRequest, except string, now time.Time) (AddressDecision, AddressRules, error) {
	rules, _, err := addressRulesIn(ctx, tx, tx.TenantID(), last.OrganizationID)
	if err != nil {
		return AddressDecision{}, rules, err
	}
	dec, err := checkAddressBy(ctx, tx, rules, last, req, except, now)
	return dec, rules, err
}

func checkAddressBy(ctx context.Context, tx *store.Tx, rules AddressRules, last store.Subscription, req AddressRequest, except string, now time.Time) (AddressDecision, error) {
	loc, err := zone(last)
	if err != nil {
		return AddressDecision{}, err
	}
	w, err := packageWeekdays(ctx, tx, tx.TenantID(), last)
	if err != nil {
		return AddressDecision{}, err
	}
	// The calendar reaches from today over the range and the notice.
	today := DateOf(now, loc)
	from, to := today, today.AddDays(366)
	if req.First.Before(from) {
		from = req.First
	}
	if req.Last != nil && to.Before(req.Last.AddDays(1)) {
		to = req.Last.AddDays(1)
	}
	cal, err := calendarIn(ctx, tx, tx.TenantID(), from, to)
	if err != nil {
		return AddressDecision{}, err
	}
	c := AddressContext{Now: now, Loc: loc, Schedule: Schedule{Weekdays: w, Calendar: cal}}
	if p, err := postalCodeIn(ctx, tx, tx.TenantID(), req.Address.Country, req.Address.PostalCode); err == nil {
		c.PostalCode = &p
	} else if !errors.Is(err, store.ErrNotFound) {
		return AddressDecision{}, err
	}
	others, err := seriesAddresses(ctx, tx, tx.TenantID(), last.ID)
	if err != nil {
		return AddressDecision{}, err
	}
	for _, o := range others {
		if o.ID != except {
			c.Others = append(c.Others, AddressSpan{ID: o.ID, Kind: o.Kind, First: o.First, Last: o.Last})
		}
	}
	return rules.Check(req, c)
}

// addressSeriesRuns refuses an address on a series that ended, or one
// from the day its cancellation takes effect: nothing is delivered then.
func addressSeriesRuns(last store.Subscription, req AddressRequest, loc *time.Location) error {
	if last.DeactivatedAt != nil {
		return validation.Field("subscriptionId", "the subscription has ended; nothing more is delivered")
	}
	if last.CancelEffectiveAt != nil && !req.First.Before(DateOf(*last.CancelEffectiveAt, loc)) {
		return validation.Field("firstDate", "the subscription ends on %s; an address must apply before", DateOf(*last.CancelEffectiveAt, loc))
	}
	return nil
}

// Actions of the DeliveryAddressChanged event.
const (
	AddressCreated = "Created"
	AddressChanged = "Changed"
	AddressRemoved = "Deleted"
)

// AddressEvent is the data of DeliveryAddressChanged.
type AddressEvent struct {
	DeliveryAddressID string  `json:"deliveryAddressId"`
	Action            string  `json:"action"`
	SubscriptionID    string  `json:"subscriptionId"`
	SubscriberID      string  `json:"subscriberId"`
	Kind              string  `json:"kind"`
	FirstDate         string  `json:"firstDate"`
	LastDate          *string `json:"lastDate"`
	PostalCode        string  `json:"postalCode"`
	Country           string  `json:"country"`
	Carrier           string  `json:"carrier"`
	Route             string  `json:"route"`
}

func addressEvent(ctx context.Context, tx *store.Tx, action string, last store.Subscription, a Address, at time.Time) error {
	var lastDate *string
	if a.Last != nil {
		s := a.Last.String()
		lastDate = &s
	}
	return tx.AddEvents(ctx, []store.NewEvent{{Type: store.EventDeliveryAddressChanged,
		Subject: "/subscription/" + last.ID + "/deliveryaddress/" + a.ID,
		Data: AddressEvent{DeliveryAddressID: a.ID, Action: action, SubscriptionID: last.ID, SubscriberID: last.SubscriberID,
			Kind: a.Kind, FirstDate: a.First.String(), LastDate: lastDate, PostalCode: a.PostalCode, Country: a.Country,
			Carrier: a.Carrier, Route: a.Route}, At: at}})
}

// CreateAddress saves a delivery address on the series of the context
// tenant's period subscriptionID (any period of it), checked by the
// organization's address rules. The subscriber's own (invoice) address is
// not touched.
func CreateAddress(ctx context.Context, st *store.Store, subscriptionID string, req AddressRequest, now time.Time) (Address, error) {
	now = now.UTC().Truncate(time.Microsecond)
	var out Address
	err := st.InTxRetrying(ctx, func(tx *store.Tx) error {
		last, err := lastPeriod(ctx, tx, subscriptionID)
		if err != nil {
			return err
		}
		loc, err := zone(last)
		if err != nil {
			return err
		}
		if err := addressSeriesRuns(last, req, loc); err != nil {
			return err
		}
		dec, rules, err := checkAddress(ctx, tx, last, req, "", now)
		if err != nil {
			return err
		}
		a := Address{ID: store.NewID(), SubscriptionID: last.ID, AskedOnID: subscriptionID, Kind: req.Kind, First: req.First,
			Last: req.Last, PostalAddress: req.Address, Carrier: dec.Carrier, Route: dec.Route,
			SurchargePerChange: rules.SurchargePerChange, SurchargePerEdition: rules.SurchargePerEdition, CreatedAt: now, UpdatedAt: now}
		// order_id: the distribution list finds a copy's addresses by its
		// order (every period of the series, and of a plan change's, keeps it).
		if _, err := tx.Exec(ctx, `INSERT INTO delivery_addresses (tenant_id, id, subscription_id, asked_on_id, kind, first_date, last_date,
				name, line1, line2, postal_code, city, country, carrier, route, surcharge_per_change, surcharge_per_edition, created_at, updated_at,
				order_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18, $19)`,
			tx.TenantID(), a.ID, a.SubscriptionID, subscriptionID, a.Kind, a.First.String(), lastDateParam(a.Last), a.Name, a.Line1,
			a.Line2, a.PostalCode, a.City, a.Country, a.Carrier, a.Route, a.SurchargePerChange, a.SurchargePerEdition,
			store.TimeParam(now), last.OrderID); err != nil {
			return err
		}
		out = a
		return addressEvent(ctx, tx, AddressCreated, last, a, now)
	})
	if err != nil {
		return Address{}, fmt.Errorf("delivery: create address on subscription %s: %w", subscriptionID, err)
	}
	return out, nil
}

// addressOf reads address id of the series of period subscriptionID (not
// deleted): another series' address, like another tenant's, is not found.
func addressOf(ctx context.Context, tx *store.Tx, subscriptionID, id string) (store.Subscription, Address, error) {
	if !store.ValidID(id) {
		return store.Subscription{}, Address{}, store.ErrNotFound
	}
	last, err := lastPeriod(ctx, tx, subscriptionID)
	if err != nil {
		return store.Subscription{}, Address{}, err
	}
	a, err := scanAddress(tx.QueryRow(ctx, `SELECT `+addressColumns+` FROM delivery_addresses
		WHERE tenant_id = $1 AND id = $2 AND subscription_id = $3 AND deleted_at IS NULL`, tx.TenantID(), id, last.ID))
	return last, a, store.NotFound(err)
}

// addressFixed refuses to change or delete an address that applies
// already (copies went there, the carrier has it) or whose surcharge was
// booked (a cancellation settled it).
func addressFixed(ctx context.Context, tx *store.Tx, a Address, today Date) error {
	if !today.Before(a.First) {
		return validation.Field("firstDate", "the address applies since %s; only an address that has not started can be changed or deleted (save a new one instead)", a.First)
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM delivery_address_charges WHERE tenant_id = $1 AND address_id = $2`,
		tx.TenantID(), a.ID).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return validation.Field("firstDate", "the address's surcharge was charged when the subscription was cancelled; it can no longer be changed or deleted")
	}
	return nil
}

// ChangeAddress replaces an address that has not started, checked again
// as a new one (its own old days do not count against it).
func ChangeAddress(ctx context.Context, st *store.Store, subscriptionID, id string, req AddressRequest, now time.Time) (Address, error) {
	now = now.UTC().Truncate(time.Microsecond)
	var out Address
	err := st.InTxRetrying(ctx, func(tx *store.Tx) error {
		last, a, err := addressOf(ctx, tx, subscriptionID, id)
		if err != nil {
			return err
		}
		loc, err := zone(last)
		if err != nil {
			return err
		}
		if err := addressFixed(ctx, tx, a, DateOf(now, loc)); err != nil {
			return err
		}
		if err := addressSeriesRuns(last, req, loc); err != nil {
			return err
		}
		dec, rules, err := checkAddress(ctx, tx, last, req, a.ID, now)
		if err != nil {
			return err
		}
		a.Kind, a.First, a.Last, a.PostalAddress, a.Carrier, a.Route, a.UpdatedAt = req.Kind, req.First, req.Last, req.Address, dec.Carrier, dec.Route, now
		a.SurchargePerChange, a.SurchargePerEdition = rules.SurchargePerChange, rules.SurchargePerEdition
		res, err := tx.Exec(ctx, `UPDATE delivery_addresses SET kind = $3, first_date = $4, last_date = $5, name = $6, line1 = $7, line2 = $8,
				postal_code = $9, city = $10, country = $11, carrier = $12, route = $13, surcharge_per_change = $14,
				surcharge_per_edition = $15, updated_at = $16
			WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`, tx.TenantID(), a.ID, a.Kind, a.First.String(), lastDateParam(a.Last),
			a.Name, a.Line1, a.Line2, a.PostalCode, a.City, a.Country, a.Carrier, a.Route, a.SurchargePerChange, a.SurchargePerEdition,
			store.TimeParam(now))
		if err != nil {
			return err
		}
		if err := store.OneRow(res); err != nil {
			return err
		}
		out = a
		return addressEvent(ctx, tx, AddressChanged, last, a, now)
	})
	if err != nil {
		return Address{}, fmt.Errorf("delivery: change address %s: %w", id, err)
	}
	return out, nil
}

// DeleteAddress deletes an address that has not started. The row stays
// (deleted_at) so the event's subject can still be read in the audit log.
func DeleteAddress(ctx context.Context, st *store.Store, subscriptionID, id string, now time.Time) error {
	now = now.UTC().Truncate(time.Microsecond)
	err := st.InTxRetrying(ctx, func(tx *store.Tx) error {
		last, a, err := addressOf(ctx, tx, subscriptionID, id)
		if err != nil {
			return err
		}
		loc, err := zone(last)
		if err != nil {
			return err
		}
		if err := addressFixed(ctx, tx, a, DateOf(now, loc)); err != nil {
			return err
		}
		res, err := tx.Exec(ctx, `UPDATE delivery_addresses SET deleted_at = $3, updated_at = $3 WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`,
			tx.TenantID(), a.ID, store.TimeParam(now))
		if err != nil {
			return err
		}
		if err := store.OneRow(res); err != nil {
			return err
		}
		return addressEvent(ctx, tx, AddressRemoved, last, a, now)
	})
	if err != nil {
		return fmt.Errorf("delivery: delete address %s: %w", id, err)
	}
	return nil
}

// AddressView is an address as read, with its state on the tenant's day
// and its surcharge, once booked.
type AddressView struct {
	Address
	State  string
	Charge *AddressCharge
}

func viewAddresses(ctx context.Context, tx *store.Tx, last store.Subscription, as []Address, now time.Time) ([]AddressView, error) {
	loc, err := zone(last)
	if err != nil {
		return nil, err
	}
	today := DateOf(now, loc)
	out := make([]AddressView, len(as))
	for i, a := range as {
		c, err := addressCharge(ctx, tx, a.ID)
		if err != nil {
			return nil, err
		}
		out[i] = AddressView{Address: a, State: a.State(today, as), Charge: c}
	}
	return out, nil
}

// ListAddresses are the addresses of the series of the context tenant's
// period subscriptionID (deleted ones left out), by first day.
func ListAddresses(ctx context.Context, st *store.Store, subscriptionID string, now time.Time) ([]AddressView, error) {
	var out []AddressView
	err := st.InTx(ctx, func(tx *store.Tx) error {
		last, err := lastPeriod(ctx, tx, subscriptionID)
		if err != nil {
			return err
		}
		as, err := seriesAddresses(ctx, tx, tx.TenantID(), last.ID)
		if err != nil {
			return err
		}
		out, err = viewAddresses(ctx, tx, last, as, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("delivery: addresses of subscription %s: %w", subscriptionID, err)
	}
	return out, nil
}

// GetAddress reads one address of the series of period subscriptionID.
func GetAddress(ctx context.Context, st *store.Store, subscriptionID, id string, now time.Time) (AddressView, error) {
	var out AddressView
	err := st.InTx(ctx, func(tx *store.Tx) error {
		last, a, err := addressOf(ctx, tx, subscriptionID, id)
		if err != nil {
			return err
		}
		as, err := seriesAddresses(ctx, tx, tx.TenantID(), last.ID)
		if err != nil {
			return err
		}
		vs, err := viewAddresses(ctx, tx, last, as, now)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if v.ID == a.ID {
				out = v
			}
		}
		return nil
	})
	if err != nil {
		return AddressView{}, fmt.Errorf("delivery: address %s: %w", id, err)
	}
	return out, nil
}
