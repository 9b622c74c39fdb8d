package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
	"github.com/kadens/kadens/internal/webhook"
)

// WebhookSecretHeader carries a generated signing secret in the answer to
// POST /webhook, the only time it is shown.
const WebhookSecretHeader = "Webhook-Secret"

// WebhookStatusHeader tells the answer to POST and PUT /webhook whether the
// handshake validated the endpoint.
const WebhookStatusHeader = "Webhook-Status"

// WebhookStatusReasonHeader is the warning of an answer to POST and PUT
// /webhook that leaves the registration Pending: the registration's
// statusReason (what the validation event got back, and what still proves
// ownership), in printable ASCII.
const WebhookStatusReasonHeader = "Webhook-Status-Reason"

// manualValidationTTL is how long a manual validation URL works.
const manualValidationTTL = webhook.WebhookValidationTTL

// EventKind is a kind of event a webhook can receive.
type EventKind string

// Enum lists the kinds for the OpenAPI document.
func (EventKind) Enum() []any {
	out := make([]any, len(webhook.Kinds))
	for i, k := range webhook.Kinds {
		out[i] = k
	}
	return out
}

// WebhookInput is the body of POST and PUT /webhook.
type WebhookInput struct {
	URL        *string     `json:"url" required:"true" format:"uri" example:"https://example.com/kadens/events" description:"http or https; must not resolve to a loopback, private or link-local address."`
	EventTypes []EventKind `json:"eventTypes" required:"true" minItems:"1" description:"The kinds to receive; at least one, no wildcard."`
	Format     *string     `json:"format" enum:"EventGrid,CloudEvents" default:"EventGrid" description:"EventGrid: a JSON array of events per POST. CloudEvents: one CloudEvents 1.0 event per POST (structured JSON)."`
	Secret     *string     `json:"secret" description:"Signing secret, whsec_ followed by the base64 of 24 to 64 bytes. Generated when left out on POST (and returned once, in the Webhook-Secret header); kept when left out on PUT."`
	// DisableValidation skips the handshake: the registration is Validated at once.
	DisableValidation *bool `json:"disableValidation" description:"Skip the validation handshake; the registration receives events at once."`
}

type webhookUpdate struct {
	apikit.IDParam
	WebhookInput
}

type deliveryListParams struct {
	apikit.IDParam
	apikit.ListParams
	Status string `query:"status" enum:"Pending,Delivered,Failed" description:"Only deliveries with this status."`
}

type deliveryIDParams struct {
	apikit.IDParam
	DeliveryID string `path:"deliveryId" format:"uuid"`
}

// WebhookValidated answers a manual validation.
type WebhookValidated struct {
	ID     string `json:"id"`
	Status string `json:"status" example:"Validated"`
}

// webhookPayloads documents the data of every event kind.
const webhookPayloads = `

Every delivery is a POST signed per Standard Webhooks (headers webhook-id, webhook-timestamp, webhook-signature
"v1,<base64 HMAC-SHA256 of id.timestamp.body>" with the base64-decoded part of the secret after whsec_) and carries
S4-TenantId. webhook-id is the delivery id, the same on every retry. EventGrid bodies are an array of
{id, topic, subject, eventType, eventTime, data, dataVersion, metadataVersion}; CloudEvents bodies are one
{specversion, id, source, type, subject, time, datacontenttype, data}. Payloads are light (ids, and the few facts
INFO-Subscription's receivers read: invoice number, due date, amount, currency); fetch the resources for more.

| eventType | subject | data |
|---|---|---|
| SubscriptionCreated, SubscriptionCancelled, SubscriptionDeactivated, SubscriptionCancellationScheduled, SubscriptionCancellationRemoved | /subscription/{id} | subscriptionId, subscriberId, organizationId |
| OrderProcessed | /order/{id} | orderId, subscriberId, subscriptionId, organizationId, paymentAgreementId, templatePackageId, firstPeriodCreated (always true) |
| InvoiceIssued, InvoicePaid | /invoice/{id} | invoiceId, paymentDemandId, subscriberId, subscriptionId, organizationId, invoiceNumber, number (the same), dueDate, dueAt, amount (gross), currency |
| CreditNoteIssued | /creditnote/{id} | creditNoteId, invoiceId, paymentDemandId, subscriberId, subscriptionId, organizationId, creditNoteNumber, number (the same), invoiceNumber, amount (gross), currency |
| ReminderIssued | /invoice/{id} | reminderId, paymentDemandId, invoiceId, subscriberId, reminderNumber |
| PaymentCompleted, PaymentFailed | /payment/{id} | paymentId, paymentDemandId, invoiceId, subscriberId |
| PaymentAgreementCreated, PaymentAgreementDeleted | /paymentagreement/{id} | paymentAgreementId, subscriberId, providerType |
| PriceChangeNotified | /subscription/{id} | priceChangeId, planChangeId, subscriptionId, subscriberId, organizationId, currentPrice, newPrice, currency, effectiveFrom |
| PeppolDeliveryPending, PeppolDeliverySent, PeppolDeliveryDelivered, PeppolDeliveryFailed | /invoice/{id} or /creditnote/{id} | deliveryId, documentKind, documentId, invoiceId, recipient, status, messageId, failureReason |
| SubscriberCreated, SubscriberDeleted | /subscriber/{id} | subscriberId, subscriberNumber, externalId (null when none); source (Api or Order) on SubscriberCreated |
| SubscriberDeletionRequested, SubscriberDeletionResolved | /subscriber/{id} | deletionRequestId, subscriberId, status (Open; Completed or Rejected) |
| SubscriberContactCreated, SubscriberContactUpdated, SubscriberContactDeleted | /subscriber/{id} | subscriberId, contactId, isPrimary, role (Primary, Invoice or Delivery); source (Api or Order) except on SubscriberContactDeleted. The primary contact is the subscriber's own details; its contactId is the subscriber id |
| UserAuthorizationGranted, UserAuthorizationRevoked | /authorizations/user/{userId} | userId, subscriberId, subscriberAccountId, sourceType, sourceId, productIds |
| DeliveryStopCreated, DeliveryStopChanged, DeliveryStopDeleted | /subscription/{id}/deliverystop/{stopId} (the series' last period) | deliveryStopId, subscriptionId, subscriberId, firstDate, lastDate, missedEditions, creditedEditions (docs/PRINT.md) |
| DeliveryAddressChanged | /subscription/{id}/deliveryaddress/{addressId} (the series' last period) | deliveryAddressId, action (Created, Changed or Deleted), subscriptionId, subscriberId, kind (Temporary or Permanent), firstDate, lastDate (null for Permanent), postalCode, country, carrier, route (docs/PRINT.md) |
| DistributionListAvailable | /distribution/{date} | date, revision (1, raised by each publication of the day), copies, carriers (carrier, copies), publishedAt (docs/PRINT.md) |
| Microsoft.EventGrid.SubscriptionValidationEvent (EventGrid format) or WebhookValidation (CloudEvents format); handshake only | /webhook/{id} | validationCode, validationUrl |

A failed attempt (timeout or non-2xx) is retried after 10 s, 30 s, 1 min, 5 min, 10 min, 30 min, 1 h, then hourly up to
24 h; then the delivery is Failed and can be redelivered.`

func (s *Server) webhookRoutes() {
	const tag = "Webhook"
	s.add(route{method: http.MethodPost, path: "/webhook", id: "createWebhook", tag: tag,
		summary: "Register a webhook endpoint",
		desc: "Unless disableValidation is set, Kadens posts a validation event (data {validationCode, validationUrl}) to " +
			"the url before answering: in the EventGrid format Azure Event Grid's (eventType " +
			"Microsoft.EventGrid.SubscriptionValidationEvent, header aeg-event-type: SubscriptionValidation; events carry " +
			"aeg-event-type: Notification), in the CloudEvents format type WebhookValidation. The endpoint proves ownership by answering 2xx with " +
			"{\"validationResponse\": \"<validationCode>\"}; the registration is then Validated (Webhook-Status header). " +
			"Otherwise it stays Pending and receives no events until someone opens the validationUrl (GET, within 5 minutes; " +
			"also while answering the handshake, as Event Grid receivers may) or the registration is updated. The signing secret is returned once, in the Webhook-Secret header, when it was " +
			"generated (not on an Idempotency-Key replay: supply your own secret if you need retries to see it)." + webhookPayloads,
		request: new(WebhookInput),
		responses: common(response{status: http.StatusCreated, body: "", desc: "Created; the body is the new id (a JSON string).",
			headers: map[string]string{"Location": "Address of the new resource.",
				WebhookSecretHeader:       "The generated signing secret (whsec_…), shown only here.",
				WebhookStatusHeader:       "Validated when the handshake succeeded (or was disabled), else Pending.",
				WebhookStatusReasonHeader: "Only when Pending: the warning that the registration receives no events yet, why (what the validation event got back) and what proves ownership; the registration's statusReason."}}),
		handle: s.createWebhook})
	s.add(route{method: http.MethodGet, path: "/webhook", id: "listWebhooks", tag: tag,
		summary: "List webhook registrations", request: new(apikit.ListParams),
		responses: common(respList(new([]webhook.Webhook))),
		handle:    s.listWebhooks})
	s.add(route{method: http.MethodGet, path: "/webhook/{id}", id: "getWebhook", tag: tag,
		summary: "Get a webhook registration", desc: "The secret is never shown again.", request: new(apikit.IDParam),
		responses: common(response{status: http.StatusOK, body: new(webhook.Webhook)}, respNotFound), handle: apikit.GetOne(func(ctx context.Context, id string) (webhook.Webhook, error) {
			return s.app.Webhook(ctx, id)
		})})
	s.add(route{method: http.MethodPut, path: "/webhook/{id}", id: "updateWebhook", tag: tag,
		summary: "Replace a webhook registration",
		desc: "A new url (or a registration still Pending) goes through the validation handshake again, unless " +
			"disableValidation is set; until it passes the registration receives nothing. A secret left out is kept.",
		request: new(webhookUpdate),
		responses: common(response{status: http.StatusNoContent, desc: "Done.",
			headers: map[string]string{WebhookStatusHeader: "Validated or Pending.",
				WebhookStatusReasonHeader: "Only when Pending: why, as the registration's statusReason."}}, respNotFound),
		handle: s.updateWebhook})
	s.add(route{method: http.MethodDelete, path: "/webhook/{id}", id: "deleteWebhook", tag: tag,
		summary: "Delete a webhook registration", desc: "Its deliveries are deleted with it.", request: new(apikit.IDParam),
		responses: common(respNoContent, respNotFound), handle: s.deleteWebhook})
	s.add(route{method: http.MethodGet, path: "/webhook/{id}/deliveries", id: "listWebhookDeliveries", tag: tag,
		summary:   "List a webhook's deliveries with their attempts",
		desc:      "Oldest first. Each attempt records when it was made, the status code (null without an answer), latency and error.",
		request:   new(deliveryListParams),
		responses: common(respList(new([]webhook.WebhookDelivery)), respNotFound),
		handle:    s.listWebhookDeliveries})
	s.add(route{method: http.MethodPost, path: "/webhook/{id}/deliveries/{deliveryId}/redeliver", id: "redeliverWebhookDelivery", tag: tag,
		summary: "Send a delivery again",
		desc: "Queues the delivery now, whatever its status (e.g. Failed after its retries ran out); its retry schedule " +
			"starts over. The webhook-id stays the same.",
		request:   new(deliveryIDParams),
		responses: common(response{status: http.StatusAccepted, desc: "Queued."}, respNotFound),
		handle:    s.redeliverWebhookDelivery})
}

// webhookFromInput validates in; secret may be left empty.
func (s *Server) webhookFromInput(ctx context.Context, in WebhookInput) (webhook.Webhook, error) {
	var (
		errs validation.Errors
		w    webhook.Webhook
	)
	w.URL = apikit.Trimmed(in.URL)
	if w.URL == "" {
		errs.Add("url", "is required")
	} else if err := s.egress.CheckURL(ctx, w.URL); err != nil {
		// Unlike a bank's, a webhook's host must resolve now: the
		// validation handshake is sent to it next.
		errs.Add("url", "%s", err)
	}
	if len(in.EventTypes) == 0 {
		errs.Add("eventTypes", "must list at least one event kind: %s", strings.Join(webhook.Kinds, ", "))
	}
	seen := map[string]bool{}
	for i, k := range in.EventTypes {
		kind := canonicalKind(strings.TrimSpace(string(k)))
		switch {
		case kind == "":
			errs.Add(fmt.Sprintf("eventTypes[%d]", i), "%q is not an event kind; known kinds: %s", k, strings.Join(webhook.Kinds, ", "))
		case !seen[kind]:
			seen[kind] = true
			w.EventTypes = append(w.EventTypes, kind)
		}
	}
	w.Format = apikit.OneOf(&errs, "format", in.Format, webhook.FormatEventGrid, webhook.FormatEventGrid, webhook.FormatCloudEvents)
	if in.Secret != nil {
		w.Secret = strings.TrimSpace(*in.Secret)
		if _, err := webhook.SecretKey(w.Secret); err != nil {
			errs.Add("secret", "%s", err)
		}
	}
	w.DisableValidation = in.DisableValidation != nil && *in.DisableValidation
	return w, errs.Err()
}

func canonicalKind(k string) string {
	known, _ := apikit.Canonical(k, webhook.Kinds...)
	return known
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// pendingValidation issues a manual validation token; it returns the
// stored half and the URL and code to send.
func (s *Server) pendingValidation(now time.Time) (*webhook.WebhookValidation, string, string) {
	token := webhook.NewToken()
	return &webhook.WebhookValidation{TokenHash: hashToken(token), IssuedAt: now},
		s.baseURL + "/webhook/validate?token=" + url.QueryEscape(token), webhook.NewToken()
}

// handshake sends the validation event and validates the registration when
// the endpoint echoes the code; it returns the resulting status and, when
// Pending, the registration's statusReason. A failure is recorded on the
// registration (GET shows it), not only logged.
func (s *Server) handshake(ctx context.Context, w webhook.Webhook, v *webhook.WebhookValidation, validationURL, code string, now time.Time) (status, reason string) {
	tenant, _ := tenancy.From(ctx)
	ok, err := s.webhooks.Handshake(ctx, tenant, w.ID, w.URL, w.Format, w.Secret, code, validationURL, now)
	if ok {
		if err = webhook.Validate(ctx, s.store, w.ID, v.TokenHash, s.now()); err == nil {
			return webhook.WebhookValidated, ""
		}
	} else {
		logger(ctx).InfoContext(ctx, "webhook handshake failed", "webhook", w.ID, "err", err)
		if rerr := webhook.RecordValidationFailure(ctx, s.store, w.ID, v.TokenHash, failureSentence(err)); rerr != nil {
			logger(ctx).WarnContext(ctx, "webhook handshake failure not recorded", "webhook", w.ID, "err", rerr)
		}
	}
	// The endpoint may have opened the validationUrl while it was
	// answering (as Event Grid receivers may), with or without echoing the
	// code: then it is Validated already. Otherwise the registration was
	// changed meanwhile (a PUT with another url runs its own handshake) or
	// the endpoint did not prove ownership.
	cur, rerr := webhook.Registration(ctx, s.store, w.ID)
	switch {
	case rerr == nil && cur.Status == webhook.WebhookValidated:
		return webhook.WebhookValidated, ""
	case rerr == nil && cur.StatusReason != nil:
		return webhook.WebhookPending, *cur.StatusReason
	}
	expires := v.IssuedAt.Add(manualValidationTTL)
	return webhook.WebhookPending, webhook.PendingReason(failureSentence(err), &expires)
}

// failureSentence is err as the start of a sentence of statusReason (at
// most 500 characters); "" for nil.
func failureSentence(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	if len(msg) > 500 {
		msg = strings.ToValidUTF8(msg[:497], "") + "..."
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// setStatusHeaders writes Webhook-Status and, when Pending, the warning
// Webhook-Status-Reason. A header value carries printable ASCII only, so
// anything else in the reason (an international host name) becomes '?'.
func setStatusHeaders(w http.ResponseWriter, status, reason string) {
	w.Header().Set(WebhookStatusHeader, status)
	if status != webhook.WebhookPending || reason == "" {
		return
	}
	b := []byte(reason)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	w.Header().Set(WebhookStatusReasonHeader, string(b))
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) error {
	var in WebhookInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	hook, err := s.webhookFromInput(r.Context(), in)
	if err != nil {
		return err
	}
	generated := hook.Secret == ""
	if generated {
		hook.Secret = webhook.NewSecret()
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	var (
		v                   *webhook.WebhookValidation
		validationURL, code string
	)
	if !hook.DisableValidation {
		v, validationURL, code = s.pendingValidation(now)
	}
	created, err := webhook.Create(r.Context(), s.store, hook, v, s.now())
	if err != nil {
		return err
	}
	status, reason := created.Status, ""
	if v != nil {
		status, reason = s.handshake(r.Context(), created, v, validationURL, code, now)
	}
	if generated {
		w.Header().Set(WebhookSecretHeader, hook.Secret)
	}
	setStatusHeaders(w, status, reason)
	s.created(w, "/webhook/"+created.ID, created.ID)
	return nil
}

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	if err := errs.Err(); err != nil {
		return err
	}
	hooks, next, err := s.app.Webhooks(r.Context(), p)
	if err != nil {
		return err
	}
	if hooks == nil {
		hooks = []webhook.Webhook{}
	}
	s.writeList(w, r, hooks, next)
	return nil
}

func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var in WebhookInput
	if err := apikit.DecodeJSON(r, &in); err != nil {
		return err
	}
	hook, err := s.webhookFromInput(r.Context(), in)
	if err != nil {
		return err
	}
	hook.ID = id
	old, err := webhook.Registration(r.Context(), s.store, id)
	if err != nil {
		return err
	}
	now, err := s.tenantNow(r.Context())
	if err != nil {
		return err
	}
	var (
		v                   *webhook.WebhookValidation
		validationURL, code string
	)
	if !hook.DisableValidation && (hook.URL != old.URL || old.Status != webhook.WebhookValidated) {
		v, validationURL, code = s.pendingValidation(now)
	}
	updated, err := webhook.Update(r.Context(), s.store, hook, v, s.now())
	if err != nil {
		return err
	}
	status, reason := updated.Status, ""
	if updated.StatusReason != nil {
		reason = *updated.StatusReason
	}
	if v != nil {
		status, reason = s.handshake(r.Context(), updated, v, validationURL, code, now)
	}
	setStatusHeaders(w, status, reason)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := webhook.Delete(r.Context(), s.store, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listWebhookDeliveries(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	var errs validation.Errors
	p := apikit.Page(r, &errs)
	f := webhook.DeliveryFilter{}
	st := queryFold(r.URL.Query(), "status")
	f.Status = apikit.OneOf(&errs, "status", &st, "", webhook.DeliveryPending, webhook.DeliveryDelivered, webhook.DeliveryFailed)
	if err := errs.Err(); err != nil {
		return err
	}
	list, next, err := s.app.WebhookDeliveries(r.Context(), id, f, p)
	if err != nil {
		return err
	}
	if list == nil {
		list = []webhook.WebhookDelivery{}
	}
	s.writeList(w, r, list, next)
	return nil
}

func (s *Server) redeliverWebhookDelivery(w http.ResponseWriter, r *http.Request) error {
	id, err := apikit.PathID(r, "id")
	if err != nil {
		return err
	}
	deliveryID, err := apikit.PathID(r, "deliveryId")
	if err != nil {
		return err
	}
	if err := s.app.RedeliverWebhook(r.Context(), id, deliveryID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// WebhookValidation serves GET /webhook/validate?token=…, the manual
// validation URL sent in a validation event. It needs no credentials (the
// unguessable token is the credential), so it is mounted by the server
// beside the API, outside the authenticated routes and the OpenAPI document
// (whose createWebhook description explains it). It works for 5 minutes
// after the event was sent, on the tenant's clock; after that, or for an
// unknown or used token, it answers an empty 404.
func (s *Server) WebhookValidation() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.validateWebhook(w, r); err != nil {
			writeError(w, r, err)
		}
	})
}

func (s *Server) validateWebhook(w http.ResponseWriter, r *http.Request) error {
	token := r.URL.Query().Get("token")
	if token == "" {
		return store.ErrNotFound
	}
	hash := hashToken(token)
	tenant, id, issued, err := webhook.ByValidationToken(r.Context(), s.store, hash)
	if err != nil {
		return err
	}
	ctx := tenancy.With(r.Context(), tenant)
	now, err := s.tenantNow(ctx)
	if err != nil {
		return err
	}
	if now.Sub(issued) > manualValidationTTL {
		return store.ErrNotFound
	}
	if err := webhook.Validate(ctx, s.store, id, hash, s.now()); err != nil {
		return err
	}
	apikit.WriteJSON(w, http.StatusOK, WebhookValidated{ID: id, Status: webhook.WebhookValidated})
	return nil
}
