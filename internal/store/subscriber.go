package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kadens/kadens/internal/tenancy"
)

// Subscriber is a customer of a tenant: the person or company that owns
// subscriptions and receives invoices. SubscriberNumber is the customer
// number people quote (unique per tenant, assigned from a counter unless
// given); ExternalID is the caller's own key for the subscriber (unique per
// tenant when set).
type Subscriber struct {
	ID               string    `json:"id"`
	SubscriberNumber int64     `json:"subscriberNumber"`
	ExternalID       string    `json:"externalId"`
	Name             string    `json:"name"`
	Email            string    `json:"email"`
	Phone            string    `json:"phone"`
	Address          Address   `json:"address"`
	Country          string    `json:"country"`
	Contacts         []Contact `json:"contacts"`
	CreatedAt        time.Time `json:"createdAt"`
	UpdatedAt        time.Time `json:"updatedAt"`
}

// Address is a postal address.
type Address struct {
	Line1      string `json:"line1"`
	Line2      string `json:"line2"`
	PostalCode string `json:"postalCode"`
	City       string `json:"city"`
	Country    string `json:"country"`
}

// ContactRole says what a subscriber's contact is for.
type ContactRole string

// The contact roles.
const (
	// ContactInvoice receives the subscriber's invoices.
	ContactInvoice ContactRole = "Invoice"
	// ContactDelivery receives what the subscription delivers (e.g. the
	// printed paper).
	ContactDelivery ContactRole = "Delivery"
)

// Contact is someone other than the subscriber's main address who receives
// invoices or deliveries.
type Contact struct {
	Role    ContactRole `json:"role"`
	Name    string      `json:"name"`
	Email   string      `json:"email"`
	Phone   string      `json:"phone"`
	Address Address     `json:"address"`
}

// Errors for a subscriber that would break a uniqueness rule; both match
// ErrConflict too.
var (
	ErrSubscriberNumberTaken = fmt.Errorf("subscriber number is taken: %w", ErrConflict)
	ErrExternalIDTaken       = fmt.Errorf("external id is taken: %w", ErrConflict)
)

// subscriberNumberScope is the counter series of subscriber numbers.
const subscriberNumberScope = "subscriber"

// MaxSubscriberNumber is the largest subscriber number a client may choose
// (15 digits): above it a number would no longer be exact in a JavaScript
// client (2^53) nor the default Autogiro payer number (16 digits), and a
// client-chosen number near the end of int64 would leave the series no
// room. Numbers the series assigns are not bounded by it.
const MaxSubscriberNumber = 999_999_999_999_999

// ErrSubscriberNumberRange is a client-chosen subscriber number outside 1 to
// MaxSubscriberNumber.
var ErrSubscriberNumberRange = fmt.Errorf("subscriber number is not between 1 and %d", MaxSubscriberNumber)

// freeNumberBatch is how many taken numbers firstFreeSubscriberNumber reads
// per statement while it passes a run of them.
var freeNumberBatch = 256

// assignSubscriberNumber takes the tenant's next subscriber number in t: the
// series' next number, or, when clients chose that number (and maybe the
// ones after it) for subscribers of their own, the first one after it that
// is free; the series then continues from there. The numbers clients chose
// elsewhere, however large, do not move it, so no client can make the
// series run out (a number chosen at the end of int64 used to).
func assignSubscriberNumber(ctx context.Context, t *Tx) (int64, error) {
	n, err := nextCounter(ctx, t.tx, t.tenant, subscriberNumberScope)
	if err != nil {
		return 0, err
	}
	free, err := firstFreeSubscriberNumber(ctx, t, n)
	if err != nil {
		return 0, err
	}
	if free != n {
		if err := setCounter(ctx, t.tx, t.tenant, subscriberNumberScope, free); err != nil {
			return 0, err
		}
	}
	return free, nil
}

// firstFreeSubscriberNumber is the smallest number from n on that no
// subscriber of t's tenant has, read through the unique index on
// (tenant_id, subscriber_number) a batch at a time: one statement, finding
// nothing at n, in the usual case.
func firstFreeSubscriberNumber(ctx context.Context, t *Tx, n int64) (int64, error) {
	for {
		taken, err := queryAll(ctx, t.tx, func(r scanner) (int64, error) { var v int64; return v, r.Scan(&v) },
			`SELECT subscriber_number FROM subscribers WHERE tenant_id = $1 AND subscriber_number >= $2
			ORDER BY subscriber_number LIMIT `+strconv.Itoa(freeNumberBatch), t.tenant, n)
		if err != nil {
			return 0, fmt.Errorf("free subscriber number from %d: %w", n, err)
		}
		for _, v := range taken {
			if v != n {
				return n, nil
			}
			if n == maxCounter {
				return 0, fmt.Errorf("counter %s: %w", subscriberNumberScope, ErrCounterExhausted)
			}
			n++
		}
		if len(taken) < freeNumberBatch {
			return n, nil
		}
	}
}

// chosenSubscriberNumber checks a number a client gave and takes the
// series' lock (lockCounter), so automatic takers see it once it commits.
func chosenSubscriberNumber(ctx context.Context, t *Tx, n int64) error {
	if n < 1 || n > MaxSubscriberNumber {
		return ErrSubscriberNumberRange
	}
	return lockCounter(ctx, t.tx, t.tenant, subscriberNumberScope)
}

const subscriberColumns = `id, subscriber_number, external_id, name, email, phone,
	address_line1, address_line2, address_postal_code, address_city, address_country,
	country, contacts, created_at, updated_at`

func scanSubscriber(row scanner) (Subscriber, error) {
	var (
		s        Subscriber
		external sql.NullString
		contacts string
	)
	err := row.Scan(&s.ID, &s.SubscriberNumber, &external, &s.Name, &s.Email, &s.Phone,
		&s.Address.Line1, &s.Address.Line2, &s.Address.PostalCode, &s.Address.City, &s.Address.Country,
		&s.Country, &contacts, &s.CreatedAt, &s.UpdatedAt)
	if err != nil {
		return Subscriber{}, err
	}
	s.ExternalID = external.String
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	if err := json.Unmarshal([]byte(contacts), &s.Contacts); err != nil {
		return Subscriber{}, fmt.Errorf("contacts of subscriber %s: %w", s.ID, err)
	}
	if s.Contacts == nil {
		s.Contacts = []Contact{}
	}
	return s, nil
}

// subscriberValues are the stored forms of the editable fields, in the
// column order of the INSERT and UPDATE statements below.
func subscriberValues(s Subscriber) ([]any, error) {
	contacts := s.Contacts
	if contacts == nil {
		contacts = []Contact{}
	}
	buf, err := json.Marshal(contacts)
	if err != nil {
		return nil, fmt.Errorf("store: encode contacts: %w", err)
	}
	var external any
	if s.ExternalID != "" {
		external = s.ExternalID
	}
	return []any{external, s.Name, s.Email, s.Phone,
		s.Address.Line1, s.Address.Line2, s.Address.PostalCode, s.Address.City, s.Address.Country,
		s.Country, string(buf), strings.ToLower(s.Email), strings.ToLower(s.Name)}, nil
}

// subscriberConflict names the uniqueness rule err broke, or returns err.
func subscriberConflict(err error) error {
	if !isUniqueViolation(err) {
		return err
	}
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.ConstraintName == "subscribers_external_id",
		strings.Contains(err.Error(), "subscribers.external_id"):
		return ErrExternalIDTaken
	case errors.As(err, &pgErr) && pgErr.ConstraintName == "subscribers_number",
		strings.Contains(err.Error(), "subscribers.subscriber_number"):
		return ErrSubscriberNumberTaken
	}
	return fmt.Errorf("%w: %w", ErrConflict, err)
}

// CreateSubscriber stores sub under the context's tenant with a new id and
// returns it as stored. A zero SubscriberNumber is assigned from the
// tenant's subscriber number series (assignSubscriberNumber: it passes over
// numbers given explicitly, so assigned numbers never collide with given
// ones); a given one must be 1 to MaxSubscriberNumber
// (ErrSubscriberNumberRange) and does not move the series. A number or
// external id already in use is ErrSubscriberNumberTaken or
// ErrExternalIDTaken, and then no number is consumed.
func (s *Store) CreateSubscriber(ctx context.Context, sub Subscriber, now time.Time) (Subscriber, error) {
	var created Subscriber
	err := s.InTx(ctx, func(tx *Tx) error {
		at, err := tx.businessTime(ctx, now)
		if err != nil {
			return err
		}
		created, err = insertSubscriber(ctx, tx, sub, SourceAPI, now, at)
		return err
	})
	if err != nil {
		return Subscriber{}, fmt.Errorf("store: create subscriber: %w", err)
	}
	return created, nil
}

// insertSubscriber is CreateSubscriber inside the caller's transaction tx
// (which an order's completion shares with the rest of its work), with
// its SubscriberCreated and SubscriberContactCreated events (source says
// where the change came from). On error tx must be rolled back: a number
// taken from the series is only given back that way.
func insertSubscriber(ctx context.Context, t *Tx, sub Subscriber, source string, now, at time.Time) (Subscriber, error) {
	tx, tenant := t.tx, t.tenant
	sub.ID = NewID()
	sub.CreatedAt = now.UTC().Truncate(time.Microsecond)
	sub.UpdatedAt = sub.CreatedAt
	if sub.Contacts == nil {
		sub.Contacts = []Contact{}
	}
	vals, err := subscriberValues(sub)
	if err != nil {
		return Subscriber{}, err
	}
	if sub.SubscriberNumber == 0 {
		n, err := assignSubscriberNumber(ctx, t)
		if err != nil {
			return Subscriber{}, err
		}
		sub.SubscriberNumber = n
	} else if err := chosenSubscriberNumber(ctx, t, sub.SubscriberNumber); err != nil {
		return Subscriber{}, err
	}
	args := append([]any{tenant, sub.ID, sub.SubscriberNumber}, vals...)
	args = append(args, ts(sub.CreatedAt), ts(sub.UpdatedAt))
	_, err = tx.ExecContext(ctx, `INSERT INTO subscribers (tenant_id, id, subscriber_number, external_id,
		name, email, phone, address_line1, address_line2, address_postal_code, address_city, address_country,
		country, contacts, email_key, name_key, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`, args...)
	if err != nil {
		return Subscriber{}, subscriberConflict(err)
	}
	if err := t.AddEvents(ctx, subscriberEvents(nil, &sub, source, at)); err != nil {
		return Subscriber{}, err
	}
	return sub, nil
}

// Subscriber returns subscriber id of the context's tenant, or ErrNotFound
// (also for another tenant's subscriber).
func (s *Store) Subscriber(ctx context.Context, id string) (Subscriber, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Subscriber{}, err
	}
	if !ValidID(id) {
		return Subscriber{}, ErrNotFound
	}
	sub, err := scanSubscriber(s.readRow(ctx,
		`SELECT `+subscriberColumns+` FROM subscribers WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return Subscriber{}, fmt.Errorf("store: subscriber %s: %w", id, notFound(err))
	}
	return sub, nil
}

// SubscriberFilter narrows ListSubscribers; zero fields do not filter.
type SubscriberFilter struct {
	// ExternalID and SubscriberNumber match exactly.
	ExternalID       string
	SubscriberNumber int64
	// Email matches the whole address, ignoring case.
	Email string
	// Name matches any part of the name, ignoring case.
	Name string
}

// ListSubscribers returns one page of the tenant's subscribers and the
// cursor of the next page ("" on the last).
func (s *Store) ListSubscribers(ctx context.Context, f SubscriberFilter, p Page) ([]Subscriber, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	q := tenantFilter(tenant)
	if f.ExternalID != "" {
		q.add("external_id = ?", f.ExternalID)
	}
	if f.SubscriberNumber != 0 {
		q.add("subscriber_number = ?", f.SubscriberNumber)
	}
	if f.Email != "" {
		q.add("email_key = ?", strings.ToLower(f.Email))
	}
	if f.Name != "" {
		q.add(`name_key LIKE ? ESCAPE '\'`, "%"+likeEscaper.Replace(strings.ToLower(f.Name))+"%")
	}
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanSubscriber, `SELECT `+subscriberColumns+` FROM subscribers`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list subscribers: %w", err)
	}
	out, next := trimPage(out, p, func(s Subscriber) string { return s.ID })
	return out, next, nil
}

// likeEscaper makes a search text match literally inside a LIKE pattern
// with ESCAPE '\'.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// UpdateSubscriber replaces the editable fields of subscriber sub.ID and
// returns the stored result, or ErrNotFound. A zero SubscriberNumber keeps
// the current number; a new one is held to the rules of CreateSubscriber
// (and does not move the series either), as are uniqueness errors.
func (s *Store) UpdateSubscriber(ctx context.Context, sub Subscriber, now time.Time) (Subscriber, error) {
	if _, err := tenancy.From(ctx); err != nil {
		return Subscriber{}, err
	}
	if !ValidID(sub.ID) {
		return Subscriber{}, ErrNotFound
	}
	vals, err := subscriberValues(sub)
	if err != nil {
		return Subscriber{}, err
	}
	var updated Subscriber
	err = s.InTx(ctx, func(t *Tx) error {
		at, err := t.businessTime(ctx, now)
		if err != nil {
			return err
		}
		updated, err = updateSubscriber(ctx, t, sub, vals, SourceAPI, now, at)
		return err
	})
	if err != nil {
		return Subscriber{}, fmt.Errorf("store: update subscriber %s: %w", sub.ID, err)
	}
	return updated, nil
}

// UpdateSubscriber is Store.UpdateSubscriber in the transaction (an
// import's batch); on error the transaction must roll back.
func (tx *Tx) UpdateSubscriber(ctx context.Context, sub Subscriber, now time.Time) (Subscriber, error) {
	if !ValidID(sub.ID) {
		return Subscriber{}, ErrNotFound
	}
	vals, err := subscriberValues(sub)
	if err != nil {
		return Subscriber{}, err
	}
	updated, err := updateSubscriber(ctx, tx, sub, vals, tx.eventSource(SourceAPI), now, now)
	if err != nil {
		return Subscriber{}, fmt.Errorf("store: update subscriber %s: %w", sub.ID, err)
	}
	return updated, nil
}

// updateSubscriber writes the editable fields vals of sub in t, with the
// contact events of the change (source says where it came from, at is its
// business time).
func updateSubscriber(ctx context.Context, t *Tx, sub Subscriber, vals []any, source string, now, at time.Time) (Subscriber, error) {
	tx, tenant := t.tx, t.tenant
	// The subscriber as it was, locked, to tell its contact events.
	q := `SELECT ` + subscriberColumns + ` FROM subscribers WHERE tenant_id = $1 AND id = $2`
	if t.s.engine == Postgres {
		q += ` FOR UPDATE`
	}
	before, err := scanSubscriber(tx.QueryRowContext(ctx, q, tenant, sub.ID))
	if err != nil {
		return Subscriber{}, notFound(err)
	}
	if sub.SubscriberNumber != 0 && sub.SubscriberNumber != before.SubscriberNumber {
		if err := chosenSubscriberNumber(ctx, t, sub.SubscriberNumber); err != nil {
			return Subscriber{}, err
		}
	}
	// $3 NULL keeps the current number.
	var number any
	if sub.SubscriberNumber != 0 {
		number = sub.SubscriberNumber
	}
	args := append([]any{tenant, sub.ID, number}, vals...)
	args = append(args, ts(now))
	updated, err := scanSubscriber(tx.QueryRowContext(ctx, `UPDATE subscribers SET
			subscriber_number = COALESCE($3, subscriber_number), external_id = $4, name = $5, email = $6, phone = $7,
			address_line1 = $8, address_line2 = $9, address_postal_code = $10, address_city = $11,
			address_country = $12, country = $13, contacts = $14, email_key = $15, name_key = $16, updated_at = $17
			WHERE tenant_id = $1 AND id = $2 RETURNING `+subscriberColumns, args...))
	if err != nil {
		return Subscriber{}, notFound(subscriberConflict(err))
	}
	if err := t.AddEvents(ctx, subscriberEvents(&before, &updated, source, at)); err != nil {
		return Subscriber{}, err
	}
	return updated, nil
}

// ErrSubscriberHasHistory: the subscriber cannot be deleted because
// records that are kept as billing history refer to it (subscriptions that
// have ended, completed orders, payment agreements). It matches
// ErrConflict.
var ErrSubscriberHasHistory = fmt.Errorf("subscriber has billing history: %w", ErrConflict)

// DeleteSubscriber removes subscriber id, or returns ErrNotFound. now is
// the tenant's time, which decides what is live.
//
// A subscriber with live subscriptions (not deactivated and not yet ended
// at now) or open orders (status Created) is refused with an *InUseError
// naming them. One that other records still refer to (ended
// subscriptions, completed orders, payment agreements: the billing history)
// is refused with ErrSubscriberHasHistory; the foreign keys decide that, in
// the DELETE itself, so a subscription or order added concurrently either
// makes the DELETE fail or fails itself. The subscriber's cancelled orders
// never took effect and go with it.
func (s *Store) DeleteSubscriber(ctx context.Context, id string, now time.Time) error {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return err
	}
	if !ValidID(id) {
		return ErrNotFound
	}
	err = s.InTx(ctx, func(t *Tx) error {
		tx := t.tx
		before, err := scanSubscriber(tx.QueryRowContext(ctx, `SELECT `+subscriberColumns+` FROM subscribers WHERE tenant_id = $1 AND id = $2`,
			tenant, id))
		if err != nil {
			return notFound(err)
		}
		at := ts(now)
		live, err := referrers(ctx, tx, `SELECT id FROM subscriptions
			WHERE tenant_id = $1 AND subscriber_id = $2 AND period_end > $3 AND (deactivated_at IS NULL OR deactivated_at > $3)
			ORDER BY id LIMIT 10`, tenant, id, at)
		if err != nil {
			return err
		}
		if len(live) > 0 {
			return &InUseError{What: "subscriber", ID: id, By: "live subscription", IDs: live}
		}
		open, err := referrers(ctx, tx, `SELECT id FROM orders WHERE tenant_id = $1 AND subscriber_id = $2 AND status = 'Created'
			ORDER BY id LIMIT 10`, tenant, id)
		if err != nil {
			return err
		}
		if len(open) > 0 {
			return &InUseError{What: "subscriber", ID: id, By: "open order", IDs: open}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM orders WHERE tenant_id = $1 AND subscriber_id = $2 AND status = 'Cancelled'`,
			tenant, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM subscribers WHERE tenant_id = $1 AND id = $2`, tenant, id)
		if isForeignKeyViolation(err) {
			return ErrSubscriberHasHistory
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNotFound
		}
		return t.AddEvents(ctx, subscriberEvents(&before, nil, SourceAPI, now))
	})
	if err != nil {
		return fmt.Errorf("store: delete subscriber %s: %w", id, err)
	}
	return nil
}

// SubscriberByNumber returns the id of the subscriber with a number in the
// transaction's tenant, or ErrNotFound.
func (tx *Tx) SubscriberByNumber(ctx context.Context, number int64) (string, error) {
	var id string
	err := tx.tx.QueryRowContext(ctx, `SELECT id FROM subscribers WHERE tenant_id = $1 AND subscriber_number = $2`, tx.tenant, number).Scan(&id)
	return id, notFound(err)
}

// SubscribersByExternalID returns the tenant's subscribers among the
// external ids, by external id: a read of the shared subscriber records
// (kadens import matches its rows by it), so it stays beside their
// columns and scan.
func (tx *Tx) SubscribersByExternalID(ctx context.Context, externalIDs []string) (map[string]Subscriber, error) {
	out := make(map[string]Subscriber, len(externalIDs))
	err := tx.queryIn(ctx, `SELECT `+subscriberColumns+` FROM subscribers WHERE tenant_id = $1 AND external_id IN `, ``, nil, externalIDs,
		func(rows *sql.Rows) error {
			sub, err := scanSubscriber(rows)
			if err != nil {
				return err
			}
			out[sub.ExternalID] = sub
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: subscribers by external id: %w", err)
	}
	return out, nil
}
