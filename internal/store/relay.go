package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The relay: it takes committed events from the outbox (events with a
// dispatch_pending mark), writes a job for every registered outbox
// consumer that takes their kind (relayToConsumers, outbox.go), hands
// them to every registered relay target, and clears their marks, all in
// one transaction. A relay target is a wing whose queue is a table of its
// own, filled here so that no event is lost or doubled between the relay
// and the wing: webhook delivery (internal/webhook), whose messages carry
// several events each. The store names no target; a wing registers itself
// from an init function (RegisterRelayTarget), as the ledger check's item
// sources do, so every binary that links the wing relays to it.

// RelayBatch is one transaction's events, taken from the outbox in id
// order, across tenants.
type RelayBatch struct {
	Now     time.Time
	Events  []Event
	Tenants []string // Tenants[i] is the tenant of Events[i]
}

// RelayTarget is a wing the relay hands events to (see above).
type RelayTarget struct {
	// Name is the target's consumer name in ConsumerLags.
	Name string
	// FanOut writes the wing's work for the batch in tx (a transaction
	// of no tenant: every row carries its tenant). wake asks the store to
	// call the OnEvents hook after the commit, so this process takes the
	// new work at once.
	FanOut func(ctx context.Context, tx *Tx, b RelayBatch) (wake bool, err error)
	// Lag reports the target's backlog for ConsumerLags, read in q.
	Lag func(ctx context.Context, q ReadTx) (ConsumerLag, error)
}

var relayTargets struct {
	sync.Mutex
	list []RelayTarget
}

// RegisterRelayTarget adds a wing to the relay; the wing calls it from an
// init function. A binary that does not link the wing relays events
// without handing them to it.
func RegisterRelayTarget(t RelayTarget) {
	relayTargets.Lock()
	defer relayTargets.Unlock()
	relayTargets.list = append(relayTargets.list, t)
}

func registeredRelayTargets() []RelayTarget {
	relayTargets.Lock()
	defer relayTargets.Unlock()
	return slices.Clone(relayTargets.list)
}

// RelayEvents relays up to limit events (any tenant) from the outbox: a
// job for every registered outbox consumer that takes their kind, every
// registered relay target's FanOut, and the events' outbox marks cleared,
// in one transaction. A target in instead runs in place of the registered
// one of its name, for a caller that wants more of the fan-out than its
// default (the webhook dispatcher claims the deliveries it makes). It
// reports how many events it took.
func (s *Store) RelayEvents(ctx context.Context, now time.Time, limit int, instead ...RelayTarget) (int, error) {
	targets := registeredRelayTargets()
	for i, t := range targets {
		for _, o := range instead {
			if o.Name == t.Name {
				targets[i] = o
			}
		}
	}
	var (
		b            = RelayBatch{Now: now}
		consumerJobs bool
		wake         bool
	)
	err := s.inTx(ctx, func(t *sql.Tx) error {
		tx := &Tx{tx: t, s: s}
		b.Events, b.Tenants = b.Events[:0], b.Tenants[:0]
		consumerJobs, wake = false, false
		err := tx.queryEach(ctx, `SELECT id, tenant_id, event_type, subject, data, event_time, created_at FROM events
			WHERE dispatch_pending IS NOT NULL ORDER BY id LIMIT $1`+s.forUpdate(""), []any{limit}, func(rows *sql.Rows) error {
			var (
				e    Event
				ten  string
				data string
			)
			if err := rows.Scan(&e.ID, &ten, &e.EventType, &e.Subject, &data, &e.EventTime, &e.CreatedAt); err != nil {
				return err
			}
			e.Data = json.RawMessage(data)
			e.EventTime, e.CreatedAt = e.EventTime.UTC(), e.CreatedAt.UTC()
			b.Events = append(b.Events, e)
			b.Tenants = append(b.Tenants, ten)
			return nil
		})
		if err != nil || len(b.Events) == 0 {
			return err
		}
		n, err := relayToConsumers(ctx, tx, b.Events, b.Tenants, now)
		if err != nil {
			return err
		}
		consumerJobs = n > 0
		for _, t := range targets {
			w, err := t.FanOut(ctx, tx, b)
			if err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
			wake = wake || w
		}
		ids := make([]string, len(b.Events))
		for i, e := range b.Events {
			ids[i] = e.ID
		}
		for len(ids) > 0 {
			n := min(len(ids), maxChunk)
			list, args := inList(ids[:n], 1)
			if _, err := tx.exec(ctx, `UPDATE events SET dispatch_pending = NULL WHERE id IN `+list, args...); err != nil {
				return err
			}
			ids = ids[n:]
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: relay events: %w", err)
	}
	// Wake whoever has new work in this process: the other consumers'
	// runner, and the webhook dispatcher when a target asked for it.
	if consumerJobs {
		s.notifyJobs()
	}
	if wake {
		s.NotifyEvents()
	}
	return len(b.Events), nil
}

// OnEvents sets fn to be called after every transaction that recorded
// events commits, and when a wing has queued work for this process
// (NotifyEvents), so the webhook dispatcher of this process wakes at once
// instead of at its next poll. fn must not block.
func (s *Store) OnEvents(fn func()) {
	if fn == nil {
		s.onEvents.Store(nil)
		return
	}
	s.onEvents.Store(&fn)
}

// NotifyEvents calls the OnEvents hook: for a wing that queued work for
// this process outside a transaction that recorded events (a webhook
// redelivery).
func (s *Store) NotifyEvents() {
	if hook := s.onEvents.Load(); hook != nil {
		(*hook)()
	}
}

// forUpdate makes a claiming SELECT skip rows other processes are claiming
// (PostgreSQL); SQLite has a single writer, so there is nothing to skip.
func (s *Store) forUpdate(of string) string {
	if s.engine != Postgres {
		return ""
	}
	if of != "" {
		return " FOR UPDATE OF " + of + " SKIP LOCKED"
	}
	return " FOR UPDATE SKIP LOCKED"
}

// inList is "($first, $first+1, …)" for ids, padded to a power of two by
// repeating the last id (which changes no result) so that a few statement
// texts serve every list length.
func inList(ids []string, first int) (string, []any) {
	size := 1
	for size < len(ids) {
		size *= 2
	}
	var b strings.Builder
	args := make([]any, size)
	b.WriteByte('(')
	for i := range size {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(first + i))
		args[i] = ids[min(i, len(ids)-1)]
	}
	b.WriteByte(')')
	return b.String(), args
}
