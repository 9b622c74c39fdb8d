package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

// EventReminderIssued is recorded when a reminder is issued.
const EventReminderIssued = "ReminderIssued"

// DunningDays is a dunning process's reminder schedule, as issuing needs
// it to choose a demand's process and first reminder.
type DunningDays struct {
	ID           string
	ReminderDays []int
	IsDefault    bool
}

// DunningSchedules reads the reminder days of the tenant's dunning
// processes.
func (tx *Tx) DunningSchedules(ctx context.Context) ([]DunningDays, error) {
	var out []DunningDays
	err := tx.queryEach(ctx, `SELECT id, reminder_days, is_default FROM dunning_processes WHERE tenant_id = $1`, []any{tx.tenant},
		func(rows *sql.Rows) error {
			var (
				d   DunningDays
				raw string
			)
			if err := rows.Scan(&d.ID, &raw, &d.IsDefault); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(raw), &d.ReminderDays); err != nil {
				return fmt.Errorf("dunning process %s: %w", d.ID, err)
			}
			out = append(out, d)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: dunning processes: %w", err)
	}
	return out, nil
}

// PlanDunningProcesses reads the dunning process of every billing plan
// that names one, by plan.
func (tx *Tx) PlanDunningProcesses(ctx context.Context) (map[string]string, error) {
	byPlan := map[string]string{}
	err := tx.queryEach(ctx, `SELECT id, dunning_process_id FROM billing_plans WHERE tenant_id = $1 AND dunning_process_id IS NOT NULL`,
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
	return byPlan, nil
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

// InsertReminders inserts reminders (Fee in minor units); a reminder
// number of a demand issued before is ErrConflict.
func (tx *Tx) InsertReminders(ctx context.Context, rs []Reminder) error {
	created := ts(time.Now())
	rows := make([][]any, len(rs))
	for i := range rs {
		r := &rs[i]
		rows[i] = []any{r.ID, tx.tenant, r.PaymentDemandID, r.InvoiceID, r.SubscriberID, r.Number, r.Fee, r.FeeItemID,
			ts(r.IssuedAt), created}
	}
	if err := tx.insertRows(ctx, "reminders", `id, tenant_id, payment_demand_id, invoice_id, subscriber_id, reminder_number,
		fee, fee_item_id, issued_at, created_at`, rows, ``); err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("store: one of %d reminders was issued before: %w", len(rs), ErrConflict)
		}
		return fmt.Errorf("store: add reminders: %w", err)
	}
	return nil
}

// DunningMove moves a demand's next dunning action from Was to Next (nil:
// no more dunning) and records how many reminders it has had.
type DunningMove struct {
	DemandID  string
	Was       time.Time
	Next      *time.Time
	Reminders int
}

// MoveDunning applies moves, each only if the demand's dunning time is
// still Was, else the whole call is ErrConflict. On SQLite the demands are
// updated one by one.
func (tx *Tx) MoveDunning(ctx context.Context, moves []DunningMove) error {
	if len(moves) == 0 {
		return nil
	}
	if tx.s.engine == SQLite {
		// One UPDATE per demand: on SQLite the joined UPDATE below took
		// ~100 ms per chunk of 128 demands (it searches the dunning index it
		// changes), and a prepared single-row UPDATE costs no round trip.
		for _, m := range moves {
			if err := tx.SetNextDunning(ctx, m.DemandID, m.Was, m.Next, m.Reminders); err != nil {
				return err
			}
		}
		return nil
	}
	updates := make([][]any, len(moves))
	for i, m := range moves {
		updates[i] = []any{m.DemandID, ts(m.Was), optTS(m.Next), m.Reminders}
	}
	n, err := tx.updateRows(ctx, `WITH v (id, was, next, reminders) AS (VALUES `,
		`(?::uuid, ?::timestamptz, ?::timestamptz, ?::integer)`,
		`) UPDATE payment_demands AS d SET next_dunning_at = v.next, reminders_sent = v.reminders
		FROM v WHERE d.tenant_id = ? AND d.id = v.id AND d.next_dunning_at = v.was`, updates)
	if err != nil {
		return fmt.Errorf("store: dunning of %d demands: %w", len(moves), err)
	}
	if n != int64(len(moves)) {
		return fmt.Errorf("store: dunning of %d of %d demands changed concurrently: %w", int64(len(moves))-n, len(moves), ErrConflict)
	}
	return nil
}
