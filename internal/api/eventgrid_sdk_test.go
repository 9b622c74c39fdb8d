package api_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/nodetest"
)

// sdkLine is one line the Event Grid SDK receiver prints.
type sdkLine struct {
	Validated    bool            `json:"validated"`
	Error        string          `json:"error"`
	EventType    string          `json:"eventType"`
	Subject      string          `json:"subject"`
	Topic        string          `json:"topic"`
	AegEventType string          `json:"aegEventType"`
	Data         json.RawMessage `json:"data"`
}

// startSDKReceiver runs testdata/eventgrid/receiver.js (npm @azure/eventgrid)
// and returns its URL and a function that returns the lines it printed.
// Like the Standard Webhooks verifier, it is skipped only where node or the
// package is absent and KADENS_TEST_REQUIRE_NODE (set by .ci/run) is not.
func startSDKReceiver(t *testing.T) (string, func() []sdkLine) {
	t.Helper()
	node, dir := nodetest.Find(t, filepath.Join("testdata", "eventgrid"), "@azure/eventgrid")
	cmd := exec.Command(node, "receiver.js")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() {
		t.Fatalf("the receiver printed no port: %v", sc.Err())
	}
	url := "http://127.0.0.1:" + strings.TrimSpace(sc.Text())
	var (
		mu    sync.Mutex
		lines []sdkLine
	)
	go func() {
		for sc.Scan() {
			var l sdkLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				l.Error = "unreadable line: " + sc.Text()
			}
			mu.Lock()
			lines = append(lines, l)
			mu.Unlock()
		}
	}()
	return url, func() []sdkLine {
		mu.Lock()
		defer mu.Unlock()
		return append([]sdkLine(nil), lines...)
	}
}

// sameNumber compares a number as JavaScript wrote it back (248 for 248.00)
// with an amount.
func sameNumber(js json.Number, amount string) bool {
	a, err1 := strconv.ParseFloat(js.String(), 64)
	b, err2 := strconv.ParseFloat(amount, 64)
	return err1 == nil && err2 == nil && a == b
}

// TestEventGridSDKReceiver: a receiver written with Azure's Event Grid SDK
// for JavaScript, unchanged, passes the handshake and parses Kadens'
// deliveries as Event Grid events.
func TestEventGridSDKReceiver(t *testing.T) {
	t.Parallel()
	eachWebhookEnv(t, func(t *testing.T, e *apitest.Env) {
		url, lines := startSDKReceiver(t)
		kinds := []string{"SubscriberCreated", "SubscriberContactCreated", "PaymentAgreementCreated", "OrderProcessed",
			"SubscriptionCreated", "InvoiceIssued"}
		r := e.Do("POST", "/webhook", map[string]any{"url": url, "eventTypes": kinds})
		if r.Status != http.StatusCreated || r.Header.Get("Webhook-Status") != "Validated" {
			t.Fatalf("register: %d %v %s; receiver: %+v", r.Status, r.Header, r.Body, lines())
		}
		f := newBillingFixture(t, e, e.Tenant)
		f.order(nil)
		inv := f.invoices("subscriberId=" + f.subscriber)[0]
		got := map[string]sdkLine{}
		deadline := time.Now().Add(15 * time.Second)
		for len(got) < len(kinds) {
			if time.Now().After(deadline) {
				t.Fatalf("received %d of %d kinds: %+v", len(got), len(kinds), lines())
			}
			time.Sleep(20 * time.Millisecond)
			for _, l := range lines() {
				if l.Error != "" {
					t.Fatalf("the SDK refused a delivery: %s", l.Error)
				}
				if l.EventType != "" {
					got[l.EventType] = l
				}
			}
		}
		if v := lines()[0]; !v.Validated || v.AegEventType != "SubscriptionValidation" {
			t.Errorf("handshake line %+v", v)
		}
		issued := got["InvoiceIssued"]
		var d struct {
			Number   int64       `json:"number"`
			DueDate  string      `json:"dueDate"`
			Amount   json.Number `json:"amount"`
			Currency string      `json:"currency"`
		}
		if err := json.Unmarshal(issued.Data, &d); err != nil || issued.Subject != "/invoice/"+inv.ID || issued.AegEventType != "Notification" ||
			d.Number != inv.InvoiceNumber || d.DueDate != inv.DueDate || !sameNumber(d.Amount, inv.Gross.String()) || d.Currency != inv.Currency {
			t.Errorf("InvoiceIssued as the SDK read it: %+v (%v); invoice %+v", issued, err, inv)
		}
	})
}
