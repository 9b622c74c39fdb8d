package peppol_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kadens/kadens/internal/peppol"
)

func TestDirectoryDrop(t *testing.T) {
	dir := t.TempDir()
	d := &peppol.Directory{Dir: dir}
	m := peppol.Message{IdempotencyKey: "0190a3c2-0000-7000-8000-0000000000aa", Kind: peppol.PeppolInvoice, Number: "123",
		Body: []byte("<Invoice/>")}
	ctx := context.Background()
	r, err := d.Send(ctx, m)
	if err != nil || r.Status != peppol.PeppolSent || !r.Final || r.MessageID != "invoice-123-"+m.IdempotencyKey+".xml" {
		t.Fatalf("first drop: %+v %v", r, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, r.MessageID)); err != nil || string(b) != "<Invoice/>" {
		t.Fatalf("dropped file: %q %v", b, err)
	}
	// Picked up by the access point, then sent again: nothing new.
	os.Remove(filepath.Join(dir, r.MessageID))
	if r2, err := d.Send(ctx, m); err != nil || r2 != r {
		t.Fatalf("second drop: %+v %v", r2, err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.xml")); len(files) != 0 {
		t.Fatalf("dropped twice: %v", files)
	}
	// No temporary files are left behind.
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}

	// An attempt interrupted between its claim and its record: the file is
	// there → it was dropped; the file is gone → nobody can tell, so the
	// delivery fails for an operator instead of risking a duplicate.
	m2 := m
	m2.IdempotencyKey, m2.Number = "0190a3c2-0000-7000-8000-0000000000bb", "124"
	name := "invoice-124-" + m2.IdempotencyKey + ".xml"
	os.WriteFile(filepath.Join(dir, ".kadens", m2.IdempotencyKey+".claim"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, name), m2.Body, 0o644)
	if r, err := d.Send(ctx, m2); err != nil || r.MessageID != name {
		t.Fatalf("interrupted after the rename: %+v %v", r, err)
	}
	m3 := m
	m3.IdempotencyKey, m3.Number = "0190a3c2-0000-7000-8000-0000000000cc", "125"
	os.WriteFile(filepath.Join(dir, ".kadens", m3.IdempotencyKey+".claim"), nil, 0o644)
	var perm *peppol.PermanentError
	if _, err := d.Send(ctx, m3); !errors.As(err, &perm) {
		t.Fatalf("interrupted, file gone: %v, want a PermanentError", err)
	}
	if _, err := d.Send(ctx, peppol.Message{IdempotencyKey: "../x", Body: []byte("x")}); err == nil {
		t.Fatal("a key with a path in it was accepted")
	}
}
