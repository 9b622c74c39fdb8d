package autogiro_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/autogiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// The performance targets of docs/PERFORMANCE.md ("Autogiro"): export of
// 100,000 pending transactions in at most 1 s, import of a 100,000-record
// payment specification in at most 2 s, on both engines. Run with
//
//	go test ./internal/autogiro -run XXX -bench . -benchtime 3x -cpu 1
//
// (KADENS_TEST_POSTGRES_URL and KADENS_TEST_ONLY_ENGINE=postgres for
// PostgreSQL). Setting up 100,000 rows is not timed.

const benchTx = 100_000

// benchEnv: 1,000 active mandates with 100 transactions each.
func benchEnv(b testing.TB, st *store.Store) *env { return benchEnvN(b, st, 100) }

// benchEnvN: 1,000 active mandates with perMandate transactions each.
func benchEnvN(b testing.TB, st *store.Store, perMandate int) *env {
	now := at("2026-11-20T08:00:00Z")
	e := newEnv(b, st, now)
	for i := range 1000 {
		e.mandate(int64(10000+i), "3300", "121212-1212", "19121212-1212", now)
	}
	db := st.DB()
	if _, err := db.Exec(`UPDATE autogiro_mandates SET status = 'Active' WHERE tenant_id = $1`, e.tenant); err != nil {
		b.Fatal(err)
	}
	// 100,000 rows in one statement: a recursive series joined to the
	// mandates, ids made unique from the mandate id and the counter.
	_, err := db.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < `+strconv.Itoa(perMandate)+`)
		INSERT INTO autogiro_transactions (tenant_id, id, mandate_id, account_id, kind, amount, payment_date, reference,
			status, status_code, cancel_pending, settle_pending, created_at, updated_at)
		SELECT m.tenant_id, `+uuidExpr(st)+`, m.id, m.account_id, 'Debit', 1000 + n.i, '2026-12-01', 'R' || n.i,
			'Created', '', FALSE, FALSE, m.created_at, m.created_at
		FROM autogiro_mandates m CROSS JOIN n WHERE m.tenant_id = $1`, e.tenant)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// uuidExpr makes a distinct uuid per row from the mandate id and n.i: the
// last 3 hex digits of the mandate id's first group are replaced.
func uuidExpr(st *store.Store) string {
	expr := `substr(m.id, 1, 24) || substr('000000000000' || printf('%x', n.i), -3) || substr(m.id, 28)`
	if st.Engine() == store.Postgres {
		expr = `(substr(m.id::text, 1, 24) || lpad(to_hex(n.i), 3, '0') || substr(m.id::text, 28))::uuid`
	}
	return expr
}

func resetCreated(b testing.TB, e *env) {
	if _, err := e.st.DB().Exec(`UPDATE autogiro_transactions SET status = 'Created', payment_date = '2026-12-01'
		WHERE tenant_id = $1`, e.tenant); err != nil {
		b.Fatal(err)
	}
	if _, err := e.st.DB().Exec(`DELETE FROM autogiro_sent_payments WHERE tenant_id = $1`, e.tenant); err != nil {
		b.Fatal(err)
	}
	vacuum(b, e)
}

// resetSent puts the transactions back as the export left them: stored
// Created, with their rows in autogiro_sent_payments (migration 00043),
// not waiting in PostgreSQL's queue.
func resetSent(b testing.TB, e *env) {
	for _, q := range []string{`UPDATE autogiro_transactions SET status = 'Created', status_code = '' WHERE tenant_id = $1`,
		`DELETE FROM autogiro_payment_queue WHERE tenant_id = $1`} {
		if _, err := e.st.DB().Exec(q, e.tenant); err != nil {
			b.Fatal(err)
		}
	}
}

// vacuum clears the dead row versions the untimed resets leave and
// refreshes statistics, as autovacuum does on a live PostgreSQL between
// one day's export and the next; without it every run is slower than the
// last.
func vacuum(b testing.TB, e *env) {
	if e.st.Engine() != store.Postgres {
		return
	}
	for _, t := range []string{"autogiro_transactions", "autogiro_payment_queue", "autogiro_sent_payments", "autogiro_mandates", "autogiro_imports"} {
		if _, err := e.st.DB().Exec(`VACUUM ANALYZE ` + t); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExport100k(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			e := benchEnv(b, storetest.Open(b, eng))
			now := at("2026-11-24T08:00:00Z")
			var cpu cpuMeter
			cpu.watch(b, e.st)
			for b.Loop() {
				b.StopTimer()
				resetCreated(b, e)
				b.StartTimer()
				cpu.begin()
				f, err := autogiro.Export(e.ctx, e.st, e.org, now, nil)
				cpu.end()
				if err != nil {
					b.Fatal(err)
				}
				if f.Counts.Debits != benchTx {
					b.Fatalf("%+v", f.Counts)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchTx, "ns/transaction")
			cpu.report(b)
		})
	}
}

// BenchmarkExportMemory: the export's peak memory with 10,000 and 100,000
// payments, to show it does not grow with the file ("memory flat in the
// file size"). peak-heap-MB is the most Go heap in use during the export
// above what was in use before it (sampled every millisecond); peak-rss-MB
// the process's resident high-water mark during the export (reset through
// /proc/self/clear_refs) above its resident size before. SQLite's own
// memory (page cache, sorter) is outside the Go heap but inside the RSS.
func BenchmarkExportMemory(b *testing.B) {
	for _, eng := range storetest.Engines() {
		for _, per := range []int{10, 100} {
			b.Run(fmt.Sprintf("%s/%dk", eng, per), func(b *testing.B) {
				e := benchEnvN(b, storetest.Open(b, eng), per)
				now := at("2026-11-24T08:00:00Z")
				var peakHeap, peakRSS float64
				for b.Loop() {
					b.StopTimer()
					resetCreated(b, e)
					var f autogiro.ExportFile
					heap, rss := peakMemory(b, func() (err error) {
						f, err = autogiro.Export(e.ctx, e.st, e.org, now, nil)
						return err
					})
					if f.Counts.Debits != per*1000 {
						b.Fatalf("%+v", f.Counts)
					}
					peakHeap, peakRSS = maxf(peakHeap, heap), maxf(peakRSS, rss)
					b.StartTimer()
				}
				b.ReportMetric(peakHeap, "peak-heap-MB")
				b.ReportMetric(peakRSS, "peak-rss-MB")
			})
		}
	}
}

// BenchmarkImportMemory: the import's peak memory for payment
// specifications of 10,000 and 100,000 records (metrics as
// BenchmarkExportMemory). The import streams the file but holds the
// account's open payments to match records against.
func BenchmarkImportMemory(b *testing.B) {
	for _, eng := range storetest.Engines() {
		for _, per := range []int{10, 100} {
			b.Run(fmt.Sprintf("%s/%dk", eng, per), func(b *testing.B) {
				e := benchEnvN(b, storetest.Open(b, eng), per)
				now := at("2026-11-24T08:00:00Z")
				f, err := autogiro.Export(e.ctx, e.st, e.org, now, nil)
				if err != nil {
					b.Fatal(err)
				}
				// The report is read from a file, as a request body streams:
				// holding it in this process would raise the garbage
				// collector's allowance in proportion to its size and make
				// the peak grow with the file even though the import holds
				// none of it.
				spec := specOf(b, e.content(f.ID))
				size := len(spec)
				path := b.TempDir() + "/report"
				if err := os.WriteFile(path, spec, 0o600); err != nil {
					b.Fatal(err)
				}
				spec = nil
				var peakHeap, peakRSS float64
				for b.Loop() {
					b.StopTimer()
					resetSent(b, e)
					if _, err := e.st.DB().Exec(`DELETE FROM autogiro_imports WHERE tenant_id = $1`, e.tenant); err != nil {
						b.Fatal(err)
					}
					vacuum(b, e)
					var res autogiro.ImportResult
					file, err := os.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					heap, rss := peakMemory(b, func() (err error) {
						res, err = autogiro.Import(e.ctx, e.st, file, now)
						return err
					})
					file.Close()
					if res.PaymentsCompleted != per*1000 {
						b.Fatalf("%d completed", res.PaymentsCompleted)
					}
					peakHeap, peakRSS = maxf(peakHeap, heap), maxf(peakRSS, rss)
					b.StartTimer()
				}
				b.ReportMetric(peakHeap, "peak-heap-MB")
				b.ReportMetric(peakRSS, "peak-rss-MB")
				b.ReportMetric(float64(size)/1e6, "file-MB")
			})
		}
	}
}

// peakMemory runs fn (timed) and returns the most Go heap in use during it
// above what was in use before, and the process's resident high-water
// mark during it above its resident size before, in MiB.
func peakMemory(b *testing.B, fn func() error) (heapMB, rssMB float64) {
	runtime.GC()
	base := heapInUse()
	rss0 := rssKB("VmRSS")
	resetPeakRSS()
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var max uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				peak <- max
				return
			case <-t.C:
				if h := heapInUse(); h > max {
					max = h
				}
			}
		}
	}()
	b.StartTimer()
	err := fn()
	b.StopTimer()
	close(stop)
	max := <-peak
	if err != nil {
		b.Fatal(err)
	}
	if max > base {
		heapMB = float64(max-base) / (1 << 20)
	}
	return heapMB, float64(rssKB("VmHWM")-rss0) / 1024
}

func maxf(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

// heapInUse is the bytes of live and not yet swept heap objects.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// rssKB reads a field of /proc/self/status in kB (0 if unreadable).
func rssKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// resetPeakRSS sets VmHWM back to the current RSS (Linux: clear_refs 5).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func BenchmarkImport100k(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			e := benchEnv(b, storetest.Open(b, eng))
			now := at("2026-11-24T08:00:00Z")
			f, err := autogiro.Export(e.ctx, e.st, e.org, now, nil)
			if err != nil {
				b.Fatal(err)
			}
			spec := specOf(b, e.content(f.ID))
			var cpu cpuMeter
			cpu.watch(b, e.st)
			for b.Loop() {
				b.StopTimer()
				resetSent(b, e)
				if _, err := e.st.DB().Exec(`DELETE FROM autogiro_imports WHERE tenant_id = $1`, e.tenant); err != nil {
					b.Fatal(err)
				}
				vacuum(b, e)
				b.StartTimer()
				cpu.begin()
				res, err := autogiro.Import(e.ctx, e.st, bytes.NewReader(spec), now)
				cpu.end()
				if err != nil {
					b.Fatal(err)
				}
				if res.PaymentsCompleted != benchTx {
					b.Fatalf("%d completed", res.PaymentsCompleted)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchTx, "ns/record")
			b.ReportMetric(float64(len(spec))/1e6, "file-MB")
			cpu.report(b)
		})
	}
}

// specOf is the payment specification completing every debit of a file.
func specOf(b *testing.B, file []byte) []byte {
	var out strings.Builder
	today := "20261201"
	out.WriteString(line(1, "01AUTOGIRO", 25, today+"120000000001", 45, "BET. SPEC & STOPP TK", 65, "543210", 71, "00"+bankgiro) + "\r\n")
	n := 0
	for _, l := range strings.Split(string(file), "\r\n") {
		if strings.HasPrefix(l, "82") {
			out.WriteString(line(1, l[:69], 80, "0") + "\r\n")
			n++
		}
	}
	out.WriteString(line(1, "09"+today+"9900", 15, "000000", 21, fmt.Sprintf("%012d", n), 33, "000000000000000000000000000000000000") + "\r\n")
	return []byte(out.String())
}

// cpuTime is the process's user and system CPU time: the benchmarks report
// it per operation beside the wall time, because the machine they ran on
// is shared and busy (docs/PERFORMANCE.md) and CPU time is what the
// export or import itself costs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter sums the CPU time of the timed parts of a benchmark: this
// process's, and on PostgreSQL the server backend's (the store is held to
// one connection per pool, whose backend's /proc/PID/stat is read; the
// server runs on the same machine).
type cpuMeter struct {
	backends       []int
	start, dbStart time.Duration
	total, dbTotal time.Duration
}

// watch holds st to one connection per pool and records their backends.
func (m *cpuMeter) watch(b *testing.B, st *store.Store) {
	if st.Engine() != store.Postgres {
		return
	}
	for _, db := range []*sql.DB{st.DB(), st.ReadDB()} {
		db.SetMaxOpenConns(1)
		var pid int
		if err := db.QueryRow(`SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			b.Fatal(err)
		}
		if !slices.Contains(m.backends, pid) {
			m.backends = append(m.backends, pid)
		}
	}
}

// backendCPU is the backends' user and system time (clock ticks of 10 ms).
func (m *cpuMeter) backendCPU() time.Duration {
	var total time.Duration
	for _, pid := range m.backends {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(ut+st) * 10 * time.Millisecond
	}
	return total
}

func (m *cpuMeter) begin() { m.start, m.dbStart = cpuTime(), m.backendCPU() }
func (m *cpuMeter) end() {
	m.total += cpuTime() - m.start
	m.dbTotal += m.backendCPU() - m.dbStart
}
func (m *cpuMeter) report(b *testing.B) {
	b.ReportMetric(float64(m.total.Milliseconds())/float64(b.N), "cpu-ms/op")
	if len(m.backends) > 0 {
		b.ReportMetric(float64(m.dbTotal.Milliseconds())/float64(b.N), "pg-cpu-ms/op")
	}
}
