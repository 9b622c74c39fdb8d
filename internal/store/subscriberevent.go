package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Events about subscribers and their contacts, recorded in the transaction
// that writes the change (docs/WEBHOOKS.md). A subscriber's own details
// (name, e-mail, phone, address, country) are its primary contact; its
// Invoice and Delivery contacts are the others.
const (
	EventSubscriberCreated = "SubscriberCreated"
	EventSubscriberDeleted = "SubscriberDeleted"
	// A subscriber asked to have their data deleted, and the merchant
	// answered (internal/privacy).
	EventSubscriberDeletionRequested = "SubscriberDeletionRequested"
	EventSubscriberDeletionResolved  = "SubscriberDeletionResolved"
	EventSubscriberContactCreated    = "SubscriberContactCreated"
	EventSubscriberContactUpdated    = "SubscriberContactUpdated"
	EventSubscriberContactDeleted    = "SubscriberContactDeleted"
)

// Where a subscriber change came from: the source of its contact events.
const (
	// SourceAPI: the subscriber endpoints (or a direct store call).
	SourceAPI = "Api"
	// SourceOrder: completing an order (a new subscriber, or the order's
	// invoice contact).
	SourceOrder = "Order"
	// SourceImport: kadens import (internal/tenantimport), which sets it on
	// every batch's transaction.
	SourceImport = "Import"
)

// SetEventSource names where the subscriber changes of this transaction
// come from (SourceImport for an import's batch): the source of their
// contact events, instead of the default of the method that writes them
// (Order for InsertSubscriber, Api for UpdateSubscriber).
func (tx *Tx) SetEventSource(source string) { tx.source = source }

// eventSource is the source set on tx, else def.
func (tx *Tx) eventSource(def string) string {
	if tx.source != "" {
		return tx.source
	}
	return def
}

// ContactRolePrimary is the role of a subscriber's primary contact in
// contact events: its own details, not an entry of Contacts.
const ContactRolePrimary ContactRole = "Primary"

// SubscriberEventData is the data of SubscriberCreated and
// SubscriberDeleted.
type SubscriberEventData struct {
	SubscriberID     string `json:"subscriberId"`
	SubscriberNumber int64  `json:"subscriberNumber"`
	// ExternalID is null when the subscriber has none.
	ExternalID *string `json:"externalId"`
	Source     string  `json:"source,omitempty"`
}

// ContactEventData is the data of the SubscriberContact events.
type ContactEventData struct {
	SubscriberID string `json:"subscriberId"`
	// ContactID is stable for the life of the contact: the subscriber's
	// id for the primary contact, else ContactID(subscriberID, role).
	ContactID string      `json:"contactId"`
	IsPrimary bool        `json:"isPrimary"`
	Role      ContactRole `json:"role"`
	// Source is where the change came from (SourceAPI, SourceOrder);
	// left out of SubscriberContactDeleted.
	Source string `json:"source,omitempty"`
}

// ContactID is the id of subscriber subscriberID's contact with role: a
// name-based (version 5) uuid of the two, since a subscriber has at most
// one contact per role. The primary contact's id is the subscriber's.
func ContactID(subscriberID string, role ContactRole) string {
	if role == ContactRolePrimary {
		return subscriberID
	}
	ns, err := uuid.Parse(subscriberID)
	if err != nil {
		ns = uuid.Nil
	}
	return uuid.NewSHA1(ns, []byte("contact/"+string(role))).String()
}

func externalIDOf(s *Subscriber) *string {
	if s.ExternalID == "" {
		return nil
	}
	id := s.ExternalID
	return &id
}

// primary is the primary contact of a subscriber, for comparing.
type primary struct {
	Name, Email, Phone, Country string
	Address                     Address
}

// subscriberEvents are the events of a change of a subscriber from before
// to after (nil before: created; nil after: deleted), at business time at:
// SubscriberCreated first, then contacts created, updated and deleted,
// SubscriberDeleted last.
func subscriberEvents(before, after *Subscriber, source string, at time.Time) []NewEvent {
	var (
		events []NewEvent
		sub    *Subscriber
	)
	if after != nil {
		sub = after
	} else {
		sub = before
	}
	subject := "/subscriber/" + sub.ID
	if before == nil {
		events = append(events, NewEvent{Type: EventSubscriberCreated, Subject: subject, At: at,
			Data: SubscriberEventData{SubscriberID: sub.ID, SubscriberNumber: sub.SubscriberNumber,
				ExternalID: externalIDOf(sub), Source: source}})
	}
	// Values are comparable structs: Contact, or primary.
	contacts := func(s *Subscriber) map[ContactRole]any {
		out := map[ContactRole]any{}
		if s == nil {
			return out
		}
		out[ContactRolePrimary] = primary{Name: s.Name, Email: s.Email, Phone: s.Phone, Country: s.Country, Address: s.Address}
		for _, c := range s.Contacts {
			out[c.Role] = c
		}
		return out
	}
	old, cur := contacts(before), contacts(after)
	for _, role := range []ContactRole{ContactRolePrimary, ContactInvoice, ContactDelivery} {
		o, hadOld := old[role]
		n, hasNew := cur[role]
		data := ContactEventData{SubscriberID: sub.ID, ContactID: ContactID(sub.ID, role),
			IsPrimary: role == ContactRolePrimary, Role: role, Source: source}
		switch {
		case hasNew && !hadOld:
			events = append(events, NewEvent{Type: EventSubscriberContactCreated, Subject: subject, At: at, Data: data})
		case hasNew && n != o:
			events = append(events, NewEvent{Type: EventSubscriberContactUpdated, Subject: subject, At: at, Data: data})
		case hadOld && !hasNew:
			data.Source = ""
			events = append(events, NewEvent{Type: EventSubscriberContactDeleted, Subject: subject, At: at, Data: data})
		}
	}
	if after == nil {
		events = append(events, NewEvent{Type: EventSubscriberDeleted, Subject: subject, At: at,
			Data: SubscriberEventData{SubscriberID: sub.ID, SubscriberNumber: sub.SubscriberNumber,
				ExternalID: externalIDOf(sub)}})
	}
	return events
}

// businessTime is when a change made at wall time now happened on the
// tenant's clock, for its events' eventTime: a test tenant's clock (its
// creation time until it is first advanced), else now. The subscriber
// endpoints pass wall time (it is the records' createdAt and updatedAt),
// while every event carries business time.
func (tx *Tx) businessTime(ctx context.Context, now time.Time) (time.Time, error) {
	t, err := scanTenant(tx.queryRow(ctx, `SELECT `+tenantColumns+` FROM tenants WHERE id = $1`, tx.tenant))
	if err != nil {
		return time.Time{}, fmt.Errorf("store: tenant %s: %w", tx.tenant, notFound(err))
	}
	if !t.Test {
		return now, nil // as given: the records' own createdAt and updatedAt
	}
	return t.Now(now), nil
}

// Events about a subscription's vacation stops (internal/delivery,
// docs/PRINT.md), subject /subscription/{id}/deliverystop/{stopId}. They are
// named here, in the store's catalog of kinds, so that webhook delivery
// can offer them without importing the print wing.
const (
	EventDeliveryStopCreated = "DeliveryStopCreated"
	EventDeliveryStopChanged = "DeliveryStopChanged"
	EventDeliveryStopDeleted = "DeliveryStopDeleted"
)

// EventDeliveryAddressChanged is the one kind for a delivery address made,
// changed or deleted (its data's action says which), subject
// /subscription/{id}/deliveryaddress/{addressId}: a carrier's system
// reacts to any of them by reading the address again.
const EventDeliveryAddressChanged = "DeliveryAddressChanged"

// EventDistributionListAvailable: a day's distribution list was published
// (internal/delivery, docs/PRINT.md), subject /distribution/{date}.
const EventDistributionListAvailable = "DistributionListAvailable"
