package avtalegiro_test

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// peakHeap runs f and returns how far the heap's objects grew above what
// they were before it, sampled every 200 µs. The collector runs at
// GOGC=10 meanwhile, so the heap tracks what is live: a file held whole
// shows as its size.
func peakHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	peak = max(peak, read())
	if peak < base {
		return 0
	}
	return peak - base
}

// streamOCR is an OCR giro file of n payments written as it is read: the
// test holds no copy of it, so what the import holds is what is measured.
func streamOCR(t testing.TB, serial, n int) io.Reader {
	r, w := io.Pipe()
	go func() {
		writeOCR(t, w, serial, n)
		w.Close()
	}()
	return r
}

// memoryOf exports a claim file of n claims, downloads it, and imports an
// OCR file of n payments, and returns the peak heap growth of each.
func memoryOf(t testing.TB, eng store.Engine, n int) (export, download, imp uint64) {
	st, ctx, account, mandate := benchTenant(t, eng)
	tenant, _ := tenancy.From(ctx)
	scheduleClaims(t, st, tenant, account, mandate, n)
	var f avtalegiro.AvtaleGiroFile
	export = peakHeap(func() {
		var ok bool
		var err error
		f, ok, err = avtalegiro.Export(ctx, st, account, benchNow)
		if err != nil || !ok || f.Transactions != n {
			t.Fatalf("export: %+v %v %v", f, ok, err)
		}
	})
	download = peakHeap(func() {
		if _, err := io.Copy(io.Discard, avtalegiro.FileContent(ctx, st, f.ID)); err != nil {
			t.Fatal(err)
		}
	})
	imp = peakHeap(func() {
		res, err := avtalegiro.ImportFile(ctx, st, streamOCR(t, 7, n), benchNow)
		if err != nil || res.Payments != n {
			t.Fatalf("import: %+v %v", res, err)
		}
	})
	return export, download, imp
}

// TestMemoryFlatInFileSize: exporting, downloading and importing a file
// ten times as large does not take ten times the memory. At 30,000 items
// the files are about 5 MB; holding one whole (as before chunked storage)
// shows as 10 MB or more heap than at 3,000.
func TestMemoryFlatInFileSize(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 33,000 claims and payments")
	}
	const slack = 4 << 20
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			// Ten times the items, 1,000 → 10,000: a buffer that grows with
			// the file shows as megabytes at 10,000 already (the slack is
			// 4 MiB), and 3,000 → 30,000 cost PostgreSQL's pass some 150 s
			// of writing for the same finding. (Under the race detector its
			// shadow memory is outside the Go heap measured here.)
			small := 1_000
			e1, d1, i1 := memoryOf(t, eng, small)
			e2, d2, i2 := memoryOf(t, eng, 10*small)
			t.Logf("peak heap growth, %d → %d items: export %d → %d KiB, download %d → %d KiB, import %d → %d KiB",
				small, 10*small, e1>>10, e2>>10, d1>>10, d2>>10, i1>>10, i2>>10)
			for _, c := range []struct {
				what         string
				small, large uint64
			}{{"export", e1, e2}, {"download", d1, d2}, {"import", i1, i2}} {
				if c.large > c.small+slack {
					t.Errorf("%s: %d KiB at %d items, %d KiB at %d: memory grows with the file", c.what, c.small>>10, small, c.large>>10, 10*small)
				}
			}
		})
	}
}

// BenchmarkMemory10kVs100k reports the peak heap growth (MB) of
// exporting, downloading and importing files of 10,000 and 100,000 items.
func BenchmarkMemory10kVs100k(b *testing.B) {
	for _, eng := range storetest.Engines() {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/%d", eng, n), func(b *testing.B) {
				var e, d, i uint64
				for range b.N {
					e1, d1, i1 := memoryOf(b, eng, n)
					e, d, i = max(e, e1), max(d, d1), max(i, i1)
				}
				b.ReportMetric(float64(e)/(1<<20), "export-peak-MB")
				b.ReportMetric(float64(d)/(1<<20), "download-peak-MB")
				b.ReportMetric(float64(i)/(1<<20), "import-peak-MB")
			})
		}
	}
}
