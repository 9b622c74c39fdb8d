// Package fakebank is a bank for tests: it speaks the bank-side interface
// of internal/avtalegiro over HTTP (claim files in, mandate and OCR giro
// files out) and checks what it receives with the real parser. It can be
// down for a while (503) and collect claims as a payer's bank would.
package fakebank

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
)

// Bank is the fake bank; serve it with httptest.NewServer(b).
type Bank struct {
	mu sync.Mutex
	// down: how many coming requests answer 503 (or, with dropAnswers,
	// are processed but answered 503 as if the answer was lost).
	down        int
	dropAnswers bool
	requests    int

	received map[string][]byte // transmission number → file
	order    []string
	claims   []ocrgiro.Claim // every claim received, in order
	cancels  []ocrgiro.Claim
	paid     map[int]bool // index into claims
	out      []outFile
	serial   int
	account  string
}

type outFile struct {
	id, kind string
	content  []byte
}

// New returns a bank for the payee account (11 digits).
func New(account string) *Bank {
	return &Bank{received: map[string][]byte{}, paid: map[int]bool{}, account: account}
}

// Down makes the next n requests fail with 503. With lost, the requests
// are carried out and only their answers fail, as when a connection drops
// after the bank has stored a file.
func (b *Bank) Down(n int, lost bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.down, b.dropAnswers = n, lost
}

// Requests returns how many requests the bank has seen.
func (b *Bank) Requests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests
}

// Claims returns the claims and cancellations received (each once, however
// often its file came).
func (b *Bank) Claims() (claims, cancellations []ocrgiro.Claim) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]ocrgiro.Claim(nil), b.claims...), append([]ocrgiro.Claim(nil), b.cancels...)
}

// Files returns how many claim files were received.
func (b *Bank) Files() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.order)
}

func (b *Bank) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests++
	failAnswer := false
	if b.down > 0 {
		b.down--
		if !b.dropAnswers {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		failAnswer = true
	}
	status, body := b.serve(r)
	if failAnswer {
		status, body = http.StatusServiceUnavailable, []byte("answer lost")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (b *Bank) serve(r *http.Request) (int, []byte) {
	// The interface may live under any base path.
	path := r.URL.Path
	if i := strings.LastIndex(path, "/claimfiles/"); i >= 0 {
		path = path[i+1:]
	} else if i := strings.LastIndex(path, "/files"); i >= 0 {
		path = path[i+1:]
	}
	switch {
	case r.Method == http.MethodPut && strings.HasPrefix(path, "claimfiles/"):
		n := strings.TrimPrefix(path, "claimfiles/")
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(r.Body); err != nil {
			return http.StatusBadRequest, []byte(err.Error())
		}
		if prev, ok := b.received[n]; ok {
			if bytes.Equal(prev, buf.Bytes()) {
				return http.StatusOK, nil
			}
			return http.StatusConflict, []byte("transmission " + n + " was received with other content")
		}
		t, err := ocrgiro.Parse(bytes.NewReader(buf.Bytes()))
		if err != nil {
			return http.StatusBadRequest, []byte(err.Error())
		}
		if t.Start.Number != n {
			return http.StatusBadRequest, []byte("transmission number differs from the path")
		}
		b.received[n] = buf.Bytes()
		b.order = append(b.order, n)
		for _, a := range t.Assignments {
			if a.Start.Type == ocrgiro.AssignmentCancellations {
				b.cancels = append(b.cancels, a.Claims...)
			} else {
				b.claims = append(b.claims, a.Claims...)
			}
		}
		return http.StatusCreated, nil
	case r.Method == http.MethodGet && path == "files":
		list := make([]map[string]string, 0, len(b.out))
		for _, f := range b.out {
			list = append(list, map[string]string{"id": f.id, "kind": f.kind})
		}
		data, _ := json.Marshal(list)
		return http.StatusOK, data
	case r.Method == http.MethodGet && strings.HasPrefix(path, "files/"):
		id := strings.TrimPrefix(path, "files/")
		for _, f := range b.out {
			if f.id == id {
				return http.StatusOK, f.content
			}
		}
		return http.StatusNotFound, nil
	}
	return http.StatusNotFound, nil
}

func (b *Bank) publish(kind string, t *ocrgiro.Transmission) error {
	var buf bytes.Buffer
	if err := ocrgiro.Write(&buf, t); err != nil {
		return err
	}
	b.out = append(b.out, outFile{id: fmt.Sprintf("f%04d", len(b.out)+1), kind: kind, content: buf.Bytes()})
	return nil
}

func (b *Bank) start() ocrgiro.Start {
	b.serial++
	return ocrgiro.Start{Sender: ocrgiro.NetsID, Number: fmt.Sprintf("%07d", b.serial), Recipient: "12345678"}
}

// Mandates publishes a mandate notification file.
func (b *Bank) Mandates(ms ...ocrgiro.Mandate) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range ms {
		ms[i].Serial = i + 1
	}
	return b.publish("Mandates", &ocrgiro.Transmission{Start: b.start(), Assignments: []ocrgiro.Assignment{{
		Start: ocrgiro.AssignmentStart{Service: ocrgiro.ServiceAvtaleGiro, Type: ocrgiro.AssignmentMandates,
			Number: fmt.Sprintf("%07d", b.serial), Account: b.account}, Mandates: ms}}})
}

// Collect charges every received claim due by the date that was not
// cancelled or collected before, and publishes the payments as an OCR
// giro file (transaction type 15, Nets date = due date). It reports how
// many it collected; none, no file.
func (b *Bank) Collect(by ocrgiro.Date) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var pays []ocrgiro.Payment
	for i, c := range b.claims {
		if b.paid[i] || by.Before(c.Due) || b.cancelled(c) {
			continue
		}
		b.paid[i] = true
		pays = append(pays, ocrgiro.Payment{Type: ocrgiro.TypeAvtaleGiroPayment, Number: len(pays) + 1, NetsDate: c.Due,
			Centre: "13", DayCode: fmt.Sprintf("%02d", c.Due.Day), PartialSettlement: "1", Serial: fmt.Sprintf("%05d", len(pays)+1),
			Amount: c.Amount, KID: c.KID, FormNumber: "0", ArchiveRef: "000000000", BankDate: c.Due, PayerAccount: "98765432103"})
	}
	if len(pays) == 0 {
		return 0, nil
	}
	return len(pays), b.publish("Payments", &ocrgiro.Transmission{Start: b.start(), Assignments: []ocrgiro.Assignment{{
		Start: ocrgiro.AssignmentStart{Service: ocrgiro.ServiceOCR, Type: ocrgiro.AssignmentClaims, AgreementID: "001234567",
			Number: fmt.Sprintf("%07d", b.serial), Account: b.account}, Payments: pays,
		End: ocrgiro.AssignmentEnd{Date1: by, Date2: pays[0].NetsDate, Date3: pays[len(pays)-1].NetsDate}}},
		End: ocrgiro.End{Date: by}})
}

func (b *Bank) cancelled(c ocrgiro.Claim) bool {
	for _, x := range b.cancels {
		if x.KID == c.KID && x.Amount == c.Amount && x.Due == c.Due {
			return true
		}
	}
	return false
}
