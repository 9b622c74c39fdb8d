package api

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// TestSpoolBody: an idempotent request's body is hashed while it is read
// and handed on unchanged; up to spoolMemory it stays in memory, a larger
// one (a bank file) goes to a temporary file that Close removes, and the
// body limit's error comes through for the 413.
func TestSpoolBody(t *testing.T) {
	for _, size := range []int{0, 10, spoolMemory, spoolMemory + 1, 3*spoolMemory + 17} {
		body := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		h := sha256.New()
		r, err := spoolBody(bytes.NewReader(body), h)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		file, onDisk := r.(*tempFile)
		if onDisk != (size > spoolMemory) {
			t.Errorf("%d bytes: spooled to disk %v", size, onDisk)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%d bytes: read back %d bytes, %v", size, len(got), err)
		}
		if want := sha256.Sum256(body); !bytes.Equal(h.Sum(nil), want[:]) {
			t.Errorf("%d bytes: the hash is not the body's", size)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if onDisk {
			if _, err := os.Stat(file.Name()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%d bytes: the spool file %s is still there after Close (%v)", size, file.Name(), err)
			}
		}
	}

	limited := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(bytes.NewReader(make([]byte, 2*spoolMemory))), spoolMemory+100)
	var tooLarge *http.MaxBytesError
	if _, err := spoolBody(limited, sha256.New()); !errors.As(err, &tooLarge) {
		t.Fatalf("a body over the limit: %v, want *http.MaxBytesError", err)
	}
}
