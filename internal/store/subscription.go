package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

// Event kinds the engine records about subscriptions (the events table is
// the store's, so the kinds are named here, where every surface that lists
// them can read them without importing the engine).
const (
	EventSubscriptionCreated     = "SubscriptionCreated"
	EventSubscriptionCancelled   = "SubscriptionCancelled"
	EventSubscriptionDeactivated = "SubscriptionDeactivated"
	// EventSubscriptionCancellationRemoved is recorded when a cancellation
	// that had not taken effect is taken back (engine.UndoCancel).
	EventSubscriptionCancellationRemoved = "SubscriptionCancellationRemoved"
	// EventSubscriptionCancellationScheduled is recorded when a
	// cancellation asked during an EndOfBinding binding is accepted to
	// wait for the binding end (SubscriptionCancelled follows with the
	// renewal that creates the last bound period).
	EventSubscriptionCancellationScheduled = "SubscriptionCancellationScheduled"
	// EventPriceChangeNotified is recorded for every subscription a price
	// change will move, noticeDays before the change takes effect.
	EventPriceChangeNotified = "PriceChangeNotified"
)

// Subscription is one period of a subscriber's subscription to a package.
// A renewal creates the next period as a new Subscription linked by
// PreviousID/NextID; plan changes and chain steps change the package of
// the next period. Periods are computed from Anchor (the local midnight
// the series is anchored on) and PeriodIndex, never from the previous
// period's end, so month ends do not drift (31 Jan → 28 Feb → 31 Mar).
type Subscription struct {
	ID                 string                      `json:"id"`
	SubscriberID       string                      `json:"subscriberId"`
	OrganizationID     string                      `json:"organizationId"`
	OrderID            *string                     `json:"orderId"`
	PaymentAgreementID *string                     `json:"paymentAgreementId"`
	Currency           string                      `json:"currency"`
	Package            catalog.SubscriptionPackage `json:"package"`
	// Choices are the order's choices, re-applied when a chain moves the
	// subscription to its next step.
	Choices     catalog.Choices `json:"-"`
	ChainID     *string         `json:"subscriptionPackageChainId"`
	ChainStep   *int            `json:"chainStepOrder"`
	StepPeriod  int             `json:"chainStepPeriod"`
	TimeZone    string          `json:"timeZone"`
	Anchor      time.Time       `json:"-"`
	PeriodIndex int             `json:"-"`
	PeriodStart time.Time       `json:"periodStart"`
	PeriodEnd   time.Time       `json:"periodEnd"`
	// RenewAt is when the next period is created (ahead of PeriodEnd by the
	// billing plan's minimumDueDays); nil when the subscription will not
	// renew.
	RenewAt           *time.Time `json:"renewAt"`
	PreviousID        *string    `json:"previousSubscriptionId"`
	NextID            *string    `json:"nextSubscriptionId"`
	CancelledAt       *time.Time `json:"cancelledAt"`
	CancelEffectiveAt *time.Time `json:"cancelEffectiveAt"`
	CancelReason      string     `json:"cancelReason"`
	DeactivatedAt     *time.Time `json:"deactivatedAt"`
	// NextActionAt is the earliest time the engine has something to do
	// with this subscription (renew or deactivate); nil when nothing.
	NextActionAt *time.Time `json:"-"`
	Version      int        `json:"-"`
	CreatedAt    time.Time  `json:"createdAt"`
	// TemplatePackageID is the template the series was ordered from or
	// last changed to (chain steps keep it). It is bookkeeping for price
	// changes, not a link: the package is a copy that template edits never
	// reach, so it is not shown.
	TemplatePackageID *string `json:"-"`
	// BindingEnd is when the series' binding period ends (nil: none), and
	// BindingRule the early-cancellation rule it was started with
	// (catalog.EndOfBinding, catalog.ChargeRemainder). Renewals and chain
	// steps copy both; a plan change keeps or restarts them (docs/ORDERS.md,
	// "Binding periods"). The API shows the end as bindingEndsAt.
	BindingEnd  *time.Time `json:"-"`
	BindingRule string     `json:"-"`
	// ScheduledCancelAt is when a cancellation was asked during an
	// EndOfBinding binding, with its reason: the series renews until the
	// period that ends at BindingEnd, which is created cancelled with
	// effect at its end. It waits on the series' last period (renewals
	// copy it).
	ScheduledCancelAt     *time.Time `json:"-"`
	ScheduledCancelReason string     `json:"-"`
}

// subscriptionColumns are the columns of a Subscription in a SELECT from
// subscriptions (not aliased): the package is stored once per tenant and
// content in subscription_packages (migration 00020) and read from there.
const subscriptionColumns = `id, subscriber_id, organization_id, order_id, payment_agreement_id, currency,
	(SELECT sp.package FROM subscription_packages sp WHERE sp.tenant_id = subscriptions.tenant_id AND sp.hash = subscriptions.package_hash),
	choices, chain_id, chain_step, step_period, time_zone, anchor, period_index, period_start, period_end, renew_at,
	previous_id, next_id, cancelled_at, cancel_effective_at, cancel_reason, deactivated_at, next_action_at, version, created_at,
	template_package_id, binding_ends_at, binding_rule, scheduled_cancel_at, scheduled_cancel_reason`

// subscriptionInsertColumns are the columns args writes, in its order.
const subscriptionInsertColumns = `id, subscriber_id, organization_id, order_id, payment_agreement_id, currency, package_hash, choices,
	chain_id, chain_step, step_period, time_zone, anchor, period_index, period_start, period_end, renew_at,
	previous_id, next_id, cancelled_at, cancel_effective_at, cancel_reason, deactivated_at, next_action_at, version, created_at,
	template_package_id, binding_ends_at, binding_rule, scheduled_cancel_at, scheduled_cancel_reason`

// storedPackage is a package's JSON text and its key in
// subscription_packages (packageHash).
type storedPackage struct {
	hash, json string
}

// storePackages adds the packages to the tenant's subscription_packages,
// those it has already being left as they are (their text is the same).
// Periods refer to them by hash, so this comes before the periods are
// written, in the same transaction.
func (tx *Tx) storePackages(ctx context.Context, pkgs ...storedPackage) error {
	rows := make([][]any, 0, len(pkgs))
	seen := make(map[string]bool, len(pkgs))
	for _, p := range pkgs {
		if !seen[p.hash] {
			seen[p.hash] = true
			rows = append(rows, []any{tx.tenant, p.hash, p.json})
		}
	}
	if err := tx.insertRows(ctx, "subscription_packages", "tenant_id, hash, package", rows,
		"ON CONFLICT (tenant_id, hash) DO NOTHING"); err != nil {
		return fmt.Errorf("store: store subscription packages: %w", err)
	}
	return nil
}

// choicesJSON is the stored form of catalog.Choices (which has no JSON
// tags of its own: it is the merge's input, not an API shape).
type choicesJSON struct {
	BillingPlanID      string   `json:"billingPlanId,omitempty"`
	Units              *int     `json:"units,omitempty"`
	AdditionalProducts []string `json:"additionalProducts"`
	Price              *string  `json:"price,omitempty"`
	PermanentDiscount  *string  `json:"permanentDiscount,omitempty"`
	// Products is absent from choices stored before products could be
	// chosen, which decode as nil: every included product.
	Products []string `json:"products,omitempty"`
}

// EncodeChoices returns the stored JSON form of c.
func EncodeChoices(c catalog.Choices) (string, error) {
	j := choicesJSON{BillingPlanID: c.BillingPlanID, Units: c.Units, Products: c.Products, AdditionalProducts: c.AdditionalProducts}
	if c.Price != nil {
		s := c.Price.String()
		j.Price = &s
	}
	if c.PermanentDiscount != nil {
		s := c.PermanentDiscount.String()
		j.PermanentDiscount = &s
	}
	b, err := json.Marshal(j)
	return string(b), err
}

// DecodeChoices reads choices stored by EncodeChoices.
func DecodeChoices(s string) (catalog.Choices, error) {
	var j choicesJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil {
		return catalog.Choices{}, err
	}
	c := catalog.Choices{BillingPlanID: j.BillingPlanID, Units: j.Units, Products: j.Products, AdditionalProducts: j.AdditionalProducts}
	if j.Price != nil {
		d, err := decimal.NewFromString(*j.Price)
		if err != nil {
			return c, err
		}
		c.Price = &d
	}
	if j.PermanentDiscount != nil {
		d, err := decimal.NewFromString(*j.PermanentDiscount)
		if err != nil {
			return c, err
		}
		c.PermanentDiscount = &d
	}
	return c, nil
}

func scanSubscription(row scanner) (Subscription, error) { return scanSubscriptionWith(row, nil) }

// subscriptionDecoder decodes the package and choices texts of scanned
// subscriptions once per distinct text: a batch of the engine holds many
// subscriptions of the same package, and decoding the package's JSON was
// most of the cost of reading one. Subscriptions it decodes share the
// slices and pointers of their Package and Choices, which nobody changes in
// place (a new package or choice is always a new value).
type subscriptionDecoder struct {
	packages map[string]catalog.SubscriptionPackage
	choices  map[string]catalog.Choices
}

func (d *subscriptionDecoder) decode(sub *Subscription, pkg, choices string) error {
	if d == nil {
		if err := json.Unmarshal([]byte(pkg), &sub.Package); err != nil {
			return fmt.Errorf("subscription %s package: %w", sub.ID, err)
		}
		var err error
		if sub.Choices, err = DecodeChoices(choices); err != nil {
			return fmt.Errorf("subscription %s choices: %w", sub.ID, err)
		}
		return nil
	}
	if p, ok := d.packages[pkg]; ok {
		sub.Package = p
	} else {
		if err := json.Unmarshal([]byte(pkg), &sub.Package); err != nil {
			return fmt.Errorf("subscription %s package: %w", sub.ID, err)
		}
		d.packages[pkg] = sub.Package
	}
	if c, ok := d.choices[choices]; ok {
		sub.Choices = c
	} else {
		var err error
		if sub.Choices, err = DecodeChoices(choices); err != nil {
			return fmt.Errorf("subscription %s choices: %w", sub.ID, err)
		}
		d.choices[choices] = sub.Choices
	}
	return nil
}

func newSubscriptionDecoder() *subscriptionDecoder {
	return &subscriptionDecoder{packages: map[string]catalog.SubscriptionPackage{}, choices: map[string]catalog.Choices{}}
}

func scanSubscriptionWith(row scanner, d *subscriptionDecoder) (Subscription, error) {
	var (
		sub                                         Subscription
		pkg, choices                                string
		renew, cancelled, effective, deact, nextAct sql.NullTime
		orderID, agreement, chainID, prev, next     sql.NullString
		template                                    sql.NullString
		chainStep                                   sql.NullInt64
		bindingEnd, scheduledCancel                 sql.NullTime
	)
	err := row.Scan(&sub.ID, &sub.SubscriberID, &sub.OrganizationID, &orderID, &agreement, &sub.Currency, &pkg, &choices,
		&chainID, &chainStep, &sub.StepPeriod, &sub.TimeZone, &sub.Anchor, &sub.PeriodIndex, &sub.PeriodStart, &sub.PeriodEnd, &renew,
		&prev, &next, &cancelled, &effective, &sub.CancelReason, &deact, &nextAct, &sub.Version, &sub.CreatedAt, &template,
		&bindingEnd, &sub.BindingRule, &scheduledCancel, &sub.ScheduledCancelReason)
	if err != nil {
		return Subscription{}, err
	}
	if err := d.decode(&sub, pkg, choices); err != nil {
		return Subscription{}, err
	}
	sub.OrderID, sub.PaymentAgreementID, sub.ChainID = nullString(orderID), nullString(agreement), nullString(chainID)
	sub.PreviousID, sub.NextID, sub.TemplatePackageID = nullString(prev), nullString(next), nullString(template)
	if chainStep.Valid {
		n := int(chainStep.Int64)
		sub.ChainStep = &n
	}
	sub.RenewAt, sub.CancelledAt, sub.CancelEffectiveAt = fromNullTime(renew), fromNullTime(cancelled), fromNullTime(effective)
	sub.DeactivatedAt, sub.NextActionAt = fromNullTime(deact), fromNullTime(nextAct)
	sub.BindingEnd, sub.ScheduledCancelAt = fromNullTime(bindingEnd), fromNullTime(scheduledCancel)
	sub.Anchor, sub.PeriodStart, sub.PeriodEnd, sub.CreatedAt = sub.Anchor.UTC(), sub.PeriodStart.UTC(), sub.PeriodEnd.UTC(), sub.CreatedAt.UTC()
	return sub, nil
}

func nullString(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	s := n.String
	return &s
}

func optTS(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ts(*t)
}

// args are sub's values for subscriptionInsertColumns, and its package
// as stored (storePackages). enc, if not nil, remembers the packages it
// encoded (see packageEncoder).
func (sub Subscription) args(enc *packageEncoder) ([]any, storedPackage, error) {
	pkg, err := enc.encode(sub.Package)
	if err != nil {
		return nil, pkg, fmt.Errorf("store: encode package: %w", err)
	}
	choices, err := EncodeChoices(sub.Choices)
	if err != nil {
		return nil, pkg, fmt.Errorf("store: encode choices: %w", err)
	}
	var chainStep any
	if sub.ChainStep != nil {
		chainStep = *sub.ChainStep
	}
	return []any{sub.ID, sub.SubscriberID, sub.OrganizationID, sub.OrderID, sub.PaymentAgreementID, sub.Currency, pkg.hash, choices,
		sub.ChainID, chainStep, sub.StepPeriod, sub.TimeZone, ts(sub.Anchor), sub.PeriodIndex, ts(sub.PeriodStart), ts(sub.PeriodEnd), optTS(sub.RenewAt),
		sub.PreviousID, sub.NextID, optTS(sub.CancelledAt), optTS(sub.CancelEffectiveAt), sub.CancelReason, optTS(sub.DeactivatedAt),
		optTS(sub.NextActionAt), sub.Version, ts(sub.CreatedAt), sub.TemplatePackageID,
		optTS(sub.BindingEnd), sub.BindingRule, optTS(sub.ScheduledCancelAt), sub.ScheduledCancelReason}, pkg, nil
}

// packageEncoder encodes subscription packages as JSON, remembering the
// last few it encoded. The periods a batch of renewals creates mostly share
// one package (DueSubscriptions decodes each distinct one once), and
// encoding it again for every period was a fifth of the engine's own CPU
// on PostgreSQL; comparing with reflect.DeepEqual is far cheaper, and
// equal values encode to the same JSON. A nil encoder remembers nothing.
type packageEncoder struct {
	recent []encodedPackage
}

type encodedPackage struct {
	pkg    catalog.SubscriptionPackage
	stored storedPackage
}

const packageEncoderSize = 4

func (e *packageEncoder) encode(p catalog.SubscriptionPackage) (storedPackage, error) {
	if e != nil {
		for _, r := range e.recent {
			if reflect.DeepEqual(r.pkg, p) {
				return r.stored, nil
			}
		}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return storedPackage{}, err
	}
	stored := storedPackage{hash: packageHash(string(b)), json: string(b)}
	if e != nil {
		if len(e.recent) == packageEncoderSize {
			e.recent = e.recent[1:]
		}
		e.recent = append(e.recent, encodedPackage{p, stored})
	}
	return stored, nil
}

// InsertSubscription stores a new subscription (its ID set by the caller).
func (tx *Tx) InsertSubscription(ctx context.Context, sub Subscription) error {
	sub.Version = 1
	args, pkg, err := sub.args(nil)
	if err != nil {
		return err
	}
	if err := tx.storePackages(ctx, pkg); err != nil {
		return err
	}
	_, err = tx.exec(ctx, `INSERT INTO subscriptions (tenant_id, `+subscriptionInsertColumns+`) VALUES ($1, $2, $3, $4, $5, $6,
		$7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32)`,
		append([]any{tx.tenant}, args...)...)
	if err != nil {
		return fmt.Errorf("store: insert subscription: %w", err)
	}
	return nil
}

// InsertSubscriptions stores new periods (Version 1) like
// InsertSubscription, with multi-row inserts.
func (tx *Tx) InsertSubscriptions(ctx context.Context, subs []Subscription) error {
	if len(subs) == 0 {
		return nil
	}
	rows := make([][]any, len(subs))
	var (
		enc  packageEncoder
		pkgs []storedPackage
	)
	for i, sub := range subs {
		sub.Version = 1
		args, pkg, err := sub.args(&enc)
		if err != nil {
			return err
		}
		rows[i] = append([]any{tx.tenant}, args...)
		if !slices.Contains(pkgs, pkg) { // a batch holds a few packages
			pkgs = append(pkgs, pkg)
		}
	}
	if err := tx.storePackages(ctx, pkgs...); err != nil {
		return err
	}
	if err := tx.insertRows(ctx, "subscriptions", "tenant_id, "+subscriptionInsertColumns, rows, ``); err != nil {
		return fmt.Errorf("store: insert subscriptions: %w", err)
	}
	return nil
}

// UpdateSubscription writes sub's mutable state (links, renewal,
// cancellation, deactivation, next action, package, agreement) if nobody
// changed it since it was read (same Version); otherwise it returns
// ErrConflict and the caller's transaction must roll back.
func (tx *Tx) UpdateSubscription(ctx context.Context, sub Subscription) error {
	pkg, err := (*packageEncoder)(nil).encode(sub.Package)
	if err != nil {
		return fmt.Errorf("store: encode package: %w", err)
	}
	if err := tx.storePackages(ctx, pkg); err != nil {
		return err
	}
	res, err := tx.exec(ctx, `UPDATE subscriptions SET package_hash = $3, payment_agreement_id = $4, renew_at = $5,
		next_id = $6, cancelled_at = $7, cancel_effective_at = $8, cancel_reason = $9, deactivated_at = $10,
		next_action_at = $11, scheduled_cancel_at = $13, scheduled_cancel_reason = $14, version = version + 1
		WHERE tenant_id = $1 AND id = $2 AND version = $12`,
		tx.tenant, sub.ID, pkg.hash, sub.PaymentAgreementID, optTS(sub.RenewAt), sub.NextID, optTS(sub.CancelledAt),
		optTS(sub.CancelEffectiveAt), sub.CancelReason, optTS(sub.DeactivatedAt), optTS(sub.NextActionAt), sub.Version,
		optTS(sub.ScheduledCancelAt), sub.ScheduledCancelReason)
	if err != nil {
		return fmt.Errorf("store: update subscription %s: %w", sub.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: update subscription %s: %w", sub.ID, err)
	} else if n == 0 {
		return fmt.Errorf("store: subscription %s changed concurrently: %w", sub.ID, ErrConflict)
	}
	return nil
}

// TouchSubscription claims subscription id at version for the caller's
// transaction (version + 1), so that a concurrent writer that read the
// same version — a cancellation racing a plan change's registration —
// gets ErrConflict instead of deciding on a state that no longer holds.
func (tx *Tx) TouchSubscription(ctx context.Context, id string, version int) error {
	res, err := tx.exec(ctx, `UPDATE subscriptions SET version = version + 1 WHERE tenant_id = $1 AND id = $2 AND version = $3`,
		tx.tenant, id, version)
	if err != nil {
		return fmt.Errorf("store: touch subscription %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: touch subscription %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("store: subscription %s changed concurrently: %w", id, ErrConflict)
	}
	return nil
}

// UpdateSubscriptionSchedules writes, for every subscription of subs, what
// the engine's renewal pass changes — renew_at, next_id, deactivated_at and
// next_action_at, nothing else — if nobody changed the row since it was
// read (same Version), with a few set-based UPDATEs instead of one per
// row. If any row was changed (or is missing) it returns ErrConflict and
// the caller's transaction must roll back. The ids must be distinct.
func (tx *Tx) UpdateSubscriptionSchedules(ctx context.Context, subs []Subscription) error {
	if len(subs) == 0 {
		return nil
	}
	rows := make([][]any, len(subs))
	for i, sub := range subs {
		rows[i] = []any{sub.ID, sub.Version, optTS(sub.RenewAt), sub.NextID, optTS(sub.DeactivatedAt), optTS(sub.NextActionAt)}
	}
	// The statement joins the subscriptions to a VALUES list; PostgreSQL
	// types that list's parameters as text unless told.
	row := `(?, ?, ?, ?, ?, ?)`
	if tx.s.engine == Postgres {
		row = `(?::uuid, ?::integer, ?::timestamptz, ?::uuid, ?::timestamptz, ?::timestamptz)`
	}
	n, err := tx.updateRows(ctx, `WITH v (id, version, renew_at, next_id, deactivated_at, next_action_at) AS (VALUES `, row,
		`) UPDATE subscriptions AS s SET renew_at = v.renew_at, next_id = v.next_id, deactivated_at = v.deactivated_at,
		next_action_at = v.next_action_at, version = s.version + 1
		FROM v WHERE s.tenant_id = ? AND s.id = v.id AND s.version = v.version`, rows)
	if err != nil {
		return fmt.Errorf("store: update %d subscriptions (first %s): %w", len(subs), subs[0].ID, err)
	}
	if n != int64(len(subs)) {
		return fmt.Errorf("store: %d of %d subscriptions (first %s) changed concurrently: %w", int64(len(subs))-n, len(subs), subs[0].ID, ErrConflict)
	}
	return nil
}

// Subscription reads subscription id in the transaction.
func (tx *Tx) Subscription(ctx context.Context, id string) (Subscription, error) {
	if !ValidID(id) {
		return Subscription{}, ErrNotFound
	}
	sub, err := scanSubscription(tx.queryRow(ctx,
		`SELECT `+subscriptionColumns+` FROM subscriptions WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
	if err != nil {
		return Subscription{}, fmt.Errorf("store: subscription %s: %w", id, notFound(err))
	}
	return sub, nil
}

// DueSubscriptions returns up to limit subscriptions whose next action is
// due at or before until, earliest first (ties by id), so that repeated
// calls walk the work in one deterministic order.
func (tx *Tx) DueSubscriptions(ctx context.Context, until time.Time, limit int) ([]Subscription, error) {
	rows, err := tx.query(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE tenant_id = $1 AND next_action_at IS NOT NULL AND next_action_at <= $2
		ORDER BY next_action_at, id LIMIT $3`, tx.tenant, ts(until), limit)
	if err != nil {
		return nil, fmt.Errorf("store: due subscriptions: %w", err)
	}
	defer rows.Close()
	out := make([]Subscription, 0, max(0, min(limit, 1024)))
	dec := newSubscriptionDecoder()
	for rows.Next() {
		sub, err := scanSubscriptionWith(rows, dec)
		if err != nil {
			return nil, fmt.Errorf("store: due subscriptions: %w", err)
		}
		out = append(out, sub)
	}
	return out, rows.Err()
}

// NextSubscriptionAction returns the earliest pending action time of the
// tenant's subscriptions, or nil.
func (tx *Tx) NextSubscriptionAction(ctx context.Context) (*time.Time, error) {
	var t anyTime
	if err := tx.queryRow(ctx, `SELECT MIN(next_action_at) FROM subscriptions WHERE tenant_id = $1 AND next_action_at IS NOT NULL`,
		tx.tenant).Scan(&t); err != nil {
		return nil, fmt.Errorf("store: next subscription action: %w", err)
	}
	return t.t, nil
}

// Subscription returns subscription id of the context's tenant.
func (s *Store) Subscription(ctx context.Context, id string) (Subscription, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Subscription{}, err
	}
	if !ValidID(id) {
		return Subscription{}, ErrNotFound
	}
	sub, err := scanSubscription(s.readRow(ctx,
		`SELECT `+subscriptionColumns+` FROM subscriptions WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return Subscription{}, fmt.Errorf("store: subscription %s: %w", id, notFound(err))
	}
	return sub, nil
}

// SubscriptionFilter narrows ListSubscriptions; zero fields do not filter.
type SubscriptionFilter struct {
	SubscriberID   string
	OrganizationID string
	// ActiveAt keeps subscriptions whose period contains the time and that
	// were not deactivated before it.
	ActiveAt *time.Time
	// RenewingBefore keeps subscriptions that will renew at or before the
	// time (the renewal schedule).
	RenewingBefore *time.Time
	// Status keeps subscriptions with that derived status at Now
	// (Pending, Active, Completed or Cancelled; see engine.Status).
	Status string
	Now    time.Time
}

// ListSubscriptions returns one page of the tenant's subscriptions.
func (s *Store) ListSubscriptions(ctx context.Context, f SubscriptionFilter, p Page) ([]Subscription, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := subscriptionConditions(tenant, f)
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanSubscription, `SELECT `+subscriptionColumns+` FROM subscriptions`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list subscriptions: %w", err)
	}
	out, next := trimPage(out, p, func(sub Subscription) string { return sub.ID })
	return out, next, nil
}

// LiveSeriesOfTemplate returns the last period of every running series
// (not renewed yet, not cancelled, not deactivated) ordered from or changed
// to template templateID, by id. q is the transaction's or the store's
// read handle, so previews read on the read pool.
func liveSeriesOfTemplate(ctx context.Context, q queryer, tenant, templateID string) ([]Subscription, error) {
	out, err := queryAll(ctx, q, scanSubscription, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE tenant_id = $1 AND template_package_id = $2 AND next_id IS NULL AND cancelled_at IS NULL AND deactivated_at IS NULL
		ORDER BY id`, tenant, templateID)
	if err != nil {
		return nil, fmt.Errorf("store: running subscriptions of template %s: %w", templateID, err)
	}
	return out, nil
}

// LiveSeriesOfTemplate: see liveSeriesOfTemplate; in tx.
func (tx *Tx) LiveSeriesOfTemplate(ctx context.Context, templateID string) ([]Subscription, error) {
	return liveSeriesOfTemplate(ctx, tx.tx, tx.tenant, templateID)
}

// LiveSeriesOfTemplate: see liveSeriesOfTemplate; on the read pool.
func (s *Store) LiveSeriesOfTemplate(ctx context.Context, templateID string) ([]Subscription, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	return liveSeriesOfTemplate(ctx, s.r, tenant, templateID)
}

// SubscriptionNotOverAt3 is true for a subscription period s that grants
// access at $3 or will later: not ended, no cancellation or deactivation
// in effect. Of those, the started ones (period_start <= $3, decided by
// the caller) grant it now; the others' starts are when the answer
// changes next. It is the store's SQL for a subscription's status as
// access reads it, exported for the identity wing's entitlement read and
// authorization events.
const SubscriptionNotOverAt3 = ` s.period_end > $3
		AND (s.cancel_effective_at IS NULL OR s.cancel_effective_at > $3)
		AND (s.deactivated_at IS NULL OR s.deactivated_at > $3)`
