package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// The outbox's consumers besides webhook delivery (bank collection,
// e-invoice delivery, an audit log). The relay (RelayEvents) writes a
// job per event and matching consumer in the transaction that clears the
// event's outbox mark; each consumer then claims its own jobs, so one that
// is slow or failing holds back no other. Claiming, leases, retries and
// dead letters are here and in internal/outbox, once for every consumer.
// These methods work across tenants; each job carries its event's tenant.

// Outbox job statuses. A job that succeeded is deleted.
const (
	OutboxPending = "Pending"
	OutboxDead    = "Dead"
)

// OutboxConsumer is a registered consumer and the event kinds it takes.
type OutboxConsumer struct {
	Name         string
	EventTypes   []string
	RegisteredAt time.Time
}

// RegisterOutboxConsumer records a consumer and its event kinds (replacing
// the kinds of an earlier registration). From then on the relay writes a
// job for it for every event of those kinds, whichever process relays.
func (s *Store) RegisterOutboxConsumer(ctx context.Context, name string, kinds []string, now time.Time) error {
	list, err := json.Marshal(kinds)
	if err != nil {
		return fmt.Errorf("store: encode kinds of consumer %s: %w", name, err)
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO outbox_consumers (name, event_types, registered_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET event_types = excluded.event_types`, name, string(list), ts(now)); err != nil {
		return fmt.Errorf("store: register consumer %s: %w", name, err)
	}
	return nil
}

// RetireOutboxConsumer removes a consumer and its jobs: the relay stops
// writing jobs for it. For a consumer taken out of the code.
func (s *Store) RetireOutboxConsumer(ctx context.Context, name string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM outbox_consumers WHERE name = $1`, name)
	if err != nil {
		return fmt.Errorf("store: retire consumer %s: %w", name, err)
	}
	return oneRow(res)
}

// OutboxConsumers lists the registered consumers by name.
func (s *Store) OutboxConsumers(ctx context.Context) ([]OutboxConsumer, error) {
	out, err := queryAll(ctx, s.r, func(row scanner) (OutboxConsumer, error) {
		var (
			c     OutboxConsumer
			kinds string
		)
		if err := row.Scan(&c.Name, &kinds, &c.RegisteredAt); err != nil {
			return c, err
		}
		c.RegisteredAt = c.RegisteredAt.UTC()
		return c, json.Unmarshal([]byte(kinds), &c.EventTypes)
	}, `SELECT name, event_types, registered_at FROM outbox_consumers ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: outbox consumers: %w", err)
	}
	return out, nil
}

// relayToConsumers writes a Pending job, due at now, for every event and
// every registered consumer that takes its kind; tenant[i] is events[i]'s
// tenant. It reports how many it wrote.
func relayToConsumers(ctx context.Context, tx *Tx, events []Event, tenant []string, now time.Time) (int, error) {
	type consumer struct {
		name  string
		kinds []string
	}
	var consumers []consumer
	err := tx.queryEach(ctx, `SELECT name, event_types FROM outbox_consumers`, nil, func(rows *sql.Rows) error {
		var c consumer
		var kinds string
		if err := rows.Scan(&c.name, &kinds); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(kinds), &c.kinds); err != nil {
			return fmt.Errorf("event types of consumer %s: %w", c.name, err)
		}
		consumers = append(consumers, c)
		return nil
	})
	if err != nil || len(consumers) == 0 {
		return 0, err
	}
	var rows [][]any
	at := ts(now)
	for i, e := range events {
		for _, c := range consumers {
			if slices.Contains(c.kinds, e.EventType) {
				rows = append(rows, []any{c.name, e.ID, tenant[i], OutboxPending, at, at})
			}
		}
	}
	// An event is relayed once (its mark is cleared in this transaction),
	// so there is no conflict to expect and PostgreSQL may COPY.
	if err := tx.insertRows(ctx, "outbox_jobs", `consumer, event_id, tenant_id, status, next_attempt_at, created_at`, rows, ``); err != nil {
		return 0, err
	}
	return len(rows), nil
}

// OutboxJob is a claimed attempt of one event for one consumer.
type OutboxJob struct {
	Consumer string
	TenantID string
	// Attempt is the number of this attempt (1 for the first), RetryBase
	// the attempts made before the last manual retry.
	Attempt, RetryBase int
	Event              Event
}

// OutboxResult is the outcome of an OutboxJob.
type OutboxResult struct {
	Consumer string
	EventID  string
	Attempt  int
	// Done: the handler succeeded and the job is deleted. Otherwise Error
	// says why it failed and NextAt when to try again; a nil NextAt makes
	// the job Dead.
	Done   bool
	Error  string
	NextAt *time.Time
	// At is when the attempt ended (a Dead job keeps it).
	At time.Time
}

// ClaimOutboxJobs claims up to limit due Pending jobs of consumer for this
// process until leaseUntil, counting the attempt, oldest due first. On
// PostgreSQL concurrent claimers skip each other's rows, so each attempt is
// one process's; a process that dies holding a claim only delays the job
// until the lease ends.
func (s *Store) ClaimOutboxJobs(ctx context.Context, consumer string, now, leaseUntil time.Time, limit int) ([]OutboxJob, error) {
	var jobs []OutboxJob
	err := s.inTx(ctx, func(t *sql.Tx) error {
		tx := &Tx{tx: t, s: s}
		jobs = jobs[:0]
		// 'Pending' is a literal so that the planners can use the partial
		// index of due jobs.
		err := tx.queryEach(ctx, `UPDATE outbox_jobs SET attempts = attempts + 1, next_attempt_at = $1
			WHERE consumer = $2 AND event_id IN (SELECT event_id FROM outbox_jobs
				WHERE consumer = $2 AND status = 'Pending' AND next_attempt_at <= $3
				ORDER BY next_attempt_at, event_id LIMIT $4`+s.forUpdate("")+`)
			RETURNING event_id, tenant_id, attempts, retry_base`, []any{ts(leaseUntil), consumer, ts(now), limit},
			func(rows *sql.Rows) error {
				j := OutboxJob{Consumer: consumer}
				if err := rows.Scan(&j.Event.ID, &j.TenantID, &j.Attempt, &j.RetryBase); err != nil {
					return err
				}
				jobs = append(jobs, j)
				return nil
			})
		if err != nil || len(jobs) == 0 {
			return err
		}
		ids := make([]string, len(jobs))
		for i, j := range jobs {
			ids[i] = j.Event.ID
		}
		byID, err := tx.eventsByID(ctx, ids)
		if err != nil {
			return err
		}
		for i := range jobs {
			jobs[i].Event = byID[jobs[i].Event.ID]
		}
		// The UPDATE returns rows in no particular order; hand them out in
		// event order, which is commit order within a tenant's transaction.
		slices.SortFunc(jobs, func(a, b OutboxJob) int { return cmpString(a.Event.ID, b.Event.ID) })
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim jobs of consumer %s: %w", consumer, err)
	}
	return jobs, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// eventsByID reads events by id, in chunks.
func (tx *Tx) eventsByID(ctx context.Context, ids []string) (map[string]Event, error) {
	byID := make(map[string]Event, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), maxChunk)
		list, args := inList(ids[:n], 1)
		err := tx.queryEach(ctx, `SELECT id, event_type, subject, data, event_time, created_at FROM events WHERE id IN `+list, args,
			func(rows *sql.Rows) error {
				var (
					e    Event
					data string
				)
				if err := rows.Scan(&e.ID, &e.EventType, &e.Subject, &data, &e.EventTime, &e.CreatedAt); err != nil {
					return err
				}
				e.Data = json.RawMessage(data)
				e.EventTime, e.CreatedAt = e.EventTime.UTC(), e.CreatedAt.UTC()
				byID[e.ID] = e
				return nil
			})
		if err != nil {
			return nil, err
		}
		ids = ids[n:]
	}
	return byID, nil
}

// CompleteOutboxJobs records outcomes: a success deletes its job; a
// failure schedules the next attempt or makes the job Dead, unless the job
// moved on meanwhile (its claim lapsed and a later attempt exists).
func (s *Store) CompleteOutboxJobs(ctx context.Context, results []OutboxResult) error {
	if len(results) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(t *sql.Tx) error {
		tx := &Tx{tx: t, s: s}
		for _, r := range results {
			if r.Done {
				if _, err := tx.exec(ctx, `DELETE FROM outbox_jobs WHERE consumer = $1 AND event_id = $2`, r.Consumer, r.EventID); err != nil {
					return err
				}
				continue
			}
			status, next := OutboxPending, any(nil)
			if r.NextAt != nil {
				next = ts(*r.NextAt)
			} else {
				// A Dead job keeps the time it died in next_attempt_at.
				status, next = OutboxDead, ts(r.At)
			}
			if _, err := tx.exec(ctx, `UPDATE outbox_jobs SET status = $4, next_attempt_at = $5, last_error = $6
				WHERE consumer = $1 AND event_id = $2 AND attempts = $3 AND status = 'Pending'`,
				r.Consumer, r.EventID, r.Attempt, status, next, r.Error); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: complete outbox jobs: %w", err)
	}
	return nil
}

// DeadOutboxJob is a job whose retries ran out.
type DeadOutboxJob struct {
	Consumer  string
	EventID   string
	TenantID  string
	EventType string
	Attempts  int
	LastError string
	DiedAt    time.Time
}

// DeadOutboxJobs lists up to limit Dead jobs of consumer, by event id.
func (s *Store) DeadOutboxJobs(ctx context.Context, consumer string, limit int) ([]DeadOutboxJob, error) {
	out, err := queryAll(ctx, s.r, func(row scanner) (DeadOutboxJob, error) {
		var d DeadOutboxJob
		err := row.Scan(&d.Consumer, &d.EventID, &d.TenantID, &d.EventType, &d.Attempts, &d.LastError, &d.DiedAt)
		d.DiedAt = d.DiedAt.UTC()
		return d, err
	}, `SELECT j.consumer, j.event_id, j.tenant_id, e.event_type, j.attempts, j.last_error, j.next_attempt_at
		FROM outbox_jobs j JOIN events e ON e.id = j.event_id
		WHERE j.consumer = $1 AND j.status = 'Dead' ORDER BY j.event_id LIMIT $2`, consumer, limit)
	if err != nil {
		return nil, fmt.Errorf("store: dead jobs of consumer %s: %w", consumer, err)
	}
	return out, nil
}

// RetryDeadOutboxJobs makes consumer's Dead jobs (those of eventIDs, or all
// when eventIDs is empty) Pending again, due at now, with their backoff
// schedule started over. It reports how many it requeued.
func (s *Store) RetryDeadOutboxJobs(ctx context.Context, consumer string, eventIDs []string, now time.Time) (int, error) {
	q := `UPDATE outbox_jobs SET status = 'Pending', next_attempt_at = $2, retry_base = attempts, last_error = ''
		WHERE consumer = $1 AND status = 'Dead'`
	args := []any{consumer, ts(now)}
	if len(eventIDs) > 0 {
		list, ids := inList(eventIDs, 3)
		q += ` AND event_id IN ` + list
		args = append(args, ids...)
	}
	res, err := s.w.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("store: retry dead jobs of consumer %s: %w", consumer, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: retry dead jobs of consumer %s: %w", consumer, err)
	}
	if n > 0 {
		s.notifyJobs()
	}
	return int(n), nil
}

// HasDueOutboxJobs reports, from the read pool, whether consumer has due
// Pending jobs: an idle consumer checks this instead of opening a write
// transaction (on SQLite, the one writer).
func (s *Store) HasDueOutboxJobs(ctx context.Context, consumer string, now time.Time) (bool, error) {
	var one int
	err := s.readRow(ctx, `SELECT 1 FROM outbox_jobs WHERE consumer = $1 AND status = 'Pending' AND next_attempt_at <= $2 LIMIT 1`,
		consumer, ts(now)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: look for jobs of consumer %s: %w", consumer, err)
	}
	return true, nil
}

// ConsumerLag is how far one consumer of the outbox is behind.
type ConsumerLag struct {
	Consumer string
	// Pending are the events waiting for it (due, claimed or backing off),
	// Dead those whose retries ran out (-1: not counted, for webhook).
	Pending, Dead int
	// Oldest is when the oldest pending one was handed to it; zero when
	// none is pending.
	Oldest time.Time
}

// ConsumerLags reports the lag of every registered consumer and of every
// relay target (webhook delivery: its messages, not events), and how many
// events wait for the relay (unrelayed). It counts through the partial indexes of pending
// work, so it costs in proportion to the backlog.
func (s *Store) ConsumerLags(ctx context.Context) (lags []ConsumerLag, unrelayed int, err error) {
	err = s.readTx(ctx, func(q queryer) error {
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE dispatch_pending IS NOT NULL`).Scan(&unrelayed); err != nil {
			return err
		}
		var err error
		lags, err = queryAll(ctx, q, func(row scanner) (ConsumerLag, error) {
			var (
				l      ConsumerLag
				oldest anyTime
			)
			err := row.Scan(&l.Consumer, &l.Pending, &l.Dead, &oldest)
			if oldest.t != nil {
				l.Oldest = *oldest.t
			}
			return l, err
		}, `SELECT c.name,
				(SELECT COUNT(*) FROM outbox_jobs j WHERE j.consumer = c.name AND j.status = 'Pending'),
				(SELECT COUNT(*) FROM outbox_jobs j WHERE j.consumer = c.name AND j.status = 'Dead'),
				(SELECT MIN(j.created_at) FROM outbox_jobs j WHERE j.consumer = c.name AND j.status = 'Pending')
			FROM outbox_consumers c ORDER BY c.name`)
		if err != nil {
			return err
		}
		for _, t := range registeredRelayTargets() {
			if t.Lag == nil {
				continue
			}
			l, err := t.Lag(ctx, ReadTx{q})
			if err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
			lags = append(lags, l)
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: consumer lags: %w", err)
	}
	return lags, unrelayed, nil
}

// OnOutboxJobs sets fn to be called after the relay wrote consumer jobs
// and after dead jobs are requeued, so this process's consumers wake at
// once instead of at their next poll. fn must not block.
func (s *Store) OnOutboxJobs(fn func()) {
	if fn == nil {
		s.onJobs.Store(nil)
		return
	}
	s.onJobs.Store(&fn)
}

func (s *Store) notifyJobs() {
	if hook := s.onJobs.Load(); hook != nil {
		(*hook)()
	}
}

// HasUnrelayedEvents reports, from the read pool, whether events wait for
// the relay (RelayEvents).
func (s *Store) HasUnrelayedEvents(ctx context.Context) (bool, error) {
	var one int
	err := s.readRow(ctx, `SELECT 1 FROM events WHERE dispatch_pending IS NOT NULL LIMIT 1`).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: look for events to relay: %w", err)
	}
	return true, nil
}
