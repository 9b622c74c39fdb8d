package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/store"
)

// ehfInvoice orders a subscription on an EHF agreement and returns its
// first invoice.
func ehfInvoice(t *testing.T, e *apitest.Env) (*billingFixture, store.Invoice) {
	t.Helper()
	f := newBillingFixture(t, e, e.Tenant)
	ehf := create(t, f.tn, "/paymentagreement", ehfBody(f.subscriber, "987654325"))
	id := create(t, f.tn, "/order", map[string]any{"organizationId": f.org, "templatePackageId": f.pkg,
		"subscriberId": f.subscriber, "paymentAgreementId": ehf})
	if r := f.tn.Do("POST", "/order/"+id+"/complete", nil); r.Status != http.StatusOK {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	invs := f.invoices("subscriberId=" + f.subscriber)
	if len(invs) != 1 || *invs[0].PaymentAgreementID != ehf {
		t.Fatalf("invoices %+v", invs)
	}
	return f, invs[0]
}

var quiet = slog.New(slog.DiscardHandler)

// clock is a settable wall clock for deliverers.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func delivery(t *testing.T, f *billingFixture, kind, id string) peppol.PeppolDelivery {
	t.Helper()
	path := "/invoice/" + id + "/peppoldelivery"
	if kind == peppol.PeppolCreditNote {
		path = "/creditnote/" + id + "/peppoldelivery"
	}
	r := f.tn.Do("GET", path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var d peppol.PeppolDelivery
	r.JSON(t, &d)
	return d
}

// TestPeppolDeliveryRetriesUntilDelivered: the access point fails three
// hand-overs; the delivery waits with the reason, is retried with growing
// pauses and is handed over once.
func TestPeppolDeliveryRetriesUntilDelivered(t *testing.T) {
	eachPeppolDriven(t, func(t *testing.T, e *apitest.Env, n *peppolNetwork) {
		f, inv := ehfInvoice(t, e)
		clk := &clock{t: time.Now().Truncate(time.Second)}
		d := &peppol.Deliverer{Store: e.Store, Log: quiet, Sender: &peppol.AccessPoint{URL: n.ap.URL, Token: "ap-secret", Client: loopbackAP}, Now: clk.now,
			Backoff: time.Minute, MaxBackoff: 10 * time.Minute}
		ctx := context.Background()
		n.ap.FailNext(3)
		if err := d.Deliver(ctx, f.tn.ID, peppol.PeppolInvoice, inv.ID); err != nil {
			t.Fatal(err)
		}
		got := delivery(t, f, peppol.PeppolInvoice, inv.ID)
		if got.Status != peppol.PeppolPending || got.Attempts != 1 || !strings.Contains(got.FailureReason, "503") ||
			got.NextAttemptAt == nil || got.NextAttemptAt.Sub(clk.now()) != time.Minute {
			t.Fatalf("after a failed attempt: %+v", got)
		}
		// Not due yet: nothing happens.
		if _, err := d.RunDue(ctx); err != nil || n.ap.Posts() != 1 {
			t.Fatalf("early run: %v, %d posts", err, n.ap.Posts())
		}
		waits := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute}
		for i, w := range waits {
			clk.add(w)
			if _, err := d.RunDue(ctx); err != nil {
				t.Fatal(err)
			}
			if n.ap.Posts() != i+2 {
				t.Fatalf("after waiting %s: %d posts", w, n.ap.Posts())
			}
		}
		got = delivery(t, f, peppol.PeppolInvoice, inv.ID)
		if got.Status != peppol.PeppolSent || got.Attempts != 4 || got.FailureReason != "" || len(n.ap.Docs()) != 1 {
			t.Fatalf("after the access point recovered: %+v, %d documents", got, len(n.ap.Docs()))
		}
		// Later runs only ask for the status.
		clk.add(time.Hour)
		if _, err := d.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if got = delivery(t, f, peppol.PeppolInvoice, inv.ID); got.Status != peppol.PeppolDelivered || n.ap.Posts() != 4 {
			t.Fatalf("after polling: %+v, %d posts", got, n.ap.Posts())
		}
	})
}

// crashingSender hands the document over, then dies before the outcome
// is recorded (a process killed between send and record).
type crashingSender struct{ peppol.Sender }

type crash struct{}

func (c crashingSender) Send(ctx context.Context, m peppol.Message) (peppol.Receipt, error) {
	if _, err := c.Sender.Send(ctx, m); err != nil {
		return peppol.Receipt{}, err
	}
	panic(crash{})
}

func deliverCrashing(t *testing.T, d *peppol.Deliverer, tenant, kind, id string) {
	t.Helper()
	defer func() {
		if r := recover(); r != (crash{}) {
			t.Fatalf("want the simulated crash, got %v", r)
		}
	}()
	_ = d.Deliver(context.Background(), tenant, kind, id)
}

// TestPeppolDeliveryCrashBetweenSendAndRecord: a process hands the
// document over and dies before recording it. Its claim keeps other
// processes off until the lease ends; then another process sends again
// under the same idempotency key, and the access point recognizes it: one
// document, recorded Sent.
func TestPeppolDeliveryCrashBetweenSendAndRecord(t *testing.T) {
	eachPeppolDriven(t, func(t *testing.T, e *apitest.Env, n *peppolNetwork) {
		f, inv := ehfInvoice(t, e)
		clk := &clock{t: time.Now().Truncate(time.Second)}
		ap := &peppol.AccessPoint{URL: n.ap.URL, Token: "ap-secret", Client: loopbackAP}
		dying := &peppol.Deliverer{Store: e.Store, Log: quiet, Sender: crashingSender{ap}, Now: clk.now, Lease: time.Minute}
		deliverCrashing(t, dying, f.tn.ID, peppol.PeppolInvoice, inv.ID)
		if got := delivery(t, f, peppol.PeppolInvoice, inv.ID); got.Status != peppol.PeppolPending || len(n.ap.Docs()) != 1 {
			t.Fatalf("after the crash: %+v, %d documents", got, len(n.ap.Docs()))
		}

		restarted := &peppol.Deliverer{Store: e.Store, Log: quiet, Sender: ap, Now: clk.now, Lease: time.Minute}
		ctx := context.Background()
		// Within the lease the claim holds, even against Deliver.
		if err := restarted.Deliver(ctx, f.tn.ID, peppol.PeppolInvoice, inv.ID); err != nil {
			t.Fatal(err)
		}
		if n.ap.Posts() != 1 {
			t.Fatalf("%d hand-overs within the lease", n.ap.Posts())
		}
		clk.add(2 * time.Minute)
		if _, err := restarted.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		got := delivery(t, f, peppol.PeppolInvoice, inv.ID)
		if docs := n.ap.Docs(); got.Status != peppol.PeppolSent || n.ap.Posts() != 2 || len(docs) != 1 || got.MessageID != docs[0].MessageID {
			t.Fatalf("after the restart: %+v, %d posts, %d documents", got, n.ap.Posts(), len(docs))
		}
	})
}

// TestPeppolDeliveryConcurrentProcesses: several processes told to
// deliver the same document at once hand it over once.
func TestPeppolDeliveryConcurrentProcesses(t *testing.T) {
	eachPeppolDriven(t, func(t *testing.T, e *apitest.Env, n *peppolNetwork) {
		f, inv := ehfInvoice(t, e)
		var wg sync.WaitGroup
		for range 6 {
			d := &peppol.Deliverer{Store: e.Store, Log: quiet, Sender: &peppol.AccessPoint{URL: n.ap.URL, Token: "ap-secret", Client: loopbackAP}}
			wg.Go(func() {
				if err := d.Deliver(context.Background(), f.tn.ID, peppol.PeppolInvoice, inv.ID); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := delivery(t, f, peppol.PeppolInvoice, inv.ID); got.Status != peppol.PeppolSent || n.ap.Posts() != 1 {
			t.Fatalf("%+v after %d hand-overs", got, n.ap.Posts())
		}
	})
}

// TestPeppolDirectoryDrop: the directory adapter drops one file per
// document, also when the process died after dropping it.
func TestPeppolDirectoryDrop(t *testing.T) {
	eachPeppolDriven(t, func(t *testing.T, e *apitest.Env, _ *peppolNetwork) {
		f, inv := ehfInvoice(t, e)
		dir := t.TempDir()
		clk := &clock{t: time.Now().Truncate(time.Second)}
		drop := &peppol.Directory{Dir: dir}
		deliverCrashing(t, &peppol.Deliverer{Store: e.Store, Log: quiet, Sender: crashingSender{drop}, Now: clk.now, Lease: time.Minute},
			f.tn.ID, peppol.PeppolInvoice, inv.ID)
		clk.add(2 * time.Minute)
		d := &peppol.Deliverer{Store: e.Store, Log: quiet, Sender: drop, Now: clk.now}
		if _, err := d.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
		got := delivery(t, f, peppol.PeppolInvoice, inv.ID)
		if len(files) != 1 || got.Status != peppol.PeppolSent || got.Adapter != "Directory" || filepath.Base(files[0]) != got.MessageID {
			t.Fatalf("files %v, delivery %+v", files, got)
		}
		body, err := os.ReadFile(files[0])
		if err != nil || !strings.Contains(string(body), "<Invoice") {
			t.Fatalf("dropped %s: %v", body, err)
		}
		// The access point takes the file away; asking again drops nothing.
		if err := os.Remove(files[0]); err != nil {
			t.Fatal(err)
		}
		clk.add(time.Hour)
		if err := d.Deliver(context.Background(), f.tn.ID, peppol.PeppolInvoice, inv.ID); err != nil {
			t.Fatal(err)
		}
		if files, _ = filepath.Glob(filepath.Join(dir, "*.xml")); len(files) != 0 {
			t.Fatalf("dropped again: %v", files)
		}
	})
}
