package peppol

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kadens/kadens/internal/period"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
)

// Document type and process ids of BIS Billing 3.0 (Peppol code lists).
const (
	DocTypeInvoice    = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##" + CustomizationID + "::2.1"
	DocTypeCreditNote = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote##" + CustomizationID + "::2.1"
	DocTypeScheme     = "busdox-docid-qns"
	ProcessID         = ProfileID
	ProcessScheme     = "cenbii-procid-ubl"
)

// Message is one document handed to an access point.
type Message struct {
	// IdempotencyKey is the delivery's id: the same on every attempt, so the
	// receiving side can recognize a repeated hand-over.
	IdempotencyKey string
	Kind           string // PeppolInvoice or PeppolCreditNote
	Number         string // the document's number
	Sender         ParticipantID
	Receiver       ParticipantID
	DocumentType   string
	Body           []byte // the UBL document
}

// Receipt is what an adapter learned from a hand-over or a status query.
type Receipt struct {
	MessageID string
	// Status is PeppolSent (accepted, on its way), PeppolDelivered or
	// PeppolFailed.
	Status string
	Reason string
	// Final: no status to ask for later (a directory drop's Sent).
	Final bool
}

// PermanentError is a refusal that trying again cannot change (the access
// point rejected the document); the delivery fails at once.
type PermanentError struct{ Reason string }

func (e *PermanentError) Error() string { return e.Reason }

// Sender hands documents to the Peppol network. Implementations must treat
// a Message with an IdempotencyKey they have seen as the same hand-over
// (answering its receipt), never as a second document: a process that dies
// between Send and recording its receipt sends again after restarting.
type Sender interface {
	// Name is the store's adapter name (AccessPoint, Directory).
	Name() string
	Send(ctx context.Context, m Message) (Receipt, error)
	// Status asks what became of an earlier hand-over.
	Status(ctx context.Context, messageID string) (Receipt, error)
}

// Deliverer sends the documents of EHF/OIO subscriptions through a Sender,
// recording each delivery in the store. Several processes may run one
// each: a delivery is claimed in the database before every attempt.
type Deliverer struct {
	Store  *store.Store
	Sender Sender
	Log    *slog.Logger
	// Now is the wall clock (retries are real time, not the tenant's).
	Now func() time.Time
	// Lease bounds an attempt: a claim older than this is taken to belong
	// to a process that died. Default 2 minutes.
	Lease time.Duration
	// Backoff is the wait after the first failed attempt; it doubles per
	// attempt up to MaxBackoff. Defaults 30 s and 1 h.
	Backoff, MaxBackoff time.Duration
	// MaxAttempts before a delivery fails. Default 12 (about 7 hours).
	MaxAttempts int
	// PollEvery is how often a Sent delivery's status is asked for, for at
	// most PollFor after it was recorded. Defaults 5 minutes and 72 hours.
	PollEvery, PollFor time.Duration

	once sync.Once
}

// defaults fills in the unset fields, once: Run and Deliver may run at the
// same time.
func (d *Deliverer) defaults() { d.once.Do(d.setDefaults) }

func (d *Deliverer) setDefaults() {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Lease <= 0 {
		d.Lease = 2 * time.Minute
	}
	if d.Backoff <= 0 {
		d.Backoff = 30 * time.Second
	}
	if d.MaxBackoff <= 0 {
		d.MaxBackoff = time.Hour
	}
	if d.MaxAttempts <= 0 {
		d.MaxAttempts = 12
	}
	if d.PollEvery <= 0 {
		d.PollEvery = 5 * time.Minute
	}
	if d.PollFor <= 0 {
		d.PollFor = 72 * time.Hour
	}
}

// Deliver sends document documentID of kind documentKind (PeppolInvoice
// or PeppolCreditNote) of tenant through the network if it was issued
// on an EHF or OIO payment agreement (a credit note: if its invoice was),
// and does nothing otherwise. It is idempotent: the first call records a
// Pending delivery and makes the first attempt; later calls, from any
// process, find the delivery and only help it along when it is due. A
// failed attempt is not an error (the delivery waits for its retry, see
// Run); an error means nothing could be recorded and the caller should call
// again.
func (d *Deliverer) Deliver(ctx context.Context, tenant, documentKind, documentID string) error {
	d.defaults()
	ctx = tenancy.With(ctx, tenant)
	doc, err := d.load(ctx, documentKind, documentID)
	if err != nil {
		return err
	}
	if doc == nil {
		return nil
	}
	del, _, err := CreateDelivery(ctx, d.Store, PeppolDelivery{DocumentKind: documentKind, DocumentID: documentID,
		InvoiceID: doc.invoice.ID, Recipient: doc.buyer.String(), Adapter: d.Sender.Name()}, d.Now())
	if err != nil {
		return fmt.Errorf("peppol: deliver %s %s: %w", documentKind, documentID, err)
	}
	return d.attempt(ctx, del.ID)
}

// networkDoc is a document to send and what its UBL needs.
type networkDoc struct {
	invoice    store.Invoice
	creditNote *store.CreditNote
	buyer      ParticipantID
	loc        *time.Location
}

// load reads the document and, when it goes through the network, its
// recipient; nil when it does not.
func (d *Deliverer) load(ctx context.Context, kind, id string) (*networkDoc, error) {
	var doc networkDoc
	switch kind {
	case PeppolInvoice:
		inv, err := d.Store.Invoice(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("peppol: %s %s: %w", kind, id, err)
		}
		doc.invoice = inv
	case PeppolCreditNote:
		cn, err := d.Store.CreditNote(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("peppol: %s %s: %w", kind, id, err)
		}
		inv, err := d.Store.Invoice(ctx, cn.InvoiceID)
		if err != nil {
			return nil, fmt.Errorf("peppol: invoice of credit note %s: %w", id, err)
		}
		doc.invoice, doc.creditNote = inv, &cn
	default:
		return nil, fmt.Errorf("peppol: unknown document kind %q", kind)
	}
	buyer, ok, err := Recipient(ctx, d.Store, doc.invoice)
	if err != nil || !ok {
		return nil, err
	}
	doc.buyer = buyer
	doc.loc = time.UTC
	if org, err := d.Store.Organization(ctx, doc.invoice.OrganizationID); err == nil {
		if loc, err := period.LoadZone(org.TimeZone); err == nil {
			doc.loc = loc
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("peppol: organization of invoice %s: %w", doc.invoice.ID, err)
	}
	return &doc, nil
}

// Recipient is the Peppol participant invoice inv goes to: the one its EHF
// or OIO payment agreement names. ok is false for invoices on other
// agreements.
func Recipient(ctx context.Context, st *store.Store, inv store.Invoice) (ParticipantID, bool, error) {
	if inv.PaymentAgreementID == nil {
		return ParticipantID{}, false, nil
	}
	a, err := st.PaymentAgreement(ctx, *inv.PaymentAgreementID)
	if err != nil {
		return ParticipantID{}, false, fmt.Errorf("peppol: payment agreement of invoice %s: %w", inv.ID, err)
	}
	if a.ProviderType != store.ProviderEHF && a.ProviderType != store.ProviderOIO {
		return ParticipantID{}, false, nil
	}
	p, err := AgreementParticipant(a.ProviderType, a.ProviderAgreementReference)
	if err != nil {
		return ParticipantID{}, false, fmt.Errorf("peppol: agreement %s: %w", a.ID, err)
	}
	return p, true, nil
}

// UBL writes the document as Peppol BIS Billing 3.0.
func (doc *networkDoc) UBL() ([]byte, error) {
	opt := Options{Buyer: doc.buyer, Location: doc.loc}
	if doc.creditNote != nil {
		return CreditNote(*doc.creditNote, doc.invoice, opt)
	}
	return Invoice(doc.invoice, opt)
}

// Run attempts due deliveries (first sends, retries, status questions) of
// every tenant until ctx ends, looking every interval.
func (d *Deliverer) Run(ctx context.Context, interval time.Duration) {
	d.defaults()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := d.RunDue(ctx); err != nil && ctx.Err() == nil {
			d.Log.WarnContext(ctx, "peppol deliveries", slog.String("err", err.Error()))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RunDue attempts the deliveries due now, and reports how many it looked at.
func (d *Deliverer) RunDue(ctx context.Context) (int, error) {
	d.defaults()
	due, err := DueDeliveries(ctx, d.Store, d.Now(), 100)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, dd := range due {
		if err := d.attempt(tenancy.With(ctx, dd.TenantID), dd.ID); err != nil {
			errs = append(errs, err)
		}
	}
	return len(due), errors.Join(errs...)
}

// attempt claims delivery id and makes one attempt: sending a Pending
// document or asking about a Sent one. Not having the claim (another
// process has it, or it is not due) is no error.
func (d *Deliverer) attempt(ctx context.Context, id string) error {
	token := store.NewID()
	del, ok, err := ClaimDelivery(ctx, d.Store, id, token, d.Now(), d.Lease)
	if err != nil || !ok {
		return err
	}
	var out PeppolOutcome
	if del.Status == PeppolSent {
		out = d.poll(ctx, del)
	} else {
		out = d.send(ctx, del)
	}
	if _, err := FinishAttempt(ctx, d.Store, id, token, out, d.Now()); err != nil {
		return fmt.Errorf("peppol: delivery %s: %w", id, err)
	}
	return nil
}

func (d *Deliverer) send(ctx context.Context, del PeppolDelivery) PeppolOutcome {
	fail := func(reason string) PeppolOutcome {
		return PeppolOutcome{Status: PeppolFailed, Reason: reason}
	}
	doc, err := d.load(ctx, del.DocumentKind, del.DocumentID)
	if err != nil {
		return d.retry(del, fmt.Errorf("read the document: %w", err))
	}
	if doc == nil {
		return fail("the document is not on an EHF or OIO payment agreement")
	}
	body, err := doc.UBL()
	if errors.Is(err, ErrNotRepresentable) {
		return fail(err.Error())
	}
	if err != nil {
		return d.retry(del, err)
	}
	m := Message{IdempotencyKey: del.ID, Kind: del.DocumentKind, Receiver: doc.buyer, Body: body,
		DocumentType: DocTypeInvoice, Number: fmt.Sprint(doc.invoice.InvoiceNumber)}
	if doc.creditNote != nil {
		m.DocumentType, m.Number = DocTypeCreditNote, fmt.Sprint(doc.creditNote.CreditNoteNumber)
	}
	if scheme, ok := countryScheme(doc.invoice.Seller.Country); ok {
		m.Sender = ParticipantID{Scheme: scheme, Value: onlyDigits(doc.invoice.Seller.OrganizationNumber)}
	}
	r, err := d.Sender.Send(ctx, m)
	var perm *PermanentError
	switch {
	case errors.As(err, &perm):
		return fail("refused by the access point: " + perm.Reason)
	case err != nil:
		d.Log.WarnContext(ctx, "peppol send failed", slog.String("delivery", del.ID), slog.Int("attempt", del.Attempts),
			slog.String("err", err.Error()))
		return d.retry(del, err)
	}
	return d.received(del, r)
}

func (d *Deliverer) poll(ctx context.Context, del PeppolDelivery) PeppolOutcome {
	r, err := d.Sender.Status(ctx, del.MessageID)
	if err != nil {
		next := d.nextPoll(del)
		return PeppolOutcome{Status: PeppolSent, Reason: "status unknown: " + err.Error(), Next: next}
	}
	return d.received(del, r)
}

// received turns a receipt into the delivery's next state.
func (d *Deliverer) received(del PeppolDelivery, r Receipt) PeppolOutcome {
	out := PeppolOutcome{Status: r.Status, MessageID: r.MessageID, Reason: r.Reason}
	switch r.Status {
	case PeppolSent:
		if !r.Final {
			out.Next = d.nextPoll(del)
		}
	case PeppolDelivered, PeppolFailed:
	default:
		out.Status, out.Next = PeppolSent, d.nextPoll(del)
	}
	return out
}

func (d *Deliverer) nextPoll(del PeppolDelivery) *time.Time {
	now := d.Now()
	if now.Sub(del.CreatedAt) > d.PollFor {
		return nil
	}
	next := now.Add(d.PollEvery)
	return &next
}

// retry schedules the next attempt after a failure, or fails the delivery
// after MaxAttempts.
func (d *Deliverer) retry(del PeppolDelivery, err error) PeppolOutcome {
	if del.Attempts >= d.MaxAttempts {
		return PeppolOutcome{Status: PeppolFailed,
			Reason: fmt.Sprintf("gave up after %d attempts: %v", del.Attempts, err)}
	}
	wait := d.Backoff
	for i := 1; i < del.Attempts && wait < d.MaxBackoff; i++ {
		wait *= 2
	}
	wait = min(wait, d.MaxBackoff)
	next := d.Now().Add(wait)
	return PeppolOutcome{Status: PeppolPending, Reason: err.Error(), Next: &next}
}
