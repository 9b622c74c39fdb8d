// Package privacy keeps subscribers' requests to delete their data
// (docs/MINSIDE.md, "Deletion requests"): a subscriber asks (on Min side,
// or through the API for a merchant's own portal), the merchant's staff
// answer it in the console. A request is a task for people, never an
// instant delete: billing records must be kept as long as the bookkeeping
// rules say (Norway's bokføringsloven: five years), and what may go is the
// merchant's decision. The wing owns the deletion_requests table
// (migration 00061) and its SQL, on the store's query kit; every function
// runs in the caller's transaction, scoped by its tenant.
package privacy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// Statuses of a request: Open until a staff user closes it as Completed
// (what could be deleted was) or Rejected (nothing could, with why).
const (
	StatusOpen      = "Open"
	StatusCompleted = "Completed"
	StatusRejected  = "Rejected"
)

// Event kinds (subject /subscriber/{id}), through the outbox like every
// other event, so a merchant's own systems can act on them.
const (
	EventDeletionRequested = store.EventSubscriberDeletionRequested
	EventDeletionResolved  = store.EventSubscriberDeletionResolved
)

// MaxText bounds a request's message and a resolution, in characters.
const MaxText = 2000

// Request is one subscriber's request to delete their data.
type Request struct {
	ID           string     `json:"id" format:"uuid"`
	SubscriberID string     `json:"subscriberId" format:"uuid"`
	UserID       string     `json:"userId" description:"Who asked: the subscriber user (Min side) or the API client."`
	UserEmail    string     `json:"userEmail" description:"The subscriber user's login when asked on Min side; empty through the API."`
	Message      string     `json:"message"`
	Status       string     `json:"status" enum:"Open,Completed,Rejected"`
	RequestedAt  time.Time  `json:"requestedAt"`
	AnswerBy     time.Time  `json:"answerBy" description:"One month after the request: when the GDPR (art. 12(3)) expects the answer."`
	ResolvedBy   string     `json:"resolvedBy" description:"The staff user or API client that closed it; empty while open."`
	ResolvedAt   *time.Time `json:"resolvedAt"`
	Resolution   string     `json:"resolution" description:"What was deleted, or why not: the answer the subscriber is given."`
}

// answerBy is one calendar month after at: the GDPR's time to answer.
func answerBy(at time.Time) time.Time { return at.AddDate(0, 1, 0) }

// Ask is a subscriber's request as asked.
type Ask struct {
	SubscriberID string
	UserID       string
	UserEmail    string
	Message      string
}

// text checks a free text field: multiline text (validation.TextProblem)
// of at most MaxText characters.
func text(errs *validation.Errors, field, s string) string {
	s = strings.TrimSpace(s)
	if p := validation.TextProblem(s, true); p != "" {
		errs.Add(field, "%s", p)
	} else if utf8.RuneCountInString(s) > MaxText {
		errs.Add(field, "must be at most %d characters", MaxText)
	}
	return s
}

// Open records a deletion request of a.SubscriberID at now in tx and its
// SubscriberDeletionRequested event, or returns the request already open
// for the subscriber (created false): asking twice makes one task. Of two
// asks at once one inserts; the other's insert meets the unique index of
// open requests and returns store.ErrConflict, which InTxRetrying turns
// into a retry that finds the winner's.
func Open(ctx context.Context, tx *store.Tx, a Ask, now time.Time) (Request, bool, error) {
	var errs validation.Errors
	a.Message = text(&errs, "message", a.Message)
	if err := errs.Err(); err != nil {
		return Request{}, false, err
	}
	if open, err := queryOne(ctx, tx, ` WHERE tenant_id = $1 AND subscriber_id = $2 AND status = 'Open'`, tx.TenantID(), a.SubscriberID); err == nil {
		return open, false, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return Request{}, false, err
	}
	r := Request{ID: store.NewID(), SubscriberID: a.SubscriberID, UserID: a.UserID, UserEmail: a.UserEmail, Message: a.Message,
		Status: StatusOpen, RequestedAt: now.UTC(), AnswerBy: answerBy(now.UTC())}
	_, err := tx.Exec(ctx, `INSERT INTO deletion_requests (id, tenant_id, subscriber_id, user_id, user_email, message, status, requested_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, r.ID, tx.TenantID(), r.SubscriberID, r.UserID, r.UserEmail, r.Message, r.Status, store.TimeParam(r.RequestedAt))
	if store.IsUniqueViolation(err) {
		return Request{}, false, fmt.Errorf("privacy: a request of subscriber %s was opened concurrently: %w", a.SubscriberID, store.ErrConflict)
	}
	if err != nil {
		return Request{}, false, fmt.Errorf("privacy: open request: %w", err)
	}
	if err := tx.AddEvent(ctx, EventDeletionRequested, "/subscriber/"+r.SubscriberID, eventData(r), now); err != nil {
		return Request{}, false, err
	}
	return r, true, nil
}

// Resolve closes open request id as status (Completed or Rejected) with
// resolution, by (the staff user or client), at now, and records
// SubscriberDeletionResolved. A request that is closed already is a
// validation error naming id; one that is not the tenant's is
// store.ErrNotFound. The UPDATE claims the open row, so of two closes at
// once one wins.
func Resolve(ctx context.Context, tx *store.Tx, id, status, resolution, by string, now time.Time) (Request, error) {
	var errs validation.Errors
	if status != StatusCompleted && status != StatusRejected {
		errs.Add("status", "must be Completed or Rejected")
	}
	resolution = text(&errs, "resolution", resolution)
	if status == StatusRejected && resolution == "" {
		errs.Add("resolution", "say why nothing could be deleted: the subscriber is told")
	}
	if err := errs.Err(); err != nil {
		return Request{}, err
	}
	r, err := Get(ctx, tx, id)
	if err != nil {
		return Request{}, err
	}
	res, err := tx.Exec(ctx, `UPDATE deletion_requests SET status = $3, resolution = $4, resolved_by = $5, resolved_at = $6
		WHERE tenant_id = $1 AND id = $2 AND status = 'Open'`, tx.TenantID(), id, status, resolution, by, store.TimeParam(now))
	if err != nil {
		return Request{}, fmt.Errorf("privacy: resolve %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return Request{}, fmt.Errorf("privacy: resolve %s: %w", id, err)
	} else if n == 0 {
		return Request{}, validation.Field("id", "deletion request %s is %s already", id, r.Status)
	}
	at := now.UTC()
	r.Status, r.Resolution, r.ResolvedBy, r.ResolvedAt = status, resolution, by, &at
	if err := tx.AddEvent(ctx, EventDeletionResolved, "/subscriber/"+r.SubscriberID, eventData(r), now); err != nil {
		return Request{}, err
	}
	return r, nil
}

// eventData is the events' payload: ids and the status.
func eventData(r Request) map[string]any {
	return map[string]any{"deletionRequestId": r.ID, "subscriberId": r.SubscriberID, "status": r.Status}
}

const columns = `id, subscriber_id, user_id, user_email, message, status, requested_at, resolved_by, resolved_at, resolution`

func scan(row store.Scanner) (Request, error) {
	var (
		r        Request
		resolved store.AnyTime
	)
	if err := row.Scan(&r.ID, &r.SubscriberID, &r.UserID, &r.UserEmail, &r.Message, &r.Status, &r.RequestedAt, &r.ResolvedBy, &resolved, &r.Resolution); err != nil {
		return Request{}, err
	}
	r.RequestedAt = r.RequestedAt.UTC()
	r.AnswerBy = answerBy(r.RequestedAt)
	if resolved.T != nil {
		t := resolved.T.UTC()
		r.ResolvedAt = &t
	}
	return r, nil
}

func queryOne(ctx context.Context, tx *store.Tx, where string, args ...any) (Request, error) {
	r, err := scan(tx.QueryRow(ctx, `SELECT `+columns+` FROM deletion_requests`+where, args...))
	if err != nil {
		return Request{}, store.NotFound(err)
	}
	return r, nil
}

// Get is the tenant's request id; store.ErrNotFound when there is none.
func Get(ctx context.Context, tx *store.Tx, id string) (Request, error) {
	if !store.ValidID(id) {
		return Request{}, store.ErrNotFound
	}
	r, err := queryOne(ctx, tx, ` WHERE tenant_id = $1 AND id = $2`, tx.TenantID(), id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Request{}, fmt.Errorf("privacy: request %s: %w", id, err)
	}
	return r, err
}

// Filter narrows List.
type Filter struct {
	Status       string // "" for every status
	SubscriberID string
}

// List is a page of the tenant's requests matching f, by id (ids are
// time-ordered, so oldest first: the one to answer first on top).
func List(ctx context.Context, tx *store.Tx, f Filter, p store.Page) ([]Request, string, error) {
	w := store.TenantFilter("", tx.TenantID())
	if f.Status != "" {
		w.Add("status = ?", f.Status)
	}
	if f.SubscriberID != "" {
		w.Add("subscriber_id = ?", f.SubscriberID)
	}
	out, next, err := store.ListPage(ctx, tx, scan, `SELECT `+columns+` FROM deletion_requests`, w, "id", p, func(r Request) string { return r.ID })
	if err != nil {
		return nil, "", fmt.Errorf("privacy: list requests: %w", err)
	}
	return out, next, nil
}
