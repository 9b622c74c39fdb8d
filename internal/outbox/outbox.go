// Package outbox runs the consumers of the events outbox other than webhook
// delivery: bank collection, e-invoice delivery, an audit log. Events are
// written in the transaction of the change they describe (store.Tx.AddEvents);
// the relay (store.RelayEvents) hands each one to every consumer that takes
// its kind as a job of that consumer's own, and to the relay's targets
// (webhook delivery, whose queue is a table of its own). A consumer is a
// name, the event kinds it takes and an idempotent handler; this package
// claims its jobs across processes, calls the handler, retries failures
// with backoff and dead-letters what never succeeds, so no integration
// re-implements any of it and a slow or failing consumer holds back no
// other (docs/ARCHITECTURE.md, "Events and their consumers").
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/kadens/kadens/internal/retries"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/worker"
)

// Handler handles one event of tenant for one consumer. It must be
// idempotent: every event is handed over at least once, and again after a
// failure, a lapsed claim or a crash. A nil error completes the job; an
// error retries it on the consumer's schedule, or dead-letters it at once
// when wrapped by Permanent.
type Handler func(ctx context.Context, tenant string, e store.Event) error

// Consumer is one consumer of the outbox.
type Consumer struct {
	// Name identifies the consumer's queue in the database, across
	// processes and restarts: lower-case letters, digits and dashes, e.g.
	// "autogiro-collection". Renaming it starts a new, empty queue.
	Name string
	// Kinds are the event types it takes (store.Event.EventType), e.g.
	// InvoiceIssued.
	Kinds  []string
	Handle Handler
	// Concurrency is how many handler calls of this consumer run at once
	// in this process; default 4.
	Concurrency int
	// Timeout bounds one handler call; default 30 s. A claim lasts this
	// long plus 30 s, then another process may take the job.
	Timeout time.Duration
	// Schedule are the delays before the retries of a failed job; when they
	// run out the job is Dead. Nil means DefaultSchedule.
	Schedule []time.Duration
}

// DefaultSchedule is retries.Default: 10 s, 30 s, 1 min, 5 min, 10 min,
// 30 min, 1 h, then hourly until about a day after the first attempt, as
// webhook deliveries retry (docs/WEBHOOKS.md): long enough to ride out a
// bank's or an access point's outage.
var DefaultSchedule = func() []time.Duration {
	s, err := retries.Parse(retries.Default)
	if err != nil {
		panic(err)
	}
	return s
}()

// Permanent marks err as one no retry can cure (an event the consumer can
// never handle): the job is dead-lettered at once.
func Permanent(err error) error { return permanentError{err} }

type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Options configure a Runner.
type Options struct {
	Store *store.Store
	Log   *slog.Logger
	// Poll is how often an idle consumer looks for jobs it was not woken
	// for (other processes' relays, retries that fell due); default 1 s.
	Poll time.Duration
	// Now is the clock of claims and retries; default time.Now.
	Now func() time.Time
	// Metrics, when set, count handler calls by outcome (NewMetrics).
	Metrics *Metrics
}

// Runner runs registered consumers in one process. Several runners (one per
// process) may share a database: the store's claims make each attempt one
// process's.
type Runner struct {
	o         Options
	store     *store.Store
	log       *slog.Logger
	consumers []*consumer

	// w runs the relay and the consumers' claiming loops, and their
	// handler calls as its calls.
	w worker.Workers[store.OutboxResult]
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// New builds a runner; Register consumers, then Start it.
func New(o Options) *Runner {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Runner{o: o, store: o.Store, log: o.Log}
}

// Register adds a consumer; call it before Start. Every process sharing the
// database should register the same consumers (they run the same binary):
// the relay writes jobs for every consumer ever registered, whichever
// process relays, until it is retired (store.RetireOutboxConsumer).
func (r *Runner) Register(c Consumer) error {
	if r.w.Started() {
		return fmt.Errorf("outbox: register %s: the runner has started", c.Name)
	}
	if !namePattern.MatchString(c.Name) {
		return fmt.Errorf("outbox: consumer name %q: want lower-case letters, digits and dashes", c.Name)
	}
	if len(c.Kinds) == 0 || c.Handle == nil {
		return fmt.Errorf("outbox: consumer %s needs event kinds and a handler", c.Name)
	}
	for _, o := range r.consumers {
		if o.Name == c.Name {
			return fmt.Errorf("outbox: consumer %s registered twice", c.Name)
		}
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.Schedule == nil {
		c.Schedule = DefaultSchedule
	}
	c.Kinds = slices.Clone(c.Kinds)
	r.consumers = append(r.consumers, &consumer{Consumer: c, r: r, wake: make(chan struct{}, 1), slot: make(chan struct{}, 1)})
	return nil
}

// Start records the consumers in the database (from now on the relay
// writes their jobs) and runs them in the background until Stop. With no
// consumers registered it does nothing.
func (r *Runner) Start(ctx context.Context) error {
	if r.w.Started() || len(r.consumers) == 0 {
		return nil
	}
	now := r.o.Now()
	known := map[string]bool{}
	for _, c := range r.consumers {
		if err := r.store.RegisterOutboxConsumer(ctx, c.Name, c.Kinds, now); err != nil {
			return fmt.Errorf("outbox: start: %w", err)
		}
		known[c.Name] = true
	}
	all, err := r.store.OutboxConsumers(ctx)
	if err != nil {
		return fmt.Errorf("outbox: start: %w", err)
	}
	for _, c := range all {
		if !known[c.Name] {
			r.log.Warn("outbox: a consumer registered in the database does not run in this process; its jobs pile up until it runs or is retired",
				"consumer", c.Name)
		}
	}
	loopCtx, callCtx := r.w.Start(256, 256, r.record)
	r.store.OnOutboxJobs(r.wakeAll)
	r.w.Loop(func() { r.relay(loopCtx) })
	for _, c := range r.consumers {
		r.w.Loop(func() { c.run(loopCtx, callCtx) })
	}
	return nil
}

func (r *Runner) wakeAll() {
	for _, c := range r.consumers {
		c.Wake()
	}
}

// Stop stops claiming, waits for handler calls in flight until ctx ends
// (then cancels them: they count as failed attempts and are retried on
// schedule), and records every outcome. Jobs claimed but not handled keep
// their claim until it lapses.
func (r *Runner) Stop(ctx context.Context) error {
	if !r.w.Started() {
		return nil
	}
	r.store.OnOutboxJobs(nil)
	if err := r.w.Stop(ctx, nil); err != nil {
		return fmt.Errorf("outbox: stop: handlers still running: %w", err)
	}
	return nil
}

// relay fans out events that wait for the relay on every poll. The webhook
// dispatcher of a process relays as soon as a commit wakes it; this is the
// fallback that makes consumers independent of it (a process without one,
// a dispatcher that is down), so it does not wake on commits.
func (r *Runner) relay(ctx context.Context) {
	t := time.NewTicker(r.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for ctx.Err() == nil {
			pending, err := r.store.HasUnrelayedEvents(ctx)
			if err != nil || !pending {
				r.logErr(ctx, "outbox: look for events to relay", err)
				break
			}
			now := r.o.Now()
			n, err := r.store.RelayEvents(ctx, now, 512)
			if err != nil || n == 0 {
				r.logErr(ctx, "outbox: relay events", err)
				break
			}
		}
	}
}

func (r *Runner) logErr(ctx context.Context, msg string, err error) {
	if err != nil && ctx.Err() == nil {
		r.log.Error(msg, "err", err)
	}
}

// record writes a batch of outcomes in one transaction.
func (r *Runner) record(batch []store.OutboxResult) {
	if !worker.Record(r.log, "outbox: record outcomes", func(ctx context.Context) error { return r.store.CompleteOutboxJobs(ctx, batch) }) {
		return
	}
	for _, res := range batch {
		if res.NextAt != nil {
			r.byName(res.Consumer).Wake() // recompute its sleep
		}
	}
}

func (r *Runner) byName(name string) *consumer {
	for _, c := range r.consumers {
		if c.Name == name {
			return c
		}
	}
	return &consumer{wake: make(chan struct{}, 1)}
}

// consumer is a registered consumer's loop and workers. Concurrency
// workers call the handler; the loop keeps up to three times as many jobs
// claimed (queued or in a worker), claiming when at least half a
// Concurrency's worth of room is free, so workers never wait for the next
// claim transaction and claims are few. It sleeps until woken, room frees,
// its earliest retry falls due or the poll interval passes.
type consumer struct {
	Consumer
	r     *Runner
	wake  chan struct{}
	slot  chan struct{}
	queue chan store.OutboxJob

	mu       sync.Mutex
	inflight int // claimed and not yet handled
	due      time.Time
}

// Wake makes the consumer look for jobs now. It never blocks.
func (c *consumer) Wake() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *consumer) lease() time.Duration { return c.Timeout + 30*time.Second }

func (c *consumer) capacity() int { return 3 * c.Concurrency }

func (c *consumer) run(ctx, callCtx context.Context) {
	c.queue = make(chan store.OutboxJob, c.capacity())
	// The workers are the runner's calls: Stop waits for them (the handler
	// calls in flight) after the loops.
	for range c.Concurrency {
		c.r.w.Call(func() {
			for j := range c.queue {
				if ctx.Err() == nil {
					c.handle(callCtx, j)
				} // else: left; its claim lapses and another attempt follows
				c.mu.Lock()
				c.inflight--
				c.mu.Unlock()
				select {
				case c.slot <- struct{}{}:
				default:
				}
			}
		})
	}
	defer close(c.queue)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		starved := c.work(ctx)
		var slot <-chan struct{}
		if starved {
			slot = c.slot
		}
		sleep := c.r.o.Poll
		c.mu.Lock()
		if !c.due.IsZero() {
			sleep = min(sleep, max(time.Until(c.due), time.Millisecond))
		}
		c.mu.Unlock()
		timer.Reset(sleep)
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-slot:
		case <-timer.C:
		}
	}
}

// work claims and queues jobs until none is due or there is no room; it
// reports whether it stopped for lack of room.
func (c *consumer) work(ctx context.Context) bool {
	for ctx.Err() == nil {
		c.mu.Lock()
		free := c.capacity() - c.inflight
		now := c.r.o.Now()
		if !c.due.IsZero() && !now.Before(c.due) {
			c.due = time.Time{}
		}
		c.mu.Unlock()
		if free < max(1, c.Concurrency/2) {
			return true
		}
		due, err := c.r.store.HasDueOutboxJobs(ctx, c.Name, now)
		if err != nil || !due {
			c.r.logErr(ctx, "outbox: look for jobs", err)
			return false
		}
		jobs, err := c.r.store.ClaimOutboxJobs(ctx, c.Name, now, now.Add(c.lease()), free)
		if err != nil || len(jobs) == 0 {
			c.r.logErr(ctx, "outbox: claim jobs", err)
			return false
		}
		c.mu.Lock()
		c.inflight += len(jobs)
		c.mu.Unlock()
		for _, j := range jobs {
			c.queue <- j // never blocks: the queue holds capacity() jobs
		}
	}
	return false
}

// handle calls the handler for one job and sends its outcome to be
// recorded.
func (c *consumer) handle(ctx context.Context, j store.OutboxJob) {
	start := c.r.o.Now()
	err := c.call(ctx, j)
	end := c.r.o.Now()
	res := store.OutboxResult{Consumer: c.Name, EventID: j.Event.ID, Attempt: j.Attempt, At: end, Done: err == nil}
	outcome := OutcomeDone
	if err != nil {
		res.Error = err.Error()
		i := j.Attempt - j.RetryBase - 1
		var perm permanentError
		if errors.As(err, &perm) || i < 0 || i >= len(c.Schedule) {
			outcome = OutcomeDead
			c.r.log.Warn("outbox: job dead-lettered", "consumer", c.Name, "event_id", j.Event.ID, "tenant", j.TenantID,
				"attempts", j.Attempt, "err", err)
		} else {
			next := end.Add(c.Schedule[i])
			res.NextAt = &next
			outcome = OutcomeRetry
			c.mu.Lock()
			if c.due.IsZero() || next.Before(c.due) {
				c.due = next
			}
			c.mu.Unlock()
		}
	}
	c.r.o.Metrics.observe(c.Name, outcome, end.Sub(start))
	c.r.w.Results() <- res
}

// call runs the handler with the consumer's timeout, turning a panic into
// an error so one bad event cannot end the process.
func (c *consumer) call(ctx context.Context, j store.OutboxJob) (err error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			c.r.log.Error("outbox: handler panicked", "consumer", c.Name, "event_id", j.Event.ID, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return c.Handle(ctx, j.TenantID, j.Event)
}
