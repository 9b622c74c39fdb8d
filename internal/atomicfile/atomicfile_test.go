package atomicfile_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/kadens/kadens/internal/atomicfile"
)

// entries lists dir's names (temporary ones included).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Until Commit the target keeps its old content and the new content is
// only under a hidden temporary name in the same directory; after it, the
// target has the new content and its permissions, and nothing else is left.
func TestCommitReplacesWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := atomicfile.Create(name, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if _, err := f.WriteString("new content"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, name); got != "old" {
		t.Fatalf("before commit the target reads %q", got)
	}
	if filepath.Dir(f.TempName()) != dir || filepath.Base(f.TempName())[0] != '.' {
		t.Fatalf("temporary file %s is not hidden in the target's directory", f.TempName())
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, name); got != "new content" {
		t.Fatalf("after commit the target reads %q", got)
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v %v, want 0640", fi.Mode(), err)
	}
	if es := entries(t, dir); len(es) != 1 {
		t.Fatalf("left in the directory: %v", es)
	}
	if err := f.Commit(); err == nil {
		t.Fatal("a second commit passed")
	}
}

// A writer that fails leaves the target as it was and no temporary file.
func TestWriteFailureLeavesTarget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "out.txt")
	if err := atomicfile.WriteFile(name, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := atomicfile.Write(name, 0o600, func(w io.Writer) error {
		if _, err := w.Write([]byte("half of the seco")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if got := read(t, name); got != "first" {
		t.Fatalf("target reads %q after a failed write", got)
	}
	if es := entries(t, dir); len(es) != 1 {
		t.Fatalf("left in the directory: %v", es)
	}
}

// WriteNew never replaces: the second writer gets fs.ErrExist and the
// first writer's content stays.
func TestWriteNewRefusesExisting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "master.key")
	if err := atomicfile.WriteNew(name, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteNew(name, []byte("two"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second WriteNew: %v, want fs.ErrExist", err)
	}
	if got := read(t, name); got != "one" {
		t.Fatalf("reads %q", got)
	}
	if es := entries(t, dir); len(es) != 1 {
		t.Fatalf("left in the directory: %v", es)
	}
}

// A directory that does not exist is an error naming the file.
func TestCreateInMissingDirectory(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "no", "such", "out.txt")
	if err := atomicfile.WriteFile(name, []byte("x"), 0o600); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v", err)
	}
}

// A file named without a directory goes to the current one.
func TestRelativeName(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := atomicfile.WriteFile("plain.txt", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "plain.txt")); got != "x" {
		t.Fatalf("reads %q", got)
	}
}
