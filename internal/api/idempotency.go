package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kadens/kadens/internal/store"
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
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, next handlerFunc) error {
	key := r.Header.Get(IdempotencyHeader)
	if key == "" || r.Method != http.MethodPost {
		return next(w, r)
	}
	if err := checkIdempotencyKey(key); err != nil {
		return err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err // *http.MaxBytesError → 413
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.RequestURI() + "\n"))
	h.Write(body)
	rec := store.IdempotencyRecord{
		Key: key, Method: r.Method, Path: r.URL.RequestURI(),
		RequestHash: hex.EncodeToString(h.Sum(nil)), CreatedAt: s.now(),
	}
	prev, claimed, err := s.store.ClaimIdempotencyKey(r.Context(), rec, idempotencyWindow)
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
		if err := s.store.ReleaseIdempotencyKey(r.Context(), key); err != nil {
			logger(r.Context()).Error("release idempotency key", "err", err)
		}
		return nil
	}
	rec.StatusCode = tw.status
	rec.Location = tw.Header().Get("Location")
	rec.ContentType = tw.Header().Get("Content-Type")
	rec.Body = tw.buf.Bytes()
	if err := s.store.CompleteIdempotencyKey(r.Context(), rec); err != nil {
		logger(r.Context()).Error("store idempotent response", "err", err)
	}
	return nil
}
