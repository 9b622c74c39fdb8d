package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/idempotency"
)

// IdempotencyHeader lets a client retry a POST safely.
const IdempotencyHeader = "Idempotency-Key"

const idempotencyWindow = 24 * time.Hour

// maxIdempotencyKey is the longest key accepted: a uuid or a hash fits
// with room to spare.
const maxIdempotencyKey = 255

// checkIdempotencyKey accepts 1 to 255 visible ASCII characters (no
// spaces): keys are compared byte for byte and stored as text, so anything
// else (non-ASCII, which a header carries in no agreed encoding, or
// control characters) is refused with a 400 naming the header.
func checkIdempotencyKey(key string) error {
	if len(key) > maxIdempotencyKey {
		return fieldErr(IdempotencyHeader, fmt.Sprintf("must be at most %d characters", maxIdempotencyKey))
	}
	for i := range len(key) {
		if c := key[i]; c < 0x21 || c > 0x7e {
			return fieldErr(IdempotencyHeader, fmt.Sprintf("must be visible ASCII characters without spaces (byte %d is 0x%02x)", i, c))
		}
	}
	return nil
}

// teeWriter passes a response through while keeping a copy to store.
type teeWriter struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (a long
// operation lifting its write deadline).
func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.buf.Write(b)
	return w.ResponseWriter.Write(b)
}

// idempotent runs a POST at most once per Idempotency-Key and tenant: the
// same key with the same request replays the first response (for 24 h); the
// same key with a different request is 422; a retry while the first is still
// running is 409. Server errors release the key so the client may retry.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, next apikit.HandlerFunc) error {
	key := r.Header.Get(IdempotencyHeader)
	if key == "" || r.Method != http.MethodPost {
		return next(w, r)
	}
	if err := checkIdempotencyKey(key); err != nil {
		return err
	}
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.RequestURI() + "\n"))
	body, err := spoolBody(r.Body, h)
	if err != nil {
		return err // *http.MaxBytesError → 413
	}
	defer body.Close()
	r.Body = body
	rec := idempotency.Record{
		Key: key, Method: r.Method, Path: r.URL.RequestURI(),
		RequestHash: hex.EncodeToString(h.Sum(nil)), CreatedAt: s.now(),
	}
	prev, claimed, err := idempotency.Claim(r.Context(), s.store, rec, idempotencyWindow)
	if err != nil {
		return err
	}
	if !claimed {
		switch {
		case prev.RequestHash != rec.RequestHash:
			return &statusError{http.StatusUnprocessableEntity, "idempotency key reused with a different request"}
		case prev.StatusCode == 0:
			return &statusError{http.StatusConflict, "a request with this idempotency key is in progress"}
		}
		if prev.Location != "" {
			w.Header().Set("Location", prev.Location)
		}
		if prev.ContentType != "" {
			w.Header().Set("Content-Type", prev.ContentType)
		}
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(prev.StatusCode)
		_, _ = w.Write(prev.Body)
		return nil
	}
	tw := &teeWriter{ResponseWriter: w}
	if err := next(tw, r); err != nil {
		writeError(tw, r, err)
	}
	if tw.status >= 500 || tw.status == 0 {
		if err := idempotency.Release(r.Context(), s.store, key); err != nil {
			logger(r.Context()).Error("release idempotency key", "err", err)
		}
		return nil
	}
	rec.StatusCode = tw.status
	rec.Location = tw.Header().Get("Location")
	rec.ContentType = tw.Header().Get("Content-Type")
	rec.Body = tw.buf.Bytes()
	if err := idempotency.Complete(r.Context(), s.store, rec); err != nil {
		logger(r.Context()).Error("store idempotent response", "err", err)
	}
	return nil
}

// spoolMemory is the largest request body spoolBody keeps in memory.
const spoolMemory = 1 << 20

// spoolBody reads body, writing it to h as it goes, and returns a reader
// of the same bytes: from memory up to spoolMemory, else from a temporary
// file that Close removes. An idempotent request is hashed before it runs,
// and a bank file uploaded with an Idempotency-Key (Autogiro and AvtaleGiro
// imports, up to 256 MiB) must not be held in memory for it.
func spoolBody(body io.Reader, h io.Writer) (io.ReadCloser, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.TeeReader(io.LimitReader(body, spoolMemory+1), h))
	if err != nil {
		return nil, err
	}
	if n <= spoolMemory {
		return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
	}
	f, err := os.CreateTemp("", "kadens-request-*")
	if err != nil {
		return nil, fmt.Errorf("spool request body: %w", err)
	}
	spooled := &tempFile{f}
	if _, err := f.Write(buf.Bytes()); err != nil {
		spooled.Close()
		return nil, fmt.Errorf("spool request body: %w", err)
	}
	if _, err := io.Copy(f, io.TeeReader(body, h)); err != nil {
		spooled.Close()
		return nil, err // the body's error as it is: *http.MaxBytesError → 413
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		spooled.Close()
		return nil, fmt.Errorf("spool request body: %w", err)
	}
	return spooled, nil
}

// tempFile is a spooled body; Close removes it.
type tempFile struct{ *os.File }

func (t *tempFile) Close() error {
	err := t.File.Close()
	if rmErr := os.Remove(t.Name()); err == nil {
		err = rmErr
	}
	return err
}
