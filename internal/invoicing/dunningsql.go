package invoicing

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Dunning's SQL: the demands' dunning schedule (next_dunning_at and
// reminders_sent on payment_demands, which issuing sets) and the reminders
// table, on the store's query kit. Issuing (dunningResolver) and Dun are
// its only writers; the engine asks NextDunningAt through its hook.

// EventReminderIssued is recorded when a reminder is issued.
const EventReminderIssued = "ReminderIssued"

// dunningDays is a dunning process's reminder schedule, as issuing needs
// it to choose a demand's process and first reminder.
type dunningDays struct {
	ID           string
	ReminderDays []int
	IsDefault    bool
}

// dunningSchedules reads the reminder days of the tenant's dunning
// processes.
func dunningSchedules(ctx context.Context, tx *store.Tx) ([]dunningDays, error) {
	out, err := store.QueryAll(ctx, tx, func(row store.Scanner) (dunningDays, error) {
		var (
			d   dunningDays
			raw string
		)
		if err := row.Scan(&d.ID, &raw, &d.IsDefault); err != nil {
			return dunningDays{}, err
		}
		if err := json.Unmarshal([]byte(raw), &d.ReminderDays); err != nil {
			return dunningDays{}, fmt.Errorf("dunning process %s: %w", d.ID, err)
		}
		return d, nil
	}, `SELECT id, reminder_days, is_default FROM dunning_processes WHERE tenant_id = $1`, tx.TenantID())
	if err != nil {
		return nil, fmt.Errorf("invoicing: dunning processes: %w", err)
	}
	return out, nil
}

// planDunningProcesses reads the dunning process of every billing plan
// that names one, by plan.
func planDunningProcesses(ctx context.Context, tx *store.Tx) (map[string]string, error) {
	type planProcess struct{ plan, process string }
	pairs, err := store.QueryAll(ctx, tx, func(row store.Scanner) (planProcess, error) {
		var p planProcess
		err := row.Scan(&p.plan, &p.process)
		return p, err
	}, `SELECT id, dunning_process_id FROM billing_plans WHERE tenant_id = $1 AND dunning_process_id IS NOT NULL`, tx.TenantID())
	if err != nil {
		return nil, fmt.Errorf("invoicing: dunning processes of plans: %w", err)
	}
	byPlan := make(map[string]string, len(pairs))
	for _, p := range pairs {
		byPlan[p.plan] = p.process
	}
	return byPlan, nil
}

// dunningDemand is a demand whose next dunning action is due.
type dunningDemand struct {
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
// or nil: the engine's NextDun hook (wired in internal/server), which
// places dunning among the engine's due work.
func NextDunningAt(ctx context.Context, tx *store.Tx) (*time.Time, error) {
	var at store.AnyTime
	if err := tx.QueryRow(ctx, `SELECT MIN(next_dunning_at) FROM payment_demands WHERE tenant_id = $1 AND next_dunning_at IS NOT NULL`,
		tx.TenantID()).Scan(&at); err != nil {
		return nil, fmt.Errorf("invoicing: next dunning action: %w", err)
	}
	return at.T, nil
}

// dueDunning returns up to limit demands whose next dunning action is due
// exactly at at, in id order.
func dueDunning(ctx context.Context, tx *store.Tx, at time.Time, limit int) ([]dunningDemand, error) {
	out, err := store.QueryAll(ctx, tx, func(row store.Scanner) (dunningDemand, error) {
		var (
			d            dunningDemand
			sub, process sql.NullString
		)
		if err := row.Scan(&d.ID, &d.InvoiceID, &d.InvoiceNumber, &d.AccountID, &d.SubscriberID, &sub, &d.Currency,
			&d.Status, &d.DueAt, &d.RemindersSent, &process, &d.TimeZone); err != nil {
			return dunningDemand{}, err
		}
		d.SubscriptionID, d.ProcessID = nullString(sub), nullString(process)
		d.DueAt = d.DueAt.UTC()
		return d, nil
	}, `SELECT d.id, d.invoice_id, i.invoice_number, d.account_id, d.subscriber_id, d.subscription_id,
		d.currency, d.status, d.due_at, d.reminders_sent, d.dunning_process_id, o.time_zone
		FROM payment_demands d
		JOIN invoices i ON i.tenant_id = d.tenant_id AND i.id = d.invoice_id
		JOIN organizations o ON o.tenant_id = d.tenant_id AND o.id = d.organization_id
		WHERE d.tenant_id = $1 AND d.next_dunning_at = $2 ORDER BY d.id LIMIT $3`,
		tx.TenantID(), store.TimeParam(at), limit)
	if err != nil {
		return nil, fmt.Errorf("invoicing: due dunning: %w", err)
	}
	return out, nil
}

// setNextDunning moves demand id's next dunning action to next (nil: no
// more dunning), checking that it was due at was (so a concurrent change
// is noticed: store.ErrConflict).
func setNextDunning(ctx context.Context, tx *store.Tx, id string, was time.Time, next *time.Time, reminders int) error {
	res, err := tx.Exec(ctx, `UPDATE payment_demands SET next_dunning_at = $4, reminders_sent = $5
		WHERE tenant_id = $1 AND id = $2 AND next_dunning_at = $3`, tx.TenantID(), id, store.TimeParam(was), optTime(next), reminders)
	if err != nil {
		return fmt.Errorf("invoicing: dunning of demand %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("invoicing: dunning of demand %s changed concurrently: %w", id, store.ErrConflict)
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

// ListReminders returns one page of the tenant's reminders and the cursor
// of the next page ("" on the last).
func ListReminders(ctx context.Context, st *store.Store, f ReminderFilter, p store.Page) ([]Reminder, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := store.TenantFilter("r", tenant)
	if f.InvoiceID != "" {
		q.Add("r.invoice_id = ?", f.InvoiceID)
	}
	if f.SubscriberID != "" {
		q.Add("r.subscriber_id = ?", f.SubscriberID)
	}
	out, next, err := store.ListPage(ctx, st.Reader(), func(row store.Scanner) (Reminder, error) {
		var (
			r    Reminder
			code string
			item sql.NullString
		)
		if err := row.Scan(&r.ID, &r.PaymentDemandID, &r.InvoiceID, &r.SubscriberID, &r.Number, &r.Fee, &item, &r.IssuedAt, &code); err != nil {
			return Reminder{}, err
		}
		cur, err := currency(code)
		if err != nil {
			return Reminder{}, err
		}
		r.FeeAmount, r.FeeItemID, r.IssuedAt = catalog.NewAmount(r.Fee, cur), nullString(item), r.IssuedAt.UTC()
		return r, nil
	}, `SELECT r.id, r.payment_demand_id, r.invoice_id, r.subscriber_id, r.reminder_number, r.fee, r.fee_item_id, r.issued_at,
		d.currency FROM reminders r JOIN payment_demands d ON d.tenant_id = r.tenant_id AND d.id = r.payment_demand_id`, q, "r.id", p,
		func(r Reminder) string { return r.ID })
	if err != nil {
		return nil, "", fmt.Errorf("invoicing: list reminders: %w", err)
	}
	return out, next, nil
}

// insertReminders inserts reminders (Fee in minor units); a reminder
// number of a demand issued before is store.ErrConflict.
func insertReminders(ctx context.Context, tx *store.Tx, rs []Reminder) error {
	created := store.TimeParam(time.Now())
	rows := make([][]any, len(rs))
	for i := range rs {
		r := &rs[i]
		rows[i] = []any{r.ID, tx.TenantID(), r.PaymentDemandID, r.InvoiceID, r.SubscriberID, r.Number, r.Fee, r.FeeItemID,
			store.TimeParam(r.IssuedAt), created}
	}
	if err := tx.InsertRows(ctx, "reminders", `id, tenant_id, payment_demand_id, invoice_id, subscriber_id, reminder_number,
		fee, fee_item_id, issued_at, created_at`, rows, ``); err != nil {
		if store.IsUniqueViolation(err) {
			return fmt.Errorf("invoicing: one of %d reminders was issued before: %w", len(rs), store.ErrConflict)
		}
		return fmt.Errorf("invoicing: add reminders: %w", err)
	}
	return nil
}

// dunningMove moves a demand's next dunning action from Was to Next (nil:
// no more dunning) and records how many reminders it has had.
type dunningMove struct {
	DemandID  string
	Was       time.Time
	Next      *time.Time
	Reminders int
}

// moveDunning applies moves, each only if the demand's dunning time is
// still Was, else the whole call is store.ErrConflict. On SQLite the
// demands are updated one by one.
func moveDunning(ctx context.Context, tx *store.Tx, moves []dunningMove) error {
	if len(moves) == 0 {
		return nil
	}
	if tx.Engine() == store.SQLite {
		// One UPDATE per demand: on SQLite the joined UPDATE below took
		// ~100 ms per chunk of 128 demands (it searches the dunning index it
		// changes), and a prepared single-row UPDATE costs no round trip.
		for _, m := range moves {
			if err := setNextDunning(ctx, tx, m.DemandID, m.Was, m.Next, m.Reminders); err != nil {
				return err
			}
		}
		return nil
	}
	updates := make([][]any, len(moves))
	for i, m := range moves {
		updates[i] = []any{m.DemandID, store.TimeParam(m.Was), optTime(m.Next), m.Reminders}
	}
	n, err := tx.UpdateRows(ctx, `WITH v (id, was, next, reminders) AS (VALUES `,
		`(?::uuid, ?::timestamptz, ?::timestamptz, ?::integer)`,
		`) UPDATE payment_demands AS d SET next_dunning_at = v.next, reminders_sent = v.reminders
		FROM v WHERE d.tenant_id = ? AND d.id = v.id AND d.next_dunning_at = v.was`, updates)
	if err != nil {
		return fmt.Errorf("invoicing: dunning of %d demands: %w", len(moves), err)
	}
	if n != int64(len(moves)) {
		return fmt.Errorf("invoicing: dunning of %d of %d demands changed concurrently: %w", int64(len(moves))-n, len(moves), store.ErrConflict)
	}
	return nil
}

// optTime is the parameter of a timestamp column that may be NULL.
func optTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return store.TimeParam(*t)
}
