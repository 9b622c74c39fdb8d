// Package atomicfile writes files whole or not at all: the content goes to
// a hidden temporary file in the target's directory, which is flushed to
// the disk (fsync), closed and then renamed over the target, after which
// the directory itself is flushed so that the rename survives a crash too.
// A reader of the target, or a process that looks after a crash (kill -9,
// power loss), sees the old file or the complete new one, never an empty or
// partial file.
//
// Every file Kadens writes goes through this package (the export files of
// the operator commands, the Peppol drop directory, the master key, the
// demo's credentials). github.com/google/renameio/v2 does the same except
// the directory's fsync, without which the rename may be lost at a crash
// while the caller was told the file is there; a wrapper adding that would
// be as long as this package.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// File is a file being written: an *os.File under a temporary name until
// Commit (or CommitNew) puts it in place. Abort (deferred right after
// Create) removes the temporary file if it was not committed.
type File struct {
	*os.File
	name string
	perm fs.FileMode
	done bool
}

// Create starts writing name (with permissions perm) under a temporary
// name in the same directory: ".<base>.<random>.tmp", hidden, so that a
// program picking up files from the directory passes it by.
func Create(name string, perm fs.FileMode) (*File, error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	return &File{File: f, name: name, perm: perm}, nil
}

// Name is the name the file gets at Commit (not the temporary one).
func (f *File) Name() string { return f.name }

// TempName is the temporary file's name.
func (f *File) TempName() string { return f.File.Name() }

// Commit flushes the file to the disk, closes it and renames it over its
// name, replacing what was there; then it flushes the directory.
func (f *File) Commit() error {
	return f.commit(func(tmp string) error { return os.Rename(tmp, f.name) })
}

// CommitNew is Commit for a file that must not replace one that exists:
// it fails with an error wrapping fs.ErrExist when name exists (say,
// another process created it first), leaving that file as it is. The
// file is linked into place (link(2) refuses an existing name, atomically)
// and the temporary name removed.
func (f *File) CommitNew() error {
	return f.commit(func(tmp string) error {
		if err := os.Link(tmp, f.name); err != nil {
			return err
		}
		return os.Remove(tmp)
	})
}

func (f *File) commit(place func(tmp string) error) error {
	if f.done {
		return fmt.Errorf("write %s: already committed or aborted", f.name)
	}
	f.done = true
	tmp := f.File.Name()
	err := f.Chmod(f.perm)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(tmp)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.name, err)
	}
	if err := SyncDir(filepath.Dir(f.name)); err != nil {
		return fmt.Errorf("write %s: %w", f.name, err)
	}
	return nil
}

// Abort closes and removes the temporary file, unless the file was
// committed; it is safe to defer in every case.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.File.Name())
}

// Write writes name whole with what fn writes to it, replacing the file
// that was there only once fn returned nil and the content is on the disk.
func Write(name string, perm fs.FileMode, fn func(io.Writer) error) error {
	f, err := Create(name, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := fn(f); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return f.Commit()
}

// WriteFile is os.WriteFile, whole or not at all.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	return Write(name, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteNew writes name whole unless it exists: then the error wraps
// fs.ErrExist and the existing file is left as it is.
func WriteNew(name string, data []byte, perm fs.FileMode) error {
	f, err := Create(name, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return f.CommitNew()
}

// SyncDir flushes directory dir, so that files created, renamed or removed
// in it stay so after a crash. File systems that cannot sync a directory
// (EINVAL on some) are taken at their word.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
