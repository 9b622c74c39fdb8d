package peppol

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kadens/kadens/internal/atomicfile"
)

// Directory drops documents as files into a directory an access point
// picks them up from, one file per document:
//
//	<Dir>/<kind>-<number>-<delivery id>.xml
//
// written under a hidden temporary name, flushed to the disk and renamed
// into place (internal/atomicfile), so the access point never reads half a
// file, not even after a crash. A ledger in <Dir>/.kadens records
// each hand-over: <id>.claim is created (exclusively) just before the
// rename and becomes <id>.sent just after it. A repeated Send of the same
// delivery finds the ledger and answers the first receipt instead of
// dropping the file again, so a process that died after the rename and
// before recording it does not hand the document over twice. The one
// moment the ledger cannot settle — a claim without its .sent, and the file
// already taken away — fails the delivery for an operator to check rather
// than risk a duplicate.
type Directory struct {
	Dir string
}

// Name implements Sender.
func (d *Directory) Name() string { return "Directory" }

func (d *Directory) ledger(id, ext string) string { return filepath.Join(d.Dir, ".kadens", id+ext) }

// Send implements Sender.
func (d *Directory) Send(_ context.Context, m Message) (Receipt, error) {
	if strings.ContainsAny(m.IdempotencyKey, `/\.`) || m.IdempotencyKey == "" {
		return Receipt{}, fmt.Errorf("peppol: bad idempotency key %q", m.IdempotencyKey)
	}
	name := fmt.Sprintf("%s-%s-%s.xml", strings.ToLower(m.Kind), m.Number, m.IdempotencyKey)
	final := filepath.Join(d.Dir, name)
	sent := Receipt{MessageID: name, Status: PeppolSent, Final: true}
	if err := os.MkdirAll(filepath.Join(d.Dir, ".kadens"), 0o755); err != nil {
		return Receipt{}, fmt.Errorf("peppol: drop directory: %w", err)
	}
	if _, err := os.Stat(d.ledger(m.IdempotencyKey, ".sent")); err == nil {
		return sent, nil
	}
	if _, err := os.Stat(d.ledger(m.IdempotencyKey, ".claim")); err == nil {
		// An earlier attempt got as far as the rename, or just before it.
		if _, err := os.Stat(final); err == nil {
			return sent, os.Rename(d.ledger(m.IdempotencyKey, ".claim"), d.ledger(m.IdempotencyKey, ".sent"))
		}
		return Receipt{}, &PermanentError{Reason: "an earlier attempt was interrupted while dropping " + name +
			" and the file is gone: check with the access point whether it was picked up"}
	}
	// The document is written under a hidden temporary name and flushed
	// (internal/atomicfile); the claim is made durable before the rename,
	// and the rename and the record after it too (each directory synced).
	tmp, err := atomicfile.Create(final, 0o644)
	if err != nil {
		return Receipt{}, fmt.Errorf("peppol: drop directory: %w", err)
	}
	defer tmp.Abort() // after the commit there is nothing to remove
	if _, err := tmp.Write(m.Body); err != nil {
		return Receipt{}, fmt.Errorf("peppol: write %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		return Receipt{}, fmt.Errorf("peppol: write %s: %w", name, err)
	}
	ledger := filepath.Join(d.Dir, ".kadens")
	claim, err := os.OpenFile(d.ledger(m.IdempotencyKey, ".claim"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return Receipt{}, fmt.Errorf("peppol: %s is being dropped by another attempt", name)
	}
	if err != nil {
		return Receipt{}, fmt.Errorf("peppol: drop ledger: %w", err)
	}
	claim.Close()
	if err := atomicfile.SyncDir(ledger); err != nil {
		os.Remove(d.ledger(m.IdempotencyKey, ".claim"))
		return Receipt{}, fmt.Errorf("peppol: drop ledger: %w", err)
	}
	if err := tmp.Commit(); err != nil {
		os.Remove(d.ledger(m.IdempotencyKey, ".claim"))
		return Receipt{}, fmt.Errorf("peppol: drop %s: %w", name, err)
	}
	if err := os.Rename(d.ledger(m.IdempotencyKey, ".claim"), d.ledger(m.IdempotencyKey, ".sent")); err != nil {
		return Receipt{}, fmt.Errorf("peppol: drop ledger: %w", err)
	}
	if err := atomicfile.SyncDir(ledger); err != nil {
		return Receipt{}, fmt.Errorf("peppol: drop ledger: %w", err)
	}
	return sent, nil
}

// Status implements Sender: a dropped file has nothing more to tell.
func (d *Directory) Status(_ context.Context, messageID string) (Receipt, error) {
	return Receipt{MessageID: messageID, Status: PeppolSent, Final: true}, nil
}
