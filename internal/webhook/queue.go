package webhook

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// The dispatcher's side of the webhook wing's SQL: the relay's fan-out of
// events into deliveries, claims and outcomes. These work across tenants:
// the dispatcher serves every tenant, and each row carries its tenant.

// ConsumerName is the name the store's ConsumerLags gives webhook
// delivery, whose queue is its delivery log (webhook_deliveries: a
// pending message may carry several events).
const ConsumerName = "webhook"

// defaultBatch is the most events one EventGrid message carries by
// default (Options.Batch), and when another process's relay (the outbox
// runner's) fans out.
const defaultBatch = 100

// Webhook delivery is a relay target of the store: whichever process
// relays events (the outbox runner, or a dispatcher through
// DispatchEvents), their deliveries are written in the transaction that
// takes them from the outbox.
func init() {
	store.RegisterRelayTarget(fanOutTarget(time.Time{}, 0, defaultBatch, nil))
}

// fanOutTarget is the relay target that claims up to claim of the new
// deliveries (first attempt, leased until leaseUntil) into *jobs, and
// leaves the rest due now for any process. With claim 0 (the registered
// target) it asks the store to wake this process's dispatcher when it made
// any.
func fanOutTarget(leaseUntil time.Time, claim, batch int, jobs *[]DeliveryJob) store.RelayTarget {
	return store.RelayTarget{Name: ConsumerName, Lag: lag,
		FanOut: func(ctx context.Context, tx *store.Tx, b store.RelayBatch) (bool, error) {
			made, err := fanOut(ctx, tx, b, leaseUntil, claim, batch)
			if err != nil {
				return false, err
			}
			if jobs != nil {
				*jobs = made.jobs
			}
			return made.unclaimed && claim == 0, nil
		}}
}

// DispatchEvents relays up to limit undispatched events (any tenant) from
// the outbox (store.RelayEvents: a job for every outbox consumer that
// takes their kind, and deliveries for every Validated webhook
// registration of their tenant that subscribes to their kind). A
// registration in the EventGrid format gets the events in deliveries of up
// to batch events each, one message each; CloudEvents registrations get
// one delivery per event. Up to claim of the new deliveries are claimed
// for this process at once (first attempt, leased until leaseUntil) and
// returned as jobs; the rest are due now for any process. It reports how
// many events it took.
func DispatchEvents(ctx context.Context, st *store.Store, now, leaseUntil time.Time, limit, claim, batch int) (int, []DeliveryJob, error) {
	var jobs []DeliveryJob
	n, err := st.RelayEvents(ctx, now, limit, fanOutTarget(leaseUntil, claim, batch, &jobs))
	if err != nil {
		return 0, nil, fmt.Errorf("webhook: dispatch events: %w", err)
	}
	return n, jobs, nil
}

type fannedOut struct {
	jobs      []DeliveryJob
	unclaimed bool
}

// fanOut writes the deliveries of the batch's events (see DispatchEvents).
func fanOut(ctx context.Context, tx *store.Tx, b store.RelayBatch, leaseUntil time.Time, claim, batch int) (fannedOut, error) {
	var out fannedOut
	hooks, err := validatedWebhooks(ctx, tx, b.Tenants)
	if err != nil {
		return out, err
	}
	// The events of each registration, in id order.
	type target struct {
		h      hookTarget
		tenant string
		events []store.Event
	}
	var targets []*target
	byHook := map[string]*target{}
	for i, e := range b.Events {
		for _, h := range hooks[b.Tenants[i]] {
			if !h.kinds[e.EventType] {
				continue
			}
			tg := byHook[h.id]
			if tg == nil {
				tg = &target{h: h, tenant: b.Tenants[i]}
				byHook[h.id] = tg
				targets = append(targets, tg)
			}
			tg.events = append(tg.events, e)
		}
	}
	var rows [][]any
	now := store.TimeParam(b.Now)
	for _, tg := range targets {
		size := max(1, batch)
		if tg.h.format != FormatEventGrid {
			size = 1
		}
		for evs := range slices.Chunk(tg.events, size) {
			eventIDs := make([]string, len(evs))
			for i, e := range evs {
				eventIDs[i] = e.ID
			}
			list, err := json.Marshal(eventIDs)
			if err != nil {
				return out, err
			}
			id := store.NewID()
			if len(out.jobs) < claim {
				rows = append(rows, []any{id, tg.tenant, tg.h.id, string(list), DeliveryPending, 1, store.TimeParam(leaseUntil), now})
				out.jobs = append(out.jobs, DeliveryJob{ID: id, TenantID: tg.tenant, WebhookID: tg.h.id, Attempt: 1,
					URL: tg.h.url, Format: tg.h.format, Secret: tg.h.secret, Events: evs})
			} else {
				rows = append(rows, []any{id, tg.tenant, tg.h.id, string(list), DeliveryPending, 0, now, now})
				out.unclaimed = true
			}
		}
	}
	if len(rows) > 0 {
		if err := tx.InsertRows(ctx, "webhook_deliveries", `id, tenant_id, webhook_id, event_ids, status,
			attempts, next_attempt_at, created_at`, rows, ``); err != nil {
			return out, err
		}
	}
	return out, nil
}

// lag is webhook delivery's backlog for the store's ConsumerLags: its
// pending messages. Failed deliveries are not counted: no index holds
// them, and kadens_webhook_attempts_total{outcome="failed"} counts them.
func lag(ctx context.Context, q store.ReadTx) (store.ConsumerLag, error) {
	l := store.ConsumerLag{Consumer: ConsumerName, Dead: -1}
	var oldest store.AnyTime
	if err := q.QueryRow(ctx, `SELECT COUNT(*), MIN(created_at) FROM webhook_deliveries WHERE status = 'Pending'`).
		Scan(&l.Pending, &oldest); err != nil {
		return l, err
	}
	if oldest.T != nil {
		l.Oldest = *oldest.T
	}
	return l, nil
}

// each runs a fixed statement in tx and hands every row to scan.
func each(ctx context.Context, tx *store.Tx, query string, args []any, scan func(*sql.Rows) error) error {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

type hookTarget struct {
	id, url, format, secret string
	kinds                   map[string]bool
}

// validatedWebhooks returns the Validated registrations of the tenants, by
// tenant.
func validatedWebhooks(ctx context.Context, tx *store.Tx, tenants []string) (map[string][]hookTarget, error) {
	seen := map[string]bool{}
	var distinct []string
	for _, t := range tenants {
		if !seen[t] {
			seen[t] = true
			distinct = append(distinct, t)
		}
	}
	// The registrations are locked against deletion until the fan-out
	// commits (PostgreSQL; SQLite's write transaction excludes every other
	// writer): read unlocked, one deleted meanwhile failed the whole
	// fan-out on its deliveries' foreign key, again for as long as
	// deletions kept racing it. A deletion waits for the fan-out and
	// takes the deliveries it made along; one that committed first is
	// not read.
	lock := ""
	if tx.Engine() == store.Postgres {
		lock = " FOR KEY SHARE"
	}
	out := map[string][]hookTarget{}
	for len(distinct) > 0 {
		n := min(len(distinct), store.MaxChunk)
		list, args := store.InList(distinct[:n], 2)
		err := each(ctx, tx, `SELECT tenant_id, id, url, format, secret, event_types FROM webhooks
			WHERE status = $1 AND tenant_id IN `+list+lock, append([]any{WebhookValidated}, args...), func(rows *sql.Rows) error {
			var (
				ten, kinds string
				h          hookTarget
				list       []string
			)
			if err := rows.Scan(&ten, &h.id, &h.url, &h.format, &h.secret, &kinds); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(kinds), &list); err != nil {
				return fmt.Errorf("event types of webhook %s: %w", h.id, err)
			}
			h.kinds = map[string]bool{}
			for _, k := range list {
				h.kinds[k] = true
			}
			out[ten] = append(out[ten], h)
			return nil
		})
		if err != nil {
			return nil, err
		}
		distinct = distinct[n:]
	}
	return out, nil
}

// ClaimDeliveries claims up to limit due Pending deliveries of Validated
// registrations (retries, redeliveries, and first attempts no process
// claimed at fan-out) for this process until leaseUntil, counting the
// attempt. On PostgreSQL concurrent claimers skip each other's rows, so
// each attempt is made by one process; a process that dies holding a claim
// only delays the delivery until the lease ends.
func ClaimDeliveries(ctx context.Context, st *store.Store, now, leaseUntil time.Time, limit int) ([]DeliveryJob, error) {
	var jobs []DeliveryJob
	err := st.InQueueTx(ctx, func(tx *store.Tx) error {
		jobs = jobs[:0]
		var ids []string
		// 'Pending' is a literal so that the planners can use the partial
		// index of due deliveries.
		err := each(ctx, tx, `UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = $1
			WHERE id IN (SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
				WHERE d.status = 'Pending' AND d.next_attempt_at <= $2 AND w.status = 'Validated'
				ORDER BY d.next_attempt_at LIMIT $3`+tx.SkipLocked("d")+`)
			RETURNING id`, []any{store.TimeParam(leaseUntil), store.TimeParam(now), limit}, func(rows *sql.Rows) error {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
			return nil
		})
		if err != nil || len(ids) == 0 {
			return err
		}
		list, args := store.InList(ids, 1)
		var eventIDs [][]string
		err = each(ctx, tx, `SELECT d.id, d.tenant_id, d.webhook_id, d.attempts, d.retry_base, w.url, w.format, w.secret, d.event_ids
			FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id IN `+list, args, func(rows *sql.Rows) error {
			var (
				j      DeliveryJob
				events string
				list   []string
			)
			if err := rows.Scan(&j.ID, &j.TenantID, &j.WebhookID, &j.Attempt, &j.RetryBase, &j.URL, &j.Format, &j.Secret, &events); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(events), &list); err != nil {
				return fmt.Errorf("events of delivery %s: %w", j.ID, err)
			}
			jobs = append(jobs, j)
			eventIDs = append(eventIDs, list)
			return nil
		})
		if err != nil {
			return err
		}
		var all []string
		for _, l := range eventIDs {
			all = append(all, l...)
		}
		byID, err := tx.EventsByID(ctx, all)
		if err != nil {
			return err
		}
		for i := range jobs {
			for _, id := range eventIDs[i] {
				if e, ok := byID[id]; ok {
					jobs[i].Events = append(jobs[i].Events, e)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("webhook: claim deliveries: %w", err)
	}
	return jobs, nil
}

// CompleteDeliveries records the outcomes of attempts: every attempt in the
// log; a success makes its delivery Delivered; a failure schedules the next
// attempt or makes it Failed, unless the delivery moved on meanwhile (its
// claim lapsed and a later attempt exists, or it was delivered).
func CompleteDeliveries(ctx context.Context, st *store.Store, results []DeliveryResult) error {
	if len(results) == 0 {
		return nil
	}
	err := st.InQueueTx(ctx, func(tx *store.Tx) error {
		// A delivery whose registration was deleted while its attempt was
		// in flight went with it: its outcome has nothing to be recorded
		// on, and recording it would fail the whole batch on the attempts'
		// foreign key (the other deliveries' outcomes lost, each sent again
		// when its lease lapsed). Only outcomes of deliveries that exist
		// are recorded; the rows are locked (PostgreSQL) so that a delete
		// cannot take them between this check and the writes.
		live, err := existingDeliveries(ctx, tx, results)
		if err != nil {
			return err
		}
		attempts := make([][]any, 0, len(results))
		var delivered []string
		var deliveredAt time.Time
		for _, r := range results {
			if !live[r.ID] {
				continue
			}
			var code any
			if r.StatusCode != 0 {
				code = r.StatusCode
			}
			attempts = append(attempts, []any{r.ID, r.Attempt, store.TimeParam(r.At), code, r.Latency.Milliseconds(), r.Error})
			if r.Delivered {
				delivered = append(delivered, r.ID)
				deliveredAt = later(deliveredAt, r.At.Add(r.Latency))
				continue
			}
			status, next, completed := DeliveryPending, any(nil), any(nil)
			if r.NextAt != nil {
				next = store.TimeParam(*r.NextAt)
			} else {
				status, completed = DeliveryFailed, store.TimeParam(r.At.Add(r.Latency))
			}
			if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = $3, next_attempt_at = $4, completed_at = $5
				WHERE id = $1 AND attempts = $2 AND status = 'Pending'`,
				r.ID, r.Attempt, status, next, completed); err != nil {
				return err
			}
		}
		if len(attempts) == 0 {
			return nil
		}
		if err := tx.InsertRows(ctx, "webhook_attempts", `delivery_id, number, attempted_at, status_code,
			latency_ms, error`, attempts, `ON CONFLICT DO NOTHING`); err != nil {
			return err
		}
		for len(delivered) > 0 {
			n := min(len(delivered), store.MaxChunk)
			list, args := store.InList(delivered[:n], 3)
			if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = $1, next_attempt_at = NULL, completed_at = $2
				WHERE id IN `+list, append([]any{DeliveryDelivered, store.TimeParam(deliveredAt)}, args...)...); err != nil {
				return err
			}
			delivered = delivered[n:]
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("webhook: complete deliveries: %w", err)
	}
	return nil
}

// existingDeliveries returns which of the results' deliveries still
// exist, locking them against deletion until tx ends on PostgreSQL (on
// SQLite the write transaction excludes every other writer).
func existingDeliveries(ctx context.Context, tx *store.Tx, results []DeliveryResult) (map[string]bool, error) {
	seen := map[string]bool{}
	var ids []string
	for _, r := range results {
		if !seen[r.ID] {
			seen[r.ID] = true
			ids = append(ids, r.ID)
		}
	}
	lock := ""
	if tx.Engine() == store.Postgres {
		lock = " FOR KEY SHARE"
	}
	live := map[string]bool{}
	for len(ids) > 0 {
		n := min(len(ids), store.MaxChunk)
		list, args := store.InList(ids[:n], 1)
		err := each(ctx, tx, `SELECT id FROM webhook_deliveries WHERE id IN `+list+lock, args, func(rows *sql.Rows) error {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			live[id] = true
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("deliveries still there: %w", err)
		}
		ids = ids[n:]
	}
	return live, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// HasDispatchWork reports, from the read pool, whether events wait to be
// fanned out and whether deliveries are due: an idle dispatcher checks this
// instead of opening a write transaction (on SQLite, the one writer).
func HasDispatchWork(ctx context.Context, st *store.Store, now time.Time) (events, due bool, err error) {
	if events, err = st.HasUnrelayedEvents(ctx); err != nil {
		return false, false, err
	}
	var one int
	// 'Pending' is a literal so that the planners can use the partial index.
	err = st.Reader().QueryRow(ctx, `SELECT 1 FROM webhook_deliveries WHERE status = 'Pending' AND next_attempt_at <= $1 LIMIT 1`,
		store.TimeParam(now)).Scan(&one)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, false, fmt.Errorf("webhook: look for due deliveries: %w", err)
	}
	return events, err == nil, nil
}
