//go:build unix

package store

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// walIndexSignal is SQLite's change signal without a statement: it reads
// the header of the WAL index, the database's "-shm" file that every
// connection of every process maps and that a writer updates as the last
// step of each commit (SQLite's file format, "WAL-Index Format"). The
// header's change counter (iChange) grows with each committed
// transaction, and its frame count and salts with every WAL write or
// restart, so the header changes exactly when the database may have. A
// read of it costs tens of nanoseconds where PRAGMA data_version costs
// microseconds (a read transaction, with its file locks).
//
// The header is read as SQLite's own readers read it: the first copy,
// then the second, retried until the two agree (the writer writes the
// second copy first); a torn read answers "no signal" and the caller
// reads the database. The file is mapped read-only and shared, so writes
// of other processes are seen; SQLite never truncates it while this
// process holds a connection, and a fault reading it anyway (a file
// replaced under the mapping) turns into "no signal", not a crash.
type walIndexSignal struct {
	f   *os.File
	mem []byte
	mu  sync.Mutex
	// last is the header last seen; version counts the changes seen.
	last    walIndexHeader
	version uint64
}

// walIndexHeader is one copy of the WAL-index header: 48 bytes, in the
// machine's byte order.
type walIndexHeader [12]uint32

// walIndexHeaderSize is the two copies of the header.
const walIndexHeaderSize = 2 * 48

// openWALIndexSignal maps the WAL index of the SQLite database at path.
// The database must be open (in WAL mode) in this process already, so
// that the index exists and stays.
func openWALIndexSignal(path string) (*walIndexSignal, error) {
	f, err := os.Open(path + "-shm")
	if err != nil {
		return nil, fmt.Errorf("store: WAL index: %w", err)
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() < walIndexHeaderSize {
		f.Close()
		return nil, fmt.Errorf("store: WAL index %s is not initialized (%v)", f.Name(), err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, walIndexHeaderSize, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("store: map WAL index %s: %w", f.Name(), err)
	}
	return &walIndexSignal{f: f, mem: mem}, nil
}

func (w *walIndexSignal) current(context.Context) (uint64, bool) {
	h, ok := w.header()
	if !ok {
		return 0, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.version == 0 || h != w.last {
		w.last = h
		w.version++
	}
	return w.version, true
}

// header reads a consistent copy of the header: the two copies equal.
func (w *walIndexSignal) header() (h walIndexHeader, ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	for range 16 {
		var a, b walIndexHeader
		for i := range a {
			a[i] = atomic.LoadUint32((*uint32)(unsafe.Pointer(&w.mem[4*i])))
		}
		for i := range b {
			b[i] = atomic.LoadUint32((*uint32)(unsafe.Pointer(&w.mem[48+4*i])))
		}
		if a == b {
			return a, true
		}
	}
	return h, false
}

func (w *walIndexSignal) close() error {
	err := syscall.Munmap(w.mem)
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}
