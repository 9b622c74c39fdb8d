package avtalegiro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/store"
)

// The bank-side interface at an account's BaseComboApiEndpointURL:
//
//	PUT  {base}/claimfiles/{transmissionNumber}  a claim file (ISO-8859-1); the
//	     bank keeps one file per transmission number: the same bytes again
//	     answer 200 (nothing new), other bytes 409
//	GET  {base}/files                           the files waiting for the payee:
//	     [{"id": "...", "kind": "Mandates"|"Payments"}]
//	GET  {base}/files/{id}                      one file's bytes
//
// Every request names the payee's data sender in X-Customer-Unit-Id.

// RemoteFile is a file the bank has for the payee.
type RemoteFile struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

// BankError is a request the bank refused or never answered, after the
// retries.
type BankError struct {
	Op       string // "submit", "list", "fetch"
	URL      string
	Status   int // 0: no answer
	Message  string
	Attempts int
}

func (e *BankError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("avtalegiro: bank %s %s: no answer after %d attempts: %s", e.Op, e.URL, e.Attempts, e.Message)
	}
	return fmt.Sprintf("avtalegiro: bank %s %s: status %d after %d attempts: %s", e.Op, e.URL, e.Status, e.Attempts, e.Message)
}

// Bank is the HTTP client of the bank-side interface. Each attempt has its
// own timeout; failures that may pass (no answer, 408, 429, 5xx) are
// retried with exponential backoff and jitter; other answers are final.
type Bank struct {
	HTTP         *http.Client
	Attempts     int           // at least 1
	Timeout      time.Duration // per attempt
	Backoff      time.Duration // before the second attempt; doubles, capped by MaxBackoff
	MaxBackoff   time.Duration
	sleepForTest func(context.Context, time.Duration) error
}

// NewBank returns a Bank with production settings: 6 attempts, 30 s per
// attempt, backoff from 1 s to 1 min. Its connections pass the egress
// policy p: an account's bank address is the tenant's to choose.
func NewBank(p egress.Policy) *Bank {
	return &Bank{HTTP: p.Client(0), Attempts: 6, Timeout: 30 * time.Second, Backoff: time.Second, MaxBackoff: time.Minute}
}

func (b *Bank) sleep(ctx context.Context, d time.Duration) error {
	if b.sleepForTest != nil {
		return b.sleepForTest(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func retryable(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// answerMessageLimit bounds what of a refusal's body is kept as its
// message.
const answerMessageLimit = 64 << 10

// retryAnswer is an answer that may pass (408, 429, 5xx).
type retryAnswer struct {
	status  int
	message string
}

func (e *retryAnswer) Error() string { return fmt.Sprintf("status %d: %s", e.status, e.message) }

// transportError is a request that got no answer.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

func message(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, answerMessageLimit))
	return strings.TrimSpace(string(b))
}

// do sends a request with retries. body (nil: none) opens the request
// body afresh for each attempt; the final answer's status and body go to
// handle, which runs under the attempt's timeout and may stream the body
// (its error is returned as it is, not retried).
func (b *Bank) do(ctx context.Context, op, method, u, unit string, body func() (io.Reader, error), handle func(status int, body io.Reader) error) error {
	attempts := max(b.Attempts, 1)
	wait := b.Backoff
	var last BankError
	for i := 1; i <= attempts; i++ {
		if i > 1 {
			// Full jitter in [wait/2, wait): retries of many payees spread out.
			d := wait/2 + time.Duration(rand.Int64N(int64(wait/2)+1))
			if err := b.sleep(ctx, d); err != nil {
				return err
			}
			wait = min(wait*2, b.MaxBackoff)
		}
		err := b.once(ctx, method, u, unit, body, func(status int, r io.Reader) error {
			if retryable(status) {
				return &retryAnswer{status: status, message: message(r)}
			}
			return handle(status, r)
		})
		var (
			ra *retryAnswer
			te *transportError
		)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &ra):
			last = BankError{Op: op, URL: u, Status: ra.status, Message: ra.message, Attempts: i}
		case errors.As(err, &te) && errors.Is(err, egress.ErrRefused):
			// The policy refuses the address: another attempt would too.
			return &BankError{Op: op, URL: u, Message: te.Error(), Attempts: i}
		case errors.As(err, &te):
			last = BankError{Op: op, URL: u, Message: te.Error(), Attempts: i}
		default:
			return err
		}
	}
	return &last
}

func (b *Bank) once(ctx context.Context, method, u, unit string, body func() (io.Reader, error), handle func(int, io.Reader) error) error {
	ctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		var err error
		if rd, err = body(); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-Customer-Unit-Id", unit)
	if body != nil {
		req.Header.Set("Content-Type", "text/plain; charset=iso-8859-1")
	}
	resp, err := b.HTTP.Do(req)
	if err != nil {
		return &transportError{err}
	}
	defer resp.Body.Close()
	return handle(resp.StatusCode, resp.Body)
}

func endpoint(base string, parts ...string) string {
	u := strings.TrimRight(base, "/")
	for _, p := range parts {
		u += "/" + url.PathEscape(p)
	}
	return u
}

// Submit sends a claim file under its transmission number; open returns
// a reader of the file's bytes, called once per attempt, so the file is
// streamed, never held. Sending it again (after a lost answer) is safe:
// the bank keeps one file per number.
func (b *Bank) Submit(ctx context.Context, a AvtaleGiroAccount, transmission string, open func() (io.Reader, error)) error {
	u := endpoint(a.BaseComboAPIEndpointURL, "claimfiles", transmission)
	return b.do(ctx, "submit", http.MethodPut, u, a.CustomerUnitID, open, func(status int, r io.Reader) error {
		if status != http.StatusOK && status != http.StatusCreated && status != http.StatusNoContent {
			return &BankError{Op: "submit", URL: u, Status: status, Message: message(r), Attempts: 1}
		}
		return nil
	})
}

// Files lists the files the bank has for the payee.
func (b *Bank) Files(ctx context.Context, a AvtaleGiroAccount) ([]RemoteFile, error) {
	u := endpoint(a.BaseComboAPIEndpointURL, "files")
	var out []RemoteFile
	err := b.do(ctx, "list", http.MethodGet, u, a.CustomerUnitID, nil, func(status int, r io.Reader) error {
		if status != http.StatusOK {
			return &BankError{Op: "list", URL: u, Status: status, Message: message(r), Attempts: 1}
		}
		if err := json.NewDecoder(io.LimitReader(r, 64<<20)).Decode(&out); err != nil {
			return &BankError{Op: "list", URL: u, Status: status, Message: "not a JSON list of files: " + err.Error(), Attempts: 1}
		}
		return nil
	})
	return out, err
}

// Fetch hands one file's bytes to read as they arrive (read runs under
// the attempt's timeout; its error is returned, not retried: the next
// Sync fetches the file again).
func (b *Bank) Fetch(ctx context.Context, a AvtaleGiroAccount, id string, read func(io.Reader) error) error {
	u := endpoint(a.BaseComboAPIEndpointURL, "files", id)
	return b.do(ctx, "fetch", http.MethodGet, u, a.CustomerUnitID, nil, func(status int, r io.Reader) error {
		if status != http.StatusOK {
			return &BankError{Op: "fetch", URL: u, Status: status, Message: message(r), Attempts: 1}
		}
		return read(r)
	})
}

// SyncResult says what Sync did.
type SyncResult struct {
	Exported  bool // a new claim file was written
	Submitted int  // claim files the bank accepted
	Imported  int  // new files read from the bank
	Settlement
}

// Sync exchanges files with the account's bank: it writes the next claim
// file (if any claim or cancellation waits), submits every claim file the
// bank has not accepted yet (oldest first, each under its own transmission
// number, so a file whose answer was lost is sent again, never twice as a
// new file), then reads the bank's mandate and OCR files (each imported
// once) and settles the payments. An error leaves what is done done; the
// next Sync continues.
func Sync(ctx context.Context, st *store.Store, bank *Bank, tenant, accountID string, now time.Time) (SyncResult, error) {
	ctx = withTenant(ctx, tenant)
	var out SyncResult
	account, err := Account(ctx, st, accountID)
	if err != nil {
		return out, err
	}
	if _, out.Exported, err = Export(ctx, st, accountID, now); err != nil {
		return out, err
	}
	files, err := UnsubmittedFiles(ctx, st, accountID)
	if err != nil {
		return out, err
	}
	for _, f := range files {
		open := func() (io.Reader, error) { return FileContent(ctx, st, f.ID), nil }
		if err := bank.Submit(ctx, account, f.TransmissionNumber, open); err != nil {
			return out, fmt.Errorf("avtalegiro: submit file %s (transmission %s): %w", f.ID, f.TransmissionNumber, err)
		}
		if err := MarkFileSubmitted(ctx, st, f.ID, now); err != nil {
			return out, err
		}
		out.Submitted++
	}
	remote, err := bank.Files(ctx, account)
	if err != nil {
		return out, err
	}
	for _, rf := range remote {
		var imp AvtaleGiroImport
		err := bank.Fetch(ctx, account, rf.ID, func(r io.Reader) error {
			var err error
			imp, err = ImportFile(ctx, st, r, now)
			if err != nil {
				return fmt.Errorf("avtalegiro: import bank file %s: %w", rf.ID, err)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
		if !imp.Repeated {
			out.Imported++
		}
	}
	out.Settlement, err = SettlePayments(ctx, st, tenant, now)
	return out, err
}
