package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kadens/kadens/internal/seed"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/webhook"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A large backlog (a bulk load's events) is worked off in pages of at most
// 512 events per transaction, never read whole, and once the dispatcher is
// idle again it hands back the memory the backlog took (the writer's page
// cache, the heap), so idle memory does not grow with the backlog. The
// memory itself is measured in docs/PERFORMANCE.md, not here.
func TestBacklogDispatchedInPagesAndMemoryReleased(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := seed.Tenant(t, s, "bulk-"+store.NewID(), time.Now())
		const backlog = 20_000
		for b := range backlog / 2000 {
			evs := make([]store.NewEvent, 2000)
			for i := range evs {
				evs[i] = store.NewEvent{Type: "InvoiceIssued", Subject: fmt.Sprintf("/invoice/%d-%d", b, i), Data: map[string]int{"n": i}, At: time.Now()}
			}
			if err := s.InTx(ctx, func(tx *store.Tx) error { return tx.AddEvents(ctx, evs) }); err != nil {
				t.Fatal(err)
			}
		}
		reg := prometheus.NewRegistry()
		logs := &lockedBuffer{}
		start(t, s, webhook.Options{Poll: 20 * time.Millisecond, Metrics: webhook.NewMetrics(reg),
			Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		waitFor(t, "the backlog dispatched", 60*time.Second, func() bool {
			events, _, err := webhook.HasDispatchWork(context.Background(), s, time.Now())
			return err == nil && !events
		})
		waitFor(t, "memory released", 5*time.Second, func() bool {
			return strings.Contains(logs.String(), "memory released")
		})
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "kadens_webhook_dispatch_events" {
				continue
			}
			h := mf.GetMetric()[0].GetHistogram()
			if h.GetSampleSum() != backlog {
				t.Errorf("%v events dispatched, want %d", h.GetSampleSum(), backlog)
			}
			if h.GetSampleCount() < backlog/512 {
				t.Errorf("%d transactions for %d events: pages larger than 512", h.GetSampleCount(), backlog)
			}
			for _, b := range h.GetBucket() {
				if b.GetUpperBound() == 512 && b.GetCumulativeCount() != h.GetSampleCount() {
					t.Errorf("%d of %d transactions took more than 512 events", h.GetSampleCount()-b.GetCumulativeCount(), h.GetSampleCount())
				}
			}
			return
		}
		t.Fatal("no kadens_webhook_dispatch_events series")
	})
}
