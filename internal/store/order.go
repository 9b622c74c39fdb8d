package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/tenancy"
)

// EventOrderProcessed is recorded when an order is completed.
const EventOrderProcessed = "OrderProcessed"

// Order statuses. An order is Created, then either Completed (once) or
// Cancelled; both are final.
const (
	OrderCreated   = "Created"
	OrderCompleted = "Completed"
	OrderCancelled = "Cancelled"
)

// Order is a request to start a subscription: a template package with the
// order's choices, sold by an organization to an existing subscriber
// (SubscriberID) or to a new one (NewSubscriber, created on completion).
// It is stored as it was made; completion fills in what it created.
type Order struct {
	ID                string
	Status            string
	OrganizationID    string
	TemplatePackageID string
	Choices           catalog.Choices
	// SubscriberID is the subscriber the order names, or, once completion
	// has created it, the new subscriber; nil until then.
	SubscriberID *string
	// NewSubscriber is the subscriber completion creates (its ID, times
	// and, when not given, number are assigned then); nil when the order
	// names an existing subscriber.
	NewSubscriber *Subscriber
	// PaymentAgreementID is the agreement the order names, or, once
	// completed, the one its subscription uses.
	PaymentAgreementID *string
	// PaymentAgreementParams, given instead of an agreement id, describe
	// an agreement completion creates for the subscriber.
	PaymentAgreementParams *AgreementParams
	// InvoiceContact becomes the subscriber's Invoice contact on
	// completion (its Role is ContactInvoice).
	InvoiceContact *Contact
	RequestedStart *time.Time
	// SubscriptionID is the first subscription completion created.
	SubscriptionID *string
	CreatedAt      time.Time
	CompletedAt    *time.Time
	CancelledAt    *time.Time
}

// newSubscriberJSON is the stored form of Order.NewSubscriber: the fields a
// client gives, nothing assigned.
type newSubscriberJSON struct {
	SubscriberNumber int64     `json:"subscriberNumber,omitempty"`
	ExternalID       string    `json:"externalId,omitempty"`
	Name             string    `json:"name"`
	Email            string    `json:"email,omitempty"`
	Phone            string    `json:"phone,omitempty"`
	Address          Address   `json:"address"`
	Country          string    `json:"country,omitempty"`
	Contacts         []Contact `json:"contacts"`
}

const orderColumns = `id, status, organization_id, template_package_id, choices, subscriber_id, new_subscriber,
	payment_agreement_id, invoice_contact, requested_start, subscription_id, created_at, completed_at, cancelled_at,
	payment_agreement_params`

func scanOrder(row scanner) (Order, error) {
	var (
		o                                   Order
		choices                             string
		subscriber, agreement, subscription sql.NullString
		newSub, contact, params             sql.NullString
		start, completed, cancelled         sql.NullTime
	)
	err := row.Scan(&o.ID, &o.Status, &o.OrganizationID, &o.TemplatePackageID, &choices, &subscriber, &newSub,
		&agreement, &contact, &start, &subscription, &o.CreatedAt, &completed, &cancelled, &params)
	if err != nil {
		return Order{}, err
	}
	if o.Choices, err = DecodeChoices(choices); err != nil {
		return Order{}, fmt.Errorf("order %s choices: %w", o.ID, err)
	}
	if newSub.Valid {
		var j newSubscriberJSON
		if err := json.Unmarshal([]byte(newSub.String), &j); err != nil {
			return Order{}, fmt.Errorf("order %s subscriber: %w", o.ID, err)
		}
		if j.Contacts == nil {
			j.Contacts = []Contact{}
		}
		o.NewSubscriber = &Subscriber{SubscriberNumber: j.SubscriberNumber, ExternalID: j.ExternalID, Name: j.Name,
			Email: j.Email, Phone: j.Phone, Address: j.Address, Country: j.Country, Contacts: j.Contacts}
	}
	if contact.Valid {
		var c Contact
		if err := json.Unmarshal([]byte(contact.String), &c); err != nil {
			return Order{}, fmt.Errorf("order %s invoice contact: %w", o.ID, err)
		}
		o.InvoiceContact = &c
	}
	if params.Valid {
		var p AgreementParams
		if err := json.Unmarshal([]byte(params.String), &p); err != nil {
			return Order{}, fmt.Errorf("order %s payment agreement: %w", o.ID, err)
		}
		o.PaymentAgreementParams = &p
	}
	o.SubscriberID, o.PaymentAgreementID, o.SubscriptionID = nullString(subscriber), nullString(agreement), nullString(subscription)
	o.RequestedStart, o.CompletedAt, o.CancelledAt = fromNullTime(start), fromNullTime(completed), fromNullTime(cancelled)
	o.CreatedAt = o.CreatedAt.UTC()
	return o, nil
}

// CreateOrder stores o under the context's tenant with a new id, status
// Created and creation time now, and returns it as stored. The caller has
// validated it; a reference that vanished meanwhile (organization,
// template, subscriber, agreement) is ErrConflict.
func (s *Store) CreateOrder(ctx context.Context, o Order, now time.Time) (Order, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Order{}, err
	}
	o.ID = NewID()
	o.Status = OrderCreated
	o.CreatedAt = now.UTC().Truncate(time.Microsecond)
	o.SubscriptionID, o.CompletedAt, o.CancelledAt = nil, nil, nil
	if o.InvoiceContact != nil {
		c := *o.InvoiceContact
		c.Role = ContactInvoice
		o.InvoiceContact = &c
	}
	choices, err := EncodeChoices(o.Choices)
	if err != nil {
		return Order{}, fmt.Errorf("store: encode choices: %w", err)
	}
	var newSub, contact, params any
	if o.PaymentAgreementParams != nil {
		b, err := json.Marshal(o.PaymentAgreementParams)
		if err != nil {
			return Order{}, fmt.Errorf("store: encode payment agreement: %w", err)
		}
		params = string(b)
	}
	if n := o.NewSubscriber; n != nil {
		contacts := n.Contacts
		if contacts == nil {
			contacts = []Contact{}
		}
		b, err := json.Marshal(newSubscriberJSON{SubscriberNumber: n.SubscriberNumber, ExternalID: n.ExternalID, Name: n.Name,
			Email: n.Email, Phone: n.Phone, Address: n.Address, Country: n.Country, Contacts: contacts})
		if err != nil {
			return Order{}, fmt.Errorf("store: encode order subscriber: %w", err)
		}
		newSub = string(b)
	}
	if o.InvoiceContact != nil {
		b, err := json.Marshal(o.InvoiceContact)
		if err != nil {
			return Order{}, fmt.Errorf("store: encode invoice contact: %w", err)
		}
		contact = string(b)
	}
	var out Order
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO orders (tenant_id, id, status, organization_id, template_package_id, choices,
			subscriber_id, new_subscriber, payment_agreement_id, invoice_contact, requested_start, created_at, payment_agreement_params)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			tenant, o.ID, o.Status, o.OrganizationID, o.TemplatePackageID, choices,
			o.SubscriberID, newSub, o.PaymentAgreementID, contact, optTS(o.RequestedStart), ts(o.CreatedAt), params)
		if err != nil {
			return refError(err)
		}
		out, err = scanOrder(tx.QueryRowContext(ctx, `SELECT `+orderColumns+` FROM orders WHERE tenant_id = $1 AND id = $2`, tenant, o.ID))
		return err
	})
	if err != nil {
		return Order{}, fmt.Errorf("store: create order: %w", err)
	}
	return out, nil
}

// Order returns order id of the context's tenant, or ErrNotFound (also for
// another tenant's order).
func (s *Store) Order(ctx context.Context, id string) (Order, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Order{}, err
	}
	return readOrder(ctx, s.r, tenant, id)
}

func readOrder(ctx context.Context, q queryer, tenant, id string) (Order, error) {
	if !ValidID(id) {
		return Order{}, ErrNotFound
	}
	o, err := scanOrder(q.QueryRowContext(ctx, `SELECT `+orderColumns+` FROM orders WHERE tenant_id = $1 AND id = $2`, tenant, id))
	if err != nil {
		return Order{}, fmt.Errorf("store: order %s: %w", id, notFound(err))
	}
	return o, nil
}

// OrderFilter narrows ListOrders; zero fields do not filter.
type OrderFilter struct {
	SubscriberID   string
	OrganizationID string
	Status         string
}

// ListOrders returns one page of the tenant's orders, oldest first, and the
// cursor of the next page ("" on the last).
func (s *Store) ListOrders(ctx context.Context, f OrderFilter, p Page) ([]Order, string, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return nil, "", err
	}
	for _, id := range []string{f.SubscriberID, f.OrganizationID} {
		if id != "" && !ValidID(id) {
			return nil, "", nil // names nothing; PostgreSQL would refuse the comparison
		}
	}
	q := tenantFilter(tenant)
	if f.SubscriberID != "" {
		q.add("subscriber_id = ?", f.SubscriberID)
	}
	if f.OrganizationID != "" {
		q.add("organization_id = ?", f.OrganizationID)
	}
	if f.Status != "" {
		q.add("status = ?", f.Status)
	}
	tail := q.page(p)
	out, err := queryAll(ctx, s.r, scanOrder, `SELECT `+orderColumns+` FROM orders`+q.where()+tail, q.args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: list orders: %w", err)
	}
	out, next := trimPage(out, p, func(o Order) string { return o.ID })
	return out, next, nil
}

// CancelOrder moves order id from Created to Cancelled at now and returns
// the order as it then is, or ErrNotFound. An order that is no longer
// Created is returned unchanged: the caller tells a cancellation that
// already happened from a completed order by its Status.
func (s *Store) CancelOrder(ctx context.Context, id string, now time.Time) (Order, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return Order{}, err
	}
	if !ValidID(id) {
		return Order{}, ErrNotFound
	}
	var out Order
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE orders SET status = 'Cancelled', cancelled_at = $3
			WHERE tenant_id = $1 AND id = $2 AND status = 'Created'`, tenant, id, ts(now)); err != nil {
			return err
		}
		var err error
		out, err = readOrder(ctx, tx, tenant, id)
		return err
	})
	if err != nil {
		return Order{}, fmt.Errorf("store: cancel order %s: %w", id, err)
	}
	return out, nil
}

// LivePaymentAgreement returns payment agreement id if it is a live (not
// deleted) agreement of subscriber subscriberID, or ErrNotFound.
func (s *Store) LivePaymentAgreement(ctx context.Context, subscriberID, id string) (PaymentAgreement, error) {
	tenant, err := tenancy.From(ctx)
	if err != nil {
		return PaymentAgreement{}, err
	}
	return livePaymentAgreement(ctx, s.r, tenant, subscriberID, id, "")
}

// livePaymentAgreement reads a live agreement; lock is appended to the
// query (Tx.forShare).
func livePaymentAgreement(ctx context.Context, q queryer, tenant, subscriberID, id, lock string) (PaymentAgreement, error) {
	if !ValidID(id) || !ValidID(subscriberID) {
		return PaymentAgreement{}, ErrNotFound
	}
	a := PaymentAgreement{ID: id, SubscriberID: subscriberID}
	err := q.QueryRowContext(ctx, `SELECT provider_type, provider_agreement_reference, payment_method, created_at
		FROM payment_agreements WHERE tenant_id = $1 AND id = $2 AND subscriber_id = $3 AND deleted_at IS NULL`+lock,
		tenant, id, subscriberID).Scan(&a.ProviderType, &a.ProviderAgreementReference, &a.PaymentMethod, &a.CreatedAt)
	if err != nil {
		return PaymentAgreement{}, fmt.Errorf("store: payment agreement %s: %w", id, notFound(err))
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return a, nil
}

// The steps of an order's completion, which the API composes with the
// engine in one transaction.

// Order reads order id in the transaction.
func (tx *Tx) Order(ctx context.Context, id string) (Order, error) {
	return readOrder(ctx, tx.tx, tx.tenant, id)
}

// ClaimOrder moves order id from Created to Completed at now, which locks
// the order until the transaction ends, and reports whether it did. It
// does nothing when the order is no longer Created (completed or
// cancelled, perhaps by a concurrent transaction that has committed since):
// the caller then reads the order and answers with it. A claimed order
// must be finished with FinishOrder in the same transaction.
func (tx *Tx) ClaimOrder(ctx context.Context, id string, now time.Time) (bool, error) {
	if !ValidID(id) {
		return false, ErrNotFound
	}
	res, err := tx.tx.ExecContext(ctx, `UPDATE orders SET status = 'Completed', completed_at = $3
		WHERE tenant_id = $1 AND id = $2 AND status = 'Created'`, tx.tenant, id, ts(now))
	if err != nil {
		return false, fmt.Errorf("store: claim order %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: claim order %s: %w", id, err)
	}
	return n == 1, nil
}

// FinishOrder records what the completion of claimed order id created.
func (tx *Tx) FinishOrder(ctx context.Context, id, subscriberID, agreementID, subscriptionID string) error {
	res, err := tx.tx.ExecContext(ctx, `UPDATE orders SET subscriber_id = $3, payment_agreement_id = $4, subscription_id = $5
		WHERE tenant_id = $1 AND id = $2 AND status = 'Completed'`, tx.tenant, id, subscriberID, agreementID, subscriptionID)
	if err != nil {
		return fmt.Errorf("store: finish order %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: finish order %s: %w", id, err)
	} else if n != 1 {
		return fmt.Errorf("store: finish order %s: not claimed: %w", id, ErrConflict)
	}
	return nil
}

// InsertSubscriber is CreateSubscriber in the transaction: the same
// number assignment and the same uniqueness errors (ErrExternalIDTaken,
// ErrSubscriberNumberTaken), after which the transaction must roll back.
func (tx *Tx) InsertSubscriber(ctx context.Context, sub Subscriber, now time.Time) (Subscriber, error) {
	created, err := insertSubscriber(ctx, tx, sub, tx.eventSource(SourceOrder), now, now)
	if err != nil {
		return Subscriber{}, fmt.Errorf("store: create subscriber: %w", err)
	}
	return created, nil
}

// OrderSubscriber reads subscriber id in the transaction, or ErrNotFound.
func (tx *Tx) OrderSubscriber(ctx context.Context, id string) (Subscriber, error) {
	if !ValidID(id) {
		return Subscriber{}, ErrNotFound
	}
	sub, err := scanSubscriber(tx.tx.QueryRowContext(ctx,
		`SELECT `+subscriberColumns+` FROM subscribers WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
	if err != nil {
		return Subscriber{}, fmt.Errorf("store: subscriber %s: %w", id, notFound(err))
	}
	return sub, nil
}

// OrderOrganization reads organization id in the transaction, or
// ErrNotFound.
func (tx *Tx) OrderOrganization(ctx context.Context, id string) (Organization, error) {
	if !ValidID(id) {
		return Organization{}, ErrNotFound
	}
	o, err := scanOrganization(tx.tx.QueryRowContext(ctx,
		`SELECT `+organizationColumns+` FROM organizations WHERE tenant_id = $1 AND id = $2`, tx.tenant, id))
	if err != nil {
		return Organization{}, fmt.Errorf("store: organization %s: %w", id, notFound(err))
	}
	return o, nil
}

// LivePaymentAgreement is Store.LivePaymentAgreement in the transaction,
// holding the agreement against a concurrent delete until the transaction
// ends (see Tx.forShare).
func (tx *Tx) LivePaymentAgreement(ctx context.Context, subscriberID, id string) (PaymentAgreement, error) {
	return livePaymentAgreement(ctx, tx.tx, tx.tenant, subscriberID, id, tx.forShare())
}

// SetInvoiceContact makes c the Invoice contact of subscriber sub (as read
// in this transaction), replacing the one it had, and returns the
// subscriber as stored.
func (tx *Tx) SetInvoiceContact(ctx context.Context, sub Subscriber, c Contact, now time.Time) (Subscriber, error) {
	c.Role = ContactInvoice
	contacts := make([]Contact, 0, len(sub.Contacts)+1)
	replaced := false
	for _, old := range sub.Contacts {
		if old.Role == ContactInvoice {
			old, replaced = c, true
		}
		contacts = append(contacts, old)
	}
	if !replaced {
		contacts = append(contacts, c)
	}
	b, err := json.Marshal(contacts)
	if err != nil {
		return Subscriber{}, fmt.Errorf("store: encode contacts: %w", err)
	}
	out, err := scanSubscriber(tx.tx.QueryRowContext(ctx, `UPDATE subscribers SET contacts = $3, updated_at = $4
		WHERE tenant_id = $1 AND id = $2 RETURNING `+subscriberColumns, tx.tenant, sub.ID, string(b), ts(now)))
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Subscriber{}, fmt.Errorf("store: set invoice contact of subscriber %s: %w", sub.ID, err)
	}
	if err := tx.AddEvents(ctx, subscriberEvents(&sub, &out, SourceOrder, now)); err != nil {
		return Subscriber{}, err
	}
	return out, nil
}
