package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kadens/kadens/internal/actor"
	"github.com/kadens/kadens/internal/tenancy"
)

// Event records that something happened to a resource. Events are written
// in the transaction of the change they describe, so a rolled-back change
// leaves none and a committed one always has its events (the outbox that
// webhook delivery reads).
type Event struct {
	ID        string `json:"id"`
	EventType string `json:"eventType"`
	// Subject is the resource path, e.g. /subscription/{id}.
	Subject string          `json:"subject"`
	Data    json.RawMessage `json:"data"`
	// EventTime is business time: when it happened on the tenant's clock.
	EventTime time.Time `json:"eventTime"`
	CreatedAt time.Time `json:"createdAt"`
	// Actor is who caused it (the context's actor.From when it was
	// recorded): the audit log. Read by ListEvents; the relay and the
	// consumers' batches leave it zero, as webhooks carry no actor.
	Actor actor.Actor `json:"actor"`
}

// eventColumns are the columns of an event row as AddEvent and AddEvents
// write them, with the actor's three when a context names one. Events of
// the system (the engine's renewals, by far the most) leave the actor to
// the columns' defaults, so the bulk path writes no more than before.
func eventColumns(a actor.Actor) string {
	if a.Kind == actor.System {
		return `id, tenant_id, event_type, subject, data, event_time, created_at`
	}
	return `id, tenant_id, event_type, subject, data, event_time, created_at, actor_kind, actor_id, actor_label`
}

// eventRow is one row's values for eventColumns(a).
func eventRow(a actor.Actor, vals ...any) []any {
	if a.Kind == actor.System {
		return vals
	}
	return append(vals, string(a.Kind), a.ID, limitLabel(a.Label))
}

// limitLabel keeps an actor's label to a length an audit page shows: it is
// the caller's name (a client id, an e-mail address), never content.
func limitLabel(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// AddEvent records an event of kind eventType about subject, carrying data
// (marshalled to JSON), at business time at.
func (tx *Tx) AddEvent(ctx context.Context, eventType, subject string, data any, at time.Time) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("store: encode %s event: %w", eventType, err)
	}
	a := actor.From(ctx)
	vals := eventRow(a, NewID(), tx.tenant, eventType, subject, string(b), ts(at), ts(time.Now()))
	_, err = tx.exec(ctx, `INSERT INTO events (`+eventColumns(a)+`) VALUES (`+placeholders(1, len(vals))+`)`, vals...)
	if err != nil {
		return fmt.Errorf("store: add %s event: %w", eventType, err)
	}
	tx.events = true
	return nil
}

// NewEvent is one event of AddEvents.
type NewEvent struct {
	Type    string
	Subject string
	Data    any
	At      time.Time
}

// AddEvents records events, in order, with multi-row inserts.
func (tx *Tx) AddEvents(ctx context.Context, events []NewEvent) error {
	if len(events) == 0 {
		return nil
	}
	created := ts(time.Now())
	a := actor.From(ctx)
	rows := make([][]any, len(events))
	for i, e := range events {
		b, err := json.Marshal(e.Data)
		if err != nil {
			return fmt.Errorf("store: encode %s event: %w", e.Type, err)
		}
		rows[i] = eventRow(a, NewID(), tx.tenant, e.Type, e.Subject, string(b), ts(e.At), created)
	}
	if err := tx.insertRows(ctx, "events", eventColumns(a), rows, ``); err != nil {
		return fmt.Errorf("store: add %s events: %w", events[0].Type, err)
	}
	tx.events = true
	return nil
}

// EventFilter narrows ListEvents; zero fields do not filter.
type EventFilter struct {
	EventType string
	Subject   string
	// ActorKind and ActorID: only the events caused by this kind of actor
	// (and this one of them); the audit log's filters.
	ActorKind actor.Kind
	ActorID   string
	// From and Until bound when the events were recorded (createdAt, the
	// wall clock: when the change was made, also on a test tenant), From
	// inclusive, Until exclusive.
	From, Until time.Time
	// Subjects keeps the events whose subject is one of these (at most
	// MaxEventSubjects): the audit log's filter by subscriber, whose
	// resources the application layer lists. Empty: no such filter.
	Subjects []string
}

// MaxEventSubjects bounds EventFilter.Subjects: one query's parameters.
const MaxEventSubjects = 1000

// ListEvents returns one page of the tenant's events, oldest first.
func (s *Store) ListEvents(ctx context.Context, f EventFilter, p Page) ([]Event, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	if f.EventType != "" {
		q.add("event_type = ?", f.EventType)
	}
	if f.Subject != "" {
		q.add("subject = ?", f.Subject)
	}
	if n := len(f.Subjects); n > MaxEventSubjects {
		return nil, "", fmt.Errorf("store: list events: %d subjects, at most %d", n, MaxEventSubjects)
	} else if n > 0 {
		ph := make([]string, n)
		for i, subj := range f.Subjects {
			q.args = append(q.args, subj)
			ph[i] = "$" + strconv.Itoa(len(q.args))
		}
		q.conds = append(q.conds, "subject IN ("+strings.Join(ph, ", ")+")")
	}
	if f.ActorKind != "" {
		q.add("actor_kind = ?", string(f.ActorKind))
	}
	if f.ActorID != "" {
		q.add("actor_id = ?", f.ActorID)
	}
	if !f.From.IsZero() {
		q.add("created_at >= ?", ts(f.From))
	}
	if !f.Until.IsZero() {
		q.add("created_at < ?", ts(f.Until))
	}
	tail := q.page(p)
	rows, err := s.r.QueryContext(ctx, `SELECT id, event_type, subject, data, event_time, created_at, actor_kind, actor_id, actor_label FROM events`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var (
			e    Event
			data string
		)
		var kind string
		if err := rows.Scan(&e.ID, &e.EventType, &e.Subject, &data, &e.EventTime, &e.CreatedAt, &kind, &e.Actor.ID, &e.Actor.Label); err != nil {
			return nil, "", fmt.Errorf("store: list events: %w", err)
		}
		e.Data = json.RawMessage(data)
		e.EventTime, e.CreatedAt = e.EventTime.UTC(), e.CreatedAt.UTC()
		e.Actor.Kind = actor.Kind(kind)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("store: list events: %w", err)
	}
	out, next := trimPage(out, p, func(e Event) string { return e.ID })
	return out, next, nil
}

// Events about what a subscriber user may use (docs/WEBHOOKS.md), the
// counterparts of INFO-Subscription's UserAuthorizationGranted and
// UserAuthorizationRevoked. They are recorded by the identity wing
// (internal/subscriberuser, AddUserAuthorizationEvent)
// in the transaction of the change that gives or takes the access: an
// account source created or deleted, a user linked to or unlinked from a
// subscriber.
const (
	EventUserAuthorizationGranted = "UserAuthorizationGranted"
	EventUserAuthorizationRevoked = "UserAuthorizationRevoked"
)

// Events of Peppol deliveries (internal/peppol), written in the transaction
// of the change.
const (
	EventPeppolDeliveryPending   = "PeppolDeliveryPending"
	EventPeppolDeliverySent      = "PeppolDeliverySent"
	EventPeppolDeliveryDelivered = "PeppolDeliveryDelivered"
	EventPeppolDeliveryFailed    = "PeppolDeliveryFailed"
)
