package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

// Processing types of a plan change.
const (
	ChangeImmediately     = "Immediately"
	ChangeOnScheduledTime = "OnScheduledTime"
	ChangeOnRenewal       = "OnRenewal"
)

// Statuses of a plan change.
const (
	ChangeRegistered = "Registered"
	ChangeExecuted   = "Executed"
	ChangeRevoked    = "Revoked"
	// ChangeExpired: the change can no longer run (its series ended, or its
	// template changed so that its choices no longer fit).
	ChangeExpired = "Expired"
)

// Reasons a plan change was revoked or expired.
const (
	// ReasonRevoked: the client deleted the change.
	ReasonRevoked = "RevokedByClient"
	// ReasonSuperseded: an Immediately change ran before it.
	ReasonSuperseded = "Superseded"
	// ReasonSubscriptionCancelled: the subscription was cancelled.
	ReasonSubscriptionCancelled = "SubscriptionCancelled"
	// ReasonSeriesEnded: the series ended (automatic stop) before it ran.
	ReasonSeriesEnded = "SeriesEnded"
	// ReasonCannotRun: the target template no longer takes the change's
	// choices, or is gone.
	ReasonCannotRun = "CannotRun"
)

// ScheduledChange is a plan change registered on a subscription: the target
// template package and choices, and when it applies.
//
// SubscriptionID is the period the change was registered on and never
// changes; PendingOnID is the period whose renewal (or whose series) the
// change waits on while it is Registered: the last period of the series,
// which moves forward as renewals create periods. At most one change per
// series is Registered at a time.
type ScheduledChange struct {
	ID                   string          `json:"id"`
	SubscriptionID       string          `json:"subscriptionId" description:"The subscription period the change was registered on."`
	PendingOnID          string          `json:"-"`
	ProcessingType       string          `json:"processingType" enum:"Immediately,OnScheduledTime,OnRenewal"`
	ScheduledAt          *time.Time      `json:"scheduledTime"`
	TemplatePackageID    string          `json:"templatePackageId"`
	Choices              catalog.Choices `json:"-"`
	Status               string          `json:"status" enum:"Registered,Executed,Revoked,Expired"`
	Reason               *string         `json:"reason" description:"Why a change was Revoked (RevokedByClient, Superseded, SubscriptionCancelled) or Expired (SeriesEnded, CannotRun)."`
	RegisteredAt         time.Time       `json:"registeredAt"`
	ExecutedAt           *time.Time      `json:"executedAt"`
	RevokedAt            *time.Time      `json:"revokedAt"`
	ExpiredAt            *time.Time      `json:"expiredAt"`
	ResultSubscriptionID *string         `json:"resultSubscriptionId" description:"The subscription period the change produced once Executed."`
	PriceChangeID        *string         `json:"priceChangeId" description:"The price change that registered this change, if any."`
	NotBefore            *time.Time      `json:"notBefore" description:"An OnRenewal change of a price change applies at the first renewal whose new period starts at or after this time."`
}

const changeColumns = `id, registered_on_id, subscription_id, processing_type, scheduled_at, template_package_id, choices, status,
	reason, registered_at, executed_at, revoked_at, expired_at, result_subscription_id, price_change_id, not_before`

func scanChange(row scanner) (ScheduledChange, error) {
	var (
		c                                    ScheduledChange
		choices                              string
		scheduled, executed, revoke, expired sql.NullTime
		notBefore                            sql.NullTime
		result, reason, priceChange          sql.NullString
	)
	if err := row.Scan(&c.ID, &c.SubscriptionID, &c.PendingOnID, &c.ProcessingType, &scheduled, &c.TemplatePackageID, &choices, &c.Status,
		&reason, &c.RegisteredAt, &executed, &revoke, &expired, &result, &priceChange, &notBefore); err != nil {
		return ScheduledChange{}, err
	}
	var err error
	if c.Choices, err = DecodeChoices(choices); err != nil {
		return ScheduledChange{}, fmt.Errorf("change %s choices: %w", c.ID, err)
	}
	c.ScheduledAt, c.ExecutedAt, c.RevokedAt, c.ExpiredAt = fromNullTime(scheduled), fromNullTime(executed), fromNullTime(revoke), fromNullTime(expired)
	c.ResultSubscriptionID, c.Reason, c.PriceChangeID = nullString(result), nullString(reason), nullString(priceChange)
	c.NotBefore = fromNullTime(notBefore)
	c.RegisteredAt = c.RegisteredAt.UTC()
	return c, nil
}

// InsertChange registers c (ID set by the caller). A second registered
// change pending on the same period is a conflict (the schema allows one).
func (tx *Tx) InsertChange(ctx context.Context, c ScheduledChange) error {
	args, err := c.args()
	if err != nil {
		return err
	}
	_, err = tx.exec(ctx, `INSERT INTO scheduled_changes (tenant_id, `+changeColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`, append([]any{tx.tenant}, args...)...)
	if err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("store: insert plan change: another change is registered: %w", ErrConflict)
		}
		return fmt.Errorf("store: insert plan change: %w", err)
	}
	return nil
}

func (c ScheduledChange) args() ([]any, error) {
	choices, err := EncodeChoices(c.Choices)
	if err != nil {
		return nil, fmt.Errorf("store: encode choices: %w", err)
	}
	return []any{c.ID, c.SubscriptionID, c.PendingOnID, c.ProcessingType, optTS(c.ScheduledAt), c.TemplatePackageID, choices, c.Status,
		c.Reason, ts(c.RegisteredAt), optTS(c.ExecutedAt), optTS(c.RevokedAt), optTS(c.ExpiredAt), c.ResultSubscriptionID, c.PriceChangeID,
		optTS(c.NotBefore)}, nil
}

// InsertChanges registers many changes at once (a price change's).
func (tx *Tx) InsertChanges(ctx context.Context, cs []ScheduledChange) error {
	if len(cs) == 0 {
		return nil
	}
	rows := make([][]any, len(cs))
	for i, c := range cs {
		args, err := c.args()
		if err != nil {
			return err
		}
		rows[i] = append([]any{tx.tenant}, args...)
	}
	if err := tx.insertRows(ctx, "scheduled_changes", "tenant_id, "+changeColumns, rows, ``); err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("store: insert plan changes: another change is registered: %w", ErrConflict)
		}
		return fmt.Errorf("store: insert plan changes: %w", err)
	}
	return nil
}

// FinishChange moves a registered change to status: Executed (with the
// period it produced), Revoked or Expired (with a reason). It returns
// ErrConflict when the change is no longer registered, so a change runs or
// ends exactly once.
func (tx *Tx) FinishChange(ctx context.Context, id, status string, at time.Time, result *string, reason string) error {
	var executed, revoked, expired, why any
	switch status {
	case ChangeRevoked:
		revoked = ts(at)
	case ChangeExpired:
		expired = ts(at)
	default:
		executed = ts(at)
	}
	if reason != "" {
		why = reason
	}
	res, err := tx.exec(ctx, `UPDATE scheduled_changes SET status = $3, executed_at = $4, revoked_at = $5, expired_at = $6,
		result_subscription_id = $7, reason = $8
		WHERE tenant_id = $1 AND id = $2 AND status = 'Registered'`, tx.tenant, id, status, executed, revoked, expired, result, why)
	if err != nil {
		return fmt.Errorf("store: finish plan change %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: finish plan change %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("store: plan change %s is no longer registered: %w", id, ErrConflict)
	}
	return nil
}

// EndChanges moves every registered change pending on any of the periods
// ids to status (Revoked or Expired) with reason, and returns how many it
// ended: a cancellation revokes what waits on its series, an ended series
// expires it.
func (tx *Tx) EndChanges(ctx context.Context, ids []string, status, reason string, at time.Time) (int, error) {
	col := "revoked_at"
	if status == ChangeExpired {
		col = "expired_at"
	}
	n := 0
	for _, id := range ids {
		res, err := tx.exec(ctx, `UPDATE scheduled_changes SET status = $3, reason = $4, `+col+` = $5
			WHERE tenant_id = $1 AND subscription_id = $2 AND status = 'Registered'`, tx.tenant, id, status, reason, ts(at))
		if err != nil {
			return n, fmt.Errorf("store: end plan changes of %s: %w", id, err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return n, fmt.Errorf("store: end plan changes of %s: %w", id, err)
		}
		n += int(k)
	}
	return n, nil
}

// MoveChanges re-attaches the registered changes of subscription from to
// subscription to (a renewal hands pending changes to the next period).
func (tx *Tx) MoveChanges(ctx context.Context, from, to string) error {
	if _, err := tx.exec(ctx, `UPDATE scheduled_changes SET subscription_id = $3
		WHERE tenant_id = $1 AND subscription_id = $2 AND status = 'Registered'`, tx.tenant, from, to); err != nil {
		return fmt.Errorf("store: move plan changes: %w", err)
	}
	return nil
}

// PendingChanges returns the registered change waiting on each of the
// periods ids that has one (at most one each: the schema allows no
// more), read in chunks; the engine asks once per batch.
func (tx *Tx) PendingChanges(ctx context.Context, ids []string) (map[string]ScheduledChange, error) {
	out := map[string]ScheduledChange{}
	err := tx.queryIn(ctx, `SELECT `+changeColumns+` FROM scheduled_changes WHERE tenant_id = $1 AND status = 'Registered' AND subscription_id IN `,
		``, nil, ids, func(rows *sql.Rows) error {
			c, err := scanChange(rows)
			if err != nil {
				return err
			}
			out[c.PendingOnID] = c
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: pending plan changes: %w", err)
	}
	return out, nil
}

// PendingChangeOn is the registered change waiting on period id (nil when
// none), read on the read pool: what PendingChanges finds for one period
// in the engine's transaction.
func (s *Store) PendingChangeOn(ctx context.Context, id string) (*ScheduledChange, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	if !ValidID(id) {
		return nil, nil
	}
	cs, err := queryChanges(ctx, s.r, `SELECT `+changeColumns+` FROM scheduled_changes
		WHERE tenant_id = $1 AND status = 'Registered' AND subscription_id = $2`, tenant, id)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	return &cs[0], nil
}

// DueChanges returns registered OnScheduledTime changes due at or before
// until, earliest first.
func (tx *Tx) DueChanges(ctx context.Context, until time.Time, limit int) ([]ScheduledChange, error) {
	return queryChanges(ctx, tx.tx, `SELECT `+changeColumns+` FROM scheduled_changes
		WHERE tenant_id = $1 AND status = 'Registered' AND scheduled_at IS NOT NULL AND scheduled_at <= $2
		ORDER BY scheduled_at, id LIMIT $3`, tx.tenant, ts(until), limit)
}

// NextChangeAt returns the earliest scheduled time of a registered change.
func (tx *Tx) NextChangeAt(ctx context.Context) (*time.Time, error) {
	var t anyTime
	if err := tx.queryRow(ctx, `SELECT MIN(scheduled_at) FROM scheduled_changes
		WHERE tenant_id = $1 AND status = 'Registered' AND scheduled_at IS NOT NULL`, tx.tenant).Scan(&t); err != nil {
		return nil, fmt.Errorf("store: next plan change: %w", err)
	}
	return t.t, nil
}

// Change reads plan change id.
func (tx *Tx) Change(ctx context.Context, id string) (ScheduledChange, error) {
	if !ValidID(id) {
		return ScheduledChange{}, ErrNotFound
	}
	c, err := scanChange(tx.queryRow(ctx, `SELECT `+changeColumns+` FROM scheduled_changes
		WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
	if err != nil {
		return ScheduledChange{}, fmt.Errorf("store: plan change %s: %w", id, notFound(err))
	}
	return c, nil
}

// ChangesOfSeries lists the changes registered on any of the periods ids
// (a series), oldest first.
func (s *Store) ChangesOfSeries(ctx context.Context, ids []string) ([]ScheduledChange, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, err
	}
	var out []ScheduledChange
	for _, id := range ids {
		cs, err := queryChanges(ctx, s.r, `SELECT `+changeColumns+` FROM scheduled_changes
			WHERE tenant_id = $1 AND registered_on_id = $2`, tenant, id)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	slices.SortFunc(out, func(a, b ScheduledChange) int {
		if c := a.RegisteredAt.Compare(b.RegisteredAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

func queryChanges(ctx context.Context, q queryer, query string, args ...any) ([]ScheduledChange, error) {
	out, err := queryAll(ctx, q, scanChange, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: plan changes: %w", err)
	}
	return out, nil
}
