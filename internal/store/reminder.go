package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/billing"
	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

// EventReminderIssued is recorded when a reminder is issued.
const EventReminderIssued = "ReminderIssued"

// dunningResolver reads the tenant's dunning processes once per batch of
// invoices and returns what applies to an invoice of billing plan planID:
// the plan's process, else the tenant's default, with its first reminder
// day; ok is false when none applies (or it has no reminders). A tenant
// without dunning processes costs one query per batch.
func (tx *Tx) dunningResolver(ctx context.Context) (func(planID string) (id string, firstDays int, ok bool), error) {
	type proc struct {
		first int
		ok    bool
	}
	procs := map[string]proc{}
	var def string
	err := tx.queryEach(ctx, `SELECT id, reminder_days, is_default FROM dunning_processes WHERE tenant_id = $1`, []any{tx.tenant},
		func(rows *sql.Rows) error {
			var (
				id, raw string
				isDef   bool
				days    []int
			)
			if err := rows.Scan(&id, &raw, &isDef); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(raw), &days); err != nil {
				return fmt.Errorf("dunning process %s: %w", id, err)
			}
			if len(days) > 0 {
				procs[id] = proc{first: days[0], ok: true}
			}
			if isDef {
				def = id
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: dunning processes: %w", err)
	}
	none := func(string) (string, int, bool) { return "", 0, false }
	if len(procs) == 0 {
		return none, nil
	}
	byPlan := map[string]string{}
	err = tx.queryEach(ctx, `SELECT id, dunning_process_id FROM billing_plans WHERE tenant_id = $1 AND dunning_process_id IS NOT NULL`,
		[]any{tx.tenant}, func(rows *sql.Rows) error {
			var plan, process string
			if err := rows.Scan(&plan, &process); err != nil {
				return err
			}
			byPlan[plan] = process
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: dunning processes of plans: %w", err)
	}
	return func(planID string) (string, int, bool) {
		id := def
		if p, ok := byPlan[planID]; ok {
			id = p
		}
		p := procs[id]
		return id, p.first, p.ok
	}, nil
}

// DunningTime is days local calendar days after the due time (the same
// time of day, at local midnight for demands due at a period start).
func DunningTime(due time.Time, days int, loc *time.Location) time.Time {
	return due.In(loc).AddDate(0, 0, days).UTC()
}

// DunningDemand is a demand whose next dunning action is due.
type DunningDemand struct {
	ID             string
	InvoiceID      string
	InvoiceNumber  int64
	AccountID      string
	SubscriberID   string
	SubscriptionID *string
	Currency       string
	Status         string
	DueAt          time.Time
	RemindersSent  int
	ProcessID      *string
	TimeZone       string
}

// NextDunningAt returns when the tenant's earliest dunning action is due,
// or nil.
func (tx *Tx) NextDunningAt(ctx context.Context) (*time.Time, error) {
	var at anyTime
	if err := tx.queryRow(ctx, `SELECT MIN(next_dunning_at) FROM payment_demands WHERE tenant_id = $1 AND next_dunning_at IS NOT NULL`,
		tx.tenant).Scan(&at); err != nil {
		return nil, fmt.Errorf("store: next dunning action: %w", err)
	}
	return at.t, nil
}

// DueDunning returns up to limit demands whose next dunning action is due
// exactly at at, in id order.
func (tx *Tx) DueDunning(ctx context.Context, at time.Time, limit int) ([]DunningDemand, error) {
	var out []DunningDemand
	err := tx.queryEach(ctx, `SELECT d.id, d.invoice_id, i.invoice_number, d.account_id, d.subscriber_id, d.subscription_id,
		d.currency, d.status, d.due_at, d.reminders_sent, d.dunning_process_id, o.time_zone
		FROM payment_demands d
		JOIN invoices i ON i.tenant_id = d.tenant_id AND i.id = d.invoice_id
		JOIN organizations o ON o.tenant_id = d.tenant_id AND o.id = d.organization_id
		WHERE d.tenant_id = $1 AND d.next_dunning_at = $2 ORDER BY d.id LIMIT $3`,
		[]any{tx.tenant, ts(at), limit}, func(rows *sql.Rows) error {
			var (
				d            DunningDemand
				sub, process sql.NullString
			)
			if err := rows.Scan(&d.ID, &d.InvoiceID, &d.InvoiceNumber, &d.AccountID, &d.SubscriberID, &sub, &d.Currency,
				&d.Status, &d.DueAt, &d.RemindersSent, &process, &d.TimeZone); err != nil {
				return err
			}
			d.SubscriptionID, d.ProcessID = nullString(sub), nullString(process)
			d.DueAt = d.DueAt.UTC()
			out = append(out, d)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: due dunning: %w", err)
	}
	return out, nil
}

// DunningProcess reads process id in tx.
func (tx *Tx) DunningProcess(ctx context.Context, id string) (DunningProcess, error) {
	d, err := scanDunning(tx.queryRow(ctx, `SELECT `+dunningColumns+` FROM dunning_processes WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
	if err != nil {
		return DunningProcess{}, fmt.Errorf("store: dunning process %s: %w", id, notFound(err))
	}
	return d, nil
}

// ProrationPolicy reads policy id in tx.
func (tx *Tx) ProrationPolicy(ctx context.Context, id string) (ProrationPolicy, error) {
	p, err := scanProration(tx.queryRow(ctx, `SELECT `+prorationColumns+` FROM proration_policies WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
	if err != nil {
		return ProrationPolicy{}, fmt.Errorf("store: proration policy %s: %w", id, notFound(err))
	}
	return p, nil
}

// SetNextDunning moves demand id's next dunning action to next (nil: no
// more dunning), checking that it was due at was (so a concurrent change
// is noticed: ErrConflict).
func (tx *Tx) SetNextDunning(ctx context.Context, id string, was time.Time, next *time.Time, reminders int) error {
	res, err := tx.exec(ctx, `UPDATE payment_demands SET next_dunning_at = $4, reminders_sent = $5
		WHERE tenant_id = $1 AND id = $2 AND next_dunning_at = $3`, tx.tenant, id, ts(was), optTS(next), reminders)
	if err != nil {
		return fmt.Errorf("store: dunning of demand %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("store: dunning of demand %s changed concurrently: %w", id, ErrConflict)
	}
	return nil
}

// Reminder is a reminder issued for an unpaid payment demand.
type Reminder struct {
	ID              string         `json:"id"`
	PaymentDemandID string         `json:"paymentDemandId"`
	InvoiceID       string         `json:"invoiceId"`
	SubscriberID    string         `json:"subscriberId"`
	Number          int            `json:"reminderNumber"`
	Fee             int64          `json:"-"`
	FeeAmount       catalog.Amount `json:"fee" description:"The reminder fee, billed on the next invoice."`
	FeeItemID       *string        `json:"feeAccountItemId"`
	IssuedAt        time.Time      `json:"issuedAt"`
}

// ReminderFilter narrows ListReminders; zero fields do not filter.
type ReminderFilter struct {
	InvoiceID    string
	SubscriberID string
}

// ListReminders returns one page of the tenant's reminders.
func (s *Store) ListReminders(ctx context.Context, f ReminderFilter, p Page) ([]Reminder, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilterOn("r", tenant)
	if f.InvoiceID != "" {
		q.add("r.invoice_id = ?", f.InvoiceID)
	}
	if f.SubscriberID != "" {
		q.add("r.subscriber_id = ?", f.SubscriberID)
	}
	tail := q.pageOn("r.id", p)
	out, err := queryAll(ctx, s.r, func(row scanner) (Reminder, error) {
		var (
			r    Reminder
			code string
			item sql.NullString
		)
		if err := row.Scan(&r.ID, &r.PaymentDemandID, &r.InvoiceID, &r.SubscriberID, &r.Number, &r.Fee, &item, &r.IssuedAt, &code); err != nil {
			return Reminder{}, err
		}
		cur, err := currencyOf(code)
		if err != nil {
			return Reminder{}, err
		}
		r.FeeAmount, r.FeeItemID, r.IssuedAt = catalog.NewAmount(r.Fee, cur), nullString(item), r.IssuedAt.UTC()
		return r, nil
	}, `SELECT r.id, r.payment_demand_id, r.invoice_id, r.subscriber_id, r.reminder_number, r.fee, r.fee_item_id, r.issued_at,
		d.currency FROM reminders r JOIN payment_demands d ON d.tenant_id = r.tenant_id AND d.id = r.payment_demand_id`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list reminders: %w", err)
	}
	out, next := trimPage(out, p, func(r Reminder) string { return r.ID })
	return out, next, nil
}

// ReminderIssue is one reminder to issue with IssueReminders: the
// reminder itself (its Fee in minor units; FeeItemID is set by
// IssueReminders), the fee's description on the subscriber account, and
// the demand's dunning schedule to move from Was to Next.
type ReminderIssue struct {
	Reminder       Reminder
	AccountID      string
	FeeDescription string
	Was            time.Time
	Next           *time.Time
}

// IssueReminders issues reminders in tx as sets, in the order given: each
// fee is booked as a charge on the subscriber account (VAT-free) with its
// ledger entry, the reminder recorded with its ReminderIssued event, and
// the demand's next dunning time and reminder count moved on — if the
// demand's dunning time is still Was, else the whole call is ErrConflict
// (as is a reminder number issued before). These are the writes of
// BookItem and SetNextDunning for each reminder, in a few statements for a
// batch (on SQLite the demands are updated one by one).
func (tx *Tx) IssueReminders(ctx context.Context, rs []ReminderIssue) error {
	if len(rs) == 0 {
		return nil
	}
	created := ts(time.Now())
	var items, entries [][]any
	reminders := make([][]any, 0, len(rs))
	events := make([]NewEvent, 0, len(rs))
	zero := catalog.PercentOf(0).String()
	for i := range rs {
		r := &rs[i].Reminder
		at := ts(r.IssuedAt)
		if r.Fee > 0 {
			id := NewID()
			r.FeeItemID = &id
			items = append(items, []any{id, tx.tenant, rs[i].AccountID, billing.ItemCharge, rs[i].FeeDescription, r.Fee, r.Fee,
				zero, at, created})
			entries = append(entries, []any{NewID(), tx.tenant, rs[i].AccountID, EntryCharge, r.Fee, id, at, created})
		}
		reminders = append(reminders, []any{r.ID, tx.tenant, r.PaymentDemandID, r.InvoiceID, r.SubscriberID, r.Number, r.Fee,
			r.FeeItemID, at, created})
		events = append(events, NewEvent{Type: EventReminderIssued, Subject: "/invoice/" + r.InvoiceID, At: r.IssuedAt,
			Data: map[string]any{"reminderId": r.ID, "paymentDemandId": r.PaymentDemandID, "invoiceId": r.InvoiceID,
				"subscriberId": r.SubscriberID, "reminderNumber": r.Number}})
	}
	if err := tx.insertRows(ctx, "account_items", `id, tenant_id, account_id, kind, description, amount, remaining,
		vat_rate, booked_at, created_at`, items, ``); err != nil {
		return fmt.Errorf("store: book reminder fees: %w", err)
	}
	if err := tx.insertRows(ctx, "account_entries", `id, tenant_id, account_id, kind, amount, item_id, booked_at,
		created_at`, entries, ``); err != nil {
		return fmt.Errorf("store: add reminder fee entries: %w", err)
	}
	if err := tx.insertRows(ctx, "reminders", `id, tenant_id, payment_demand_id, invoice_id, subscriber_id, reminder_number,
		fee, fee_item_id, issued_at, created_at`, reminders, ``); err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("store: one of %d reminders was issued before: %w", len(rs), ErrConflict)
		}
		return fmt.Errorf("store: add reminders: %w", err)
	}
	if err := tx.AddEvents(ctx, events); err != nil {
		return err
	}
	if tx.s.engine == SQLite {
		// One UPDATE per demand: on SQLite the joined UPDATE below took
		// ~100 ms per chunk of 128 demands (it searches the dunning index it
		// changes), and a prepared single-row UPDATE costs no round trip.
		for i := range rs {
			if err := tx.SetNextDunning(ctx, rs[i].Reminder.PaymentDemandID, rs[i].Was, rs[i].Next, rs[i].Reminder.Number); err != nil {
				return err
			}
		}
		return nil
	}
	updates := make([][]any, len(rs))
	for i, r := range rs {
		updates[i] = []any{r.Reminder.PaymentDemandID, ts(r.Was), optTS(r.Next), r.Reminder.Number}
	}
	n, err := tx.updateRows(ctx, `WITH v (id, was, next, reminders) AS (VALUES `,
		`(?::uuid, ?::timestamptz, ?::timestamptz, ?::integer)`,
		`) UPDATE payment_demands AS d SET next_dunning_at = v.next, reminders_sent = v.reminders
		FROM v WHERE d.tenant_id = ? AND d.id = v.id AND d.next_dunning_at = v.was`, updates)
	if err != nil {
		return fmt.Errorf("store: dunning of %d demands: %w", len(rs), err)
	}
	if n != int64(len(rs)) {
		return fmt.Errorf("store: dunning of %d of %d demands changed concurrently: %w", int64(len(rs))-n, len(rs), ErrConflict)
	}
	return nil
}
