package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/retries"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/worker"
)

// Options configure a Dispatcher.
type Options struct {
	Store *store.Store
	Log   *slog.Logger
	// Schedule are the delays before the retries of a failed delivery; when
	// they run out the delivery is Failed. Nil means retries.Default.
	Schedule []time.Duration
	// Timeout bounds one attempt (connect, send, answer); default 10 s.
	Timeout time.Duration
	// Egress says which non-public addresses deliveries may reach (tests,
	// local development); the zero value allows public addresses only.
	Egress egress.Policy
	// Concurrency is how many attempts run at once; default 64.
	Concurrency int
	// Batch is the most events one EventGrid message carries; default 100.
	// Events fanned out together share a message (CloudEvents: one each).
	Batch int
	// Poll is how often the dispatcher looks for work it was not woken for
	// (other processes' events, retries that fell due); default 1 s.
	Poll time.Duration
	// Now is the clock of attempts and retries; default time.Now.
	Now func() time.Time
	// Metrics, when set, count attempts by outcome (NewMetrics).
	Metrics *Metrics
}

// Dispatcher turns the events outbox into signed deliveries and retries
// them. Several dispatchers (one per process) may share a PostgreSQL
// database: the store's claims make each attempt one process's.
type Dispatcher struct {
	o      Options
	store  *store.Store
	log    *slog.Logger
	client *http.Client

	wake chan struct{}
	slot chan struct{}

	// queue holds claimed jobs for the Concurrency workers. Up to
	// 3×Concurrency jobs are claimed at once (inflight counts them until
	// done), so workers never wait for the next claim transaction.
	queue    chan DeliveryJob
	stopping atomic.Bool

	mu       sync.Mutex
	inflight int
	due      time.Time // earliest retry this process scheduled

	// w runs the claiming loop, and the workers making attempts as its
	// calls; sendCtx is the attempts' context, ended when Stop's deadline
	// passes.
	w       worker.Workers[DeliveryResult]
	sendCtx context.Context

	// sinceRelease counts events dispatched since memory was last
	// released (run).
	sinceRelease atomic.Int64
}

// dispatchBatch is how many events one fan-out transaction takes.
const dispatchBatch = 512

// releaseAfter is how many dispatched events make the dispatcher release
// memory once it is idle again: a backlog, not everyday traffic.
const releaseAfter = 16 * dispatchBatch

// New builds a dispatcher; Start runs it.
func New(o Options) *Dispatcher {
	if o.Schedule == nil {
		o.Schedule, _ = retries.Parse(retries.Default)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 64
	}
	if o.Batch <= 0 {
		o.Batch = defaultBatch
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Dispatcher{
		o: o, store: o.Store, log: o.Log, client: NewClient(o.Egress, o.Concurrency),
		wake: make(chan struct{}, 1), slot: make(chan struct{}, 1),
	}
}

// NewClient returns the HTTP client of deliveries: no proxy (a proxy would
// dial on the client's behalf), no redirects, and the egress policy's
// dialer, which refuses addresses p does not allow after name resolution,
// so a host that resolved to a public address at registration and to a
// private one later (DNS rebinding) is still refused.
func NewClient(p egress.Policy, conns int) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         p.Dialer(5 * time.Second).DialContext,
			MaxIdleConns:        4 * conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 5 * time.Second,
			ForceAttemptHTTP2:   true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Wake makes the dispatcher look for work now. It never blocks.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Start runs the dispatcher in the background until Stop.
func (d *Dispatcher) Start() {
	ctx, sendCtx := d.w.Start(4*d.o.Concurrency, 512, d.record)
	d.sendCtx = sendCtx
	d.queue = make(chan DeliveryJob, d.capacity())
	d.stopping.Store(false)
	d.store.OnEvents(d.Wake)
	for range d.o.Concurrency {
		d.w.Call(d.worker)
	}
	d.w.Loop(func() { d.run(ctx) })
}

// capacity is how many jobs may be claimed and not yet done.
func (d *Dispatcher) capacity() int { return 3 * d.o.Concurrency }

// worker makes the attempts of queued jobs. Jobs still queued when the
// dispatcher stops are left: their claims lapse and another attempt
// follows.
func (d *Dispatcher) worker() {
	for j := range d.queue {
		if !d.stopping.Load() {
			d.w.Results() <- d.attempt(d.sendCtx, j)
		}
		d.mu.Lock()
		d.inflight--
		d.mu.Unlock()
		select {
		case d.slot <- struct{}{}:
		default:
		}
	}
}

// Stop stops claiming work, waits for attempts in flight until ctx ends
// (then cancels them: they are recorded as failed attempts and retried on
// schedule, by this process after a restart or by another one), and
// records the outcomes. Jobs claimed but not started keep their claim until
// it lapses.
func (d *Dispatcher) Stop(ctx context.Context) error {
	if !d.w.Started() {
		return nil
	}
	d.store.OnEvents(nil)
	err := d.w.Stop(ctx, func() {
		d.stopping.Store(true)
		close(d.queue)
	})
	if err != nil {
		return fmt.Errorf("webhook: stop: attempts still in flight: %w", err)
	}
	return nil
}

// lease is how long a claimed attempt is this process's: the attempt's
// timeout and a margin for recording its outcome.
func (d *Dispatcher) lease() time.Duration { return d.o.Timeout + 30*time.Second }

func (d *Dispatcher) run(ctx context.Context) {
	poll := time.NewTimer(0)
	defer poll.Stop()
	for {
		starved := d.work(ctx)
		if n := d.sinceRelease.Load(); !starved && n >= releaseAfter {
			d.releaseMemory(ctx, n)
		}
		var slot <-chan struct{}
		if starved {
			slot = d.slot
		}
		sleep := d.o.Poll
		d.mu.Lock()
		if !d.due.IsZero() {
			sleep = min(sleep, max(time.Until(d.due), time.Millisecond))
		}
		d.mu.Unlock()
		poll.Reset(sleep)
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-slot:
		case <-poll.C:
		}
	}
}

// releaseMemory hands back the memory a burst of n dispatched events took
// (the backlog of a bulk load, say) once the dispatcher is idle again: the
// writer's SQLite page cache, full of the backlog's pages, and the Go heap
// the fan-out grew. An idle process then stays as small as before the
// burst, whatever its size (docs/PERFORMANCE.md).
func (d *Dispatcher) releaseMemory(ctx context.Context, n int64) {
	d.sinceRelease.Store(0)
	if err := d.store.ReleaseMemory(ctx); err != nil {
		d.logErr(ctx, "webhook: release memory", err)
		return
	}
	debug.FreeOSMemory()
	d.log.Debug("webhook: backlog dispatched, memory released", "events", n)
}

// work dispatches and claims until there is nothing to do now or no free
// slot; it reports whether it stopped for lack of slots.
func (d *Dispatcher) work(ctx context.Context) bool {
	for ctx.Err() == nil {
		free := d.free()
		if free < max(1, d.o.Concurrency/2) {
			return true
		}
		now := d.o.Now()
		d.mu.Lock()
		if !d.due.IsZero() && !now.Before(d.due) {
			d.due = time.Time{}
		}
		d.mu.Unlock()
		events, due, err := HasDispatchWork(ctx, d.store, now)
		if err != nil {
			d.logErr(ctx, "webhook: look for work", err)
			return false
		}
		if !events && !due {
			return false
		}
		took := 0
		if events {
			n, jobs, err := DispatchEvents(ctx, d.store, now, now.Add(d.lease()), dispatchBatch, free, d.o.Batch)
			if err != nil {
				d.logErr(ctx, "webhook: dispatch events", err)
				return false
			}
			d.launch(jobs)
			free -= len(jobs)
			took += n
			d.sinceRelease.Add(int64(n))
			d.o.Metrics.observeDispatch(n)
		}
		if due && free > 0 {
			jobs, err := ClaimDeliveries(ctx, d.store, now, now.Add(d.lease()), free)
			if err != nil {
				d.logErr(ctx, "webhook: claim deliveries", err)
				return false
			}
			d.launch(jobs)
			took += len(jobs)
		}
		if took == 0 {
			return false
		}
	}
	return false
}

func (d *Dispatcher) logErr(ctx context.Context, msg string, err error) {
	if ctx.Err() == nil {
		d.log.Error(msg, "err", err)
	}
}

func (d *Dispatcher) free() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.capacity() - d.inflight
}

func (d *Dispatcher) launch(jobs []DeliveryJob) {
	if len(jobs) == 0 {
		return
	}
	d.mu.Lock()
	d.inflight += len(jobs)
	d.mu.Unlock()
	for _, j := range jobs {
		d.queue <- j // never blocks: the queue holds capacity() jobs
	}
}

// attempt makes one attempt of a delivery and decides what follows.
func (d *Dispatcher) attempt(ctx context.Context, j DeliveryJob) DeliveryResult {
	r := DeliveryResult{ID: j.ID, Attempt: j.Attempt, At: d.o.Now()}
	body, ctype, err := Encode(j.Format, j.TenantID, j.Events)
	if err == nil {
		var key []byte
		if key, err = SecretKey(j.Secret); err == nil {
			r.StatusCode, err = d.post(ctx, j.URL, j.ID, r.At, key, j.TenantID, body, ctype,
				eventGridHeaders(j.Format, aegNotification, j.WebhookID, j.Attempt-1), nil)
		}
	}
	r.Latency = d.o.Now().Sub(r.At)
	switch {
	case err != nil:
		r.Error = err.Error()
	case r.StatusCode < 200 || r.StatusCode > 299:
		r.Error = "answered " + strconv.Itoa(r.StatusCode)
	default:
		r.Delivered = true
		d.o.Metrics.observe(OutcomeDelivered, r.Latency)
		return r
	}
	i := j.Attempt - j.RetryBase - 1
	if i < 0 || i >= len(d.o.Schedule) {
		d.o.Metrics.observe(OutcomeFailed, r.Latency)
		return r
	}
	next := r.At.Add(r.Latency).Add(d.o.Schedule[i])
	r.NextAt = &next
	d.mu.Lock()
	if d.due.IsZero() || next.Before(d.due) {
		d.due = next
	}
	d.mu.Unlock()
	d.o.Metrics.observe(OutcomeRetry, r.Latency)
	return r
}

// post sends one signed message and returns the answer's status; answer,
// when not nil, receives up to 64 KiB of the answer's body.
func (d *Dispatcher) post(ctx context.Context, url, id string, at time.Time, key []byte, tenantID string, body []byte, ctype string, extra http.Header, answer *[]byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("User-Agent", "Kadens-Webhooks/1")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("webhook-signature", Sign(key, id, at, body))
	req.Header.Set("S4-TenantId", tenantID)
	for k, v := range extra {
		req.Header[k] = v
	}
	resp, err := d.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, fmt.Errorf("no answer within %s", d.o.Timeout)
		}
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if answer != nil {
		*answer = b
	}
	return resp.StatusCode, nil
}

// record writes a batch of attempt outcomes in one transaction.
func (d *Dispatcher) record(batch []DeliveryResult) {
	if !worker.Record(d.log, "webhook: record attempts", func(ctx context.Context) error { return CompleteDeliveries(ctx, d.store, batch) }) {
		return
	}
	for _, r := range batch {
		if r.NextAt != nil {
			d.Wake() // the loop recomputes its sleep from d.due
			return
		}
	}
}

// Handshake sends the validation event to a new or moved endpoint and
// reports whether it answered 2xx echoing the code as
// {"validationResponse": code}. In the EventGrid format the event is the
// one Azure Event Grid sends (ValidationEventTypeEventGrid, header
// aeg-event-type: SubscriptionValidation), so a receiver written for Event
// Grid answers it unchanged; the CloudEvents format keeps our own
// ValidationEventType. An endpoint that answers 2xx without the code may
// still validate by a GET on validationUrl, during or after this call.
func (d *Dispatcher) Handshake(ctx context.Context, tenantID, webhookID, url, format, secret, code, validationURL string, now time.Time) (bool, error) {
	key, err := SecretKey(secret)
	if err != nil {
		return false, err
	}
	data, err := json.Marshal(ValidationData{ValidationCode: code, ValidationURL: validationURL})
	if err != nil {
		return false, err
	}
	kind := ValidationEventType
	if format != FormatCloudEvents {
		kind = ValidationEventTypeEventGrid
	}
	e := store.Event{ID: store.NewID(), EventType: kind, Subject: "/webhook/" + webhookID, Data: data, EventTime: now, CreatedAt: now}
	body, ctype, err := Encode(format, tenantID, []store.Event{e})
	if err != nil {
		return false, err
	}
	var answer []byte
	status, err := d.post(ctx, url, e.ID, d.o.Now(), key, tenantID, body, ctype,
		eventGridHeaders(format, aegSubscriptionValidation, webhookID, 0), &answer)
	// The errors say what the endpoint did, for the registration's
	// statusReason (docs/WEBHOOKS.md).
	if err != nil {
		return false, fmt.Errorf("the validation event could not be delivered: %w", err)
	}
	if status < 200 || status > 299 {
		return false, fmt.Errorf("the endpoint answered the validation event with %d", status)
	}
	// Go matches the property name ignoring case, so Event Grid samples
	// that answer {"ValidationResponse": …} pass too.
	var echo struct {
		ValidationResponse string `json:"validationResponse"`
	}
	if json.Unmarshal(answer, &echo) != nil || echo.ValidationResponse != code {
		return false, fmt.Errorf("the endpoint answered the validation event with %d but did not echo its validationCode "+
			`(the answer must be {"validationResponse": "<validationCode>"})`, status)
	}
	return true, nil
}

// Values of the aeg-event-type header.
const (
	aegSubscriptionValidation = "SubscriptionValidation"
	aegNotification           = "Notification"
)

// eventGridHeaders are the aeg-* headers Azure Event Grid sends with every
// POST, for the EventGrid format: receivers built on Event Grid's webhook
// handlers (e.g. Azure Functions' EventGrid extension) read aeg-event-type
// to tell a handshake from events and refuse a POST without it.
// deliveryCount is the number of earlier attempts.
func eventGridHeaders(format, eventType, webhookID string, deliveryCount int) http.Header {
	if format == FormatCloudEvents {
		return nil
	}
	return http.Header{
		"Aeg-Event-Type":        {eventType},
		"Aeg-Subscription-Name": {webhookID},
		"Aeg-Delivery-Count":    {strconv.Itoa(max(deliveryCount, 0))},
		"Aeg-Data-Version":      {"1"},
		"Aeg-Metadata-Version":  {"1"},
	}
}

// NewToken returns a random URL-safe token of 32 bytes, for validation
// codes and validation URLs.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
