package avtalegiro_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/avtalegiro"
	"github.com/kadens/kadens/internal/avtalegiro/ocrgiro"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

const benchClaims = 100_000

// cpuTime is the process's user + system CPU time: on a shared, busy
// machine it says what an operation costs better than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pgBackends returns the PostgreSQL backends serving this process's
// connections: its TCP sockets' local ports (from /proc) are their
// client ports in pg_stat_activity. Linux only; nil elsewhere.
func pgBackends(db *sql.DB) []int {
	inodes := map[string]bool{}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var ports []string
	for _, f := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || !inodes[fs[9]] {
				continue
			}
			if i := strings.LastIndexByte(fs[1], ':'); i >= 0 {
				if port, err := strconv.ParseInt(fs[1][i+1:], 16, 32); err == nil {
					ports = append(ports, strconv.FormatInt(port, 10))
				}
			}
		}
	}
	if len(ports) == 0 {
		return nil
	}
	rows, err := db.Query(`SELECT pid FROM pg_stat_activity WHERE client_port IN (` + strings.Join(ports, ",") + `)`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var pids []int
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// backendCPU is the user + system CPU time of the given processes.
func backendCPU(pids []int) map[int]time.Duration {
	out := map[int]time.Duration{}
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = time.Duration(u+s) * 10 * time.Millisecond // USER_HZ is 100 on Linux
	}
	return out
}

// pgMeter measures the CPU the store's PostgreSQL backends spend.
type pgMeter struct {
	db     *sql.DB
	before map[int]time.Duration
}

func startPG(st *store.Store, eng store.Engine) *pgMeter {
	if eng != store.Postgres {
		return nil
	}
	return &pgMeter{db: st.DB(), before: backendCPU(pgBackends(st.DB()))}
}

// stop returns the CPU spent since start by the backends serving the
// store now (a backend started meanwhile counts whole).
func (m *pgMeter) stop() time.Duration {
	if m == nil {
		return 0
	}
	var d time.Duration
	for pid, t := range backendCPU(pgBackends(m.db)) {
		d += t - m.before[pid]
	}
	return d
}

// reportPostgresCPU reports cpu as pg-cpu-ms/op on PostgreSQL.
func reportPostgresCPU(b *testing.B, eng store.Engine, cpu time.Duration) {
	if eng == store.Postgres {
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "pg-cpu-ms/op")
	}
}

var benchNow = time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)

// benchTenant: a store with a tenant, an account and a mandate.
func benchTenant(b testing.TB, eng store.Engine) (*store.Store, context.Context, string, string) {
	st := storetest.Open(b, eng)
	tn, err := st.CreateTenant(context.Background(), "bench", false, benchNow)
	if err != nil {
		b.Fatal(err)
	}
	ctx := tenancy.With(context.Background(), tn.ID)
	a, err := avtalegiro.CreateAccount(ctx, st, avtalegiro.AvtaleGiroAccount{Name: "bench", BankAccountNumber: "12345678903",
		CustomerUnitID: "12345678", KIDAlgorithm: "MOD10", KIDLength: 15, LeadDays: 4, BaseComboAPIEndpointURL: "http://bank"}, benchNow)
	if err != nil {
		b.Fatal(err)
	}
	m, err := avtalegiro.CreateMandate(ctx, st, avtalegiro.NewAvtaleGiroMandate{AccountID: a.ID, KID: mandateKID, Notify: true}, benchNow)
	if err != nil {
		b.Fatal(err)
	}
	return st, ctx, a.ID, m
}

// scheduleClaims writes n Scheduled claims on the mandate (half with two
// notice lines) in multi-row inserts.
func scheduleClaims(b testing.TB, st *store.Store, tenant, account, mandate string, n int) {
	const rows = 50
	for i := 0; i < n; i += rows {
		var sb strings.Builder
		var args []any
		sb.WriteString(`INSERT INTO avtalegiro_claims (id, tenant_id, account_id, mandate_id, transaction_id, kid, amount, due_date,
			notify, short_name, external_reference, notice_lines, status, created_at, updated_at) VALUES `)
		for j := i; j < min(i+rows, n); j++ {
			if j > i {
				sb.WriteByte(',')
			}
			k := len(args)
			fmt.Fprintf(&sb, "($%d,$%d,$%d,$%d,$%d,$%d,$%d,$%d,$%d,$%d,$%d,$%d,'Scheduled',$%d,$%d)", k+1, k+2, k+3, k+4, k+5, k+6, k+7, k+8,
				k+9, k+10, k+11, k+12, k+13, k+13)
			notice := ""
			if j%2 == 0 {
				notice = `["Nordavis Digital, februar 2027","Beløp kr 299,00, forfall 15.02.2027"]`
			}
			args = append(args, store.NewID(), tenant, account, mandate, store.NewID(), mandateKID, 29900, "2027-02-15", j%2 == 0,
				"Kari Nordmann", "Faktura 1012", notice, benchNow)
		}
		if _, err := st.DB().Exec(sb.String(), args...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExportClaims100k: the account's claim file for 100,000
// scheduled claims (marking them Sent, writing and storing the file) in
// one transaction.
func BenchmarkExportClaims100k(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			st, ctx, account, mandate := benchTenant(b, eng)
			tenant, _ := tenancy.From(ctx)
			scheduleClaims(b, st, tenant, account, mandate, benchClaims)
			b.ResetTimer()
			var cpu, pg time.Duration
			for i := 0; i < b.N; i++ {
				began, meter := cpuTime(), startPG(st, eng)
				f, ok, err := avtalegiro.Export(ctx, st, account, benchNow)
				if err != nil || !ok || f.Transactions != benchClaims {
					b.Fatalf("export: %+v %v %v", f, ok, err)
				}
				cpu += cpuTime() - began
				pg += meter.stop()
				b.StopTimer()
				// Scheduled again (the triggers queue them again); on SQLite
				// the sendings go (migration 00042).
				for _, q := range []string{`DELETE FROM avtalegiro_sent_claims`, `UPDATE avtalegiro_claims SET status = 'Scheduled', claim_file_id = NULL`} {
					if _, err := st.DB().Exec(q); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			reportPostgresCPU(b, eng, pg)
		})
	}
}

func ocrFile(b testing.TB, serial, n int) []byte {
	var buf bytes.Buffer
	writeOCR(b, &buf, serial, n)
	return buf.Bytes()
}

// writeOCR writes an OCR giro file of n payments of the bench mandate.
func writeOCR(b testing.TB, out io.Writer, serial, n int) {
	w := ocrgiro.NewWriter(out)
	d := ocrgiro.Date{Year: 2027, Month: 2, Day: 15}
	_ = w.Begin(ocrgiro.Start{Sender: ocrgiro.NetsID, Number: fmt.Sprintf("%07d", serial), Recipient: "12345678"})
	_ = w.BeginAssignment(ocrgiro.AssignmentStart{Service: 9, Type: 0, AgreementID: "001234567", Number: fmt.Sprintf("%07d", serial), Account: "12345678903"})
	for i := 1; i <= n; i++ {
		if err := w.Payment(ocrgiro.Payment{Type: 15, Number: i, NetsDate: d, Centre: "13", DayCode: "15", PartialSettlement: "1",
			Serial: "00042", Amount: 29900, KID: mandateKID, FormNumber: "0", ArchiveRef: "150112345", BankDate: d, PayerAccount: "98765432103"}); err != nil {
			b.Error(err)
			return
		}
	}
	_ = w.EndAssignment(ocrgiro.AssignmentEnd{Date1: d, Date2: d, Date3: d})
	if err := w.Close(d); err != nil {
		b.Error(err)
	}
}

// BenchmarkImportOCR100k: importing an OCR giro file of 100,000 payments
// (parse, check, store the file and every payment for settlement) in one
// transaction. Settlement is BenchmarkSettlePayment.
func BenchmarkImportOCR100k(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			st, ctx, _, _ := benchTenant(b, eng)
			files := make([][]byte, b.N)
			for i := range files {
				files[i] = ocrFile(b, i+1, benchClaims)
			}
			b.SetBytes(int64(len(files[0])))
			b.ResetTimer()
			began, meter := cpuTime(), startPG(st, eng)
			for i := 0; i < b.N; i++ {
				res, err := avtalegiro.ImportFile(ctx, st, bytes.NewReader(files[i]), benchNow)
				if err != nil || res.Payments != benchClaims {
					b.Fatalf("import: %+v %v", res, err)
				}
			}
			b.ReportMetric(float64((cpuTime()-began).Milliseconds())/float64(b.N), "cpu-ms/op")
			reportPostgresCPU(b, eng, meter.stop())
		})
	}
}

// BenchmarkSettle10k: settling 10,000 imported OCR payments (each matched
// against claims and invoices and marked; here none matches, so each is
// kept as a problem — the per-payment reads and the batch transactions
// are what is measured, RecordPayment's own work is not). Before
// batching, every payment was a transaction of its own.
func BenchmarkSettle10k(b *testing.B) {
	const n = 10_000
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			st, ctx, _, _ := benchTenant(b, eng)
			tenant, _ := tenancy.From(ctx)
			var took time.Duration
			var cpu, pg time.Duration
			for i := 0; i < b.N; i++ {
				if _, err := avtalegiro.ImportFile(ctx, st, bytes.NewReader(ocrFile(b, 100+i, n)), benchNow); err != nil {
					b.Fatal(err)
				}
				c0, t0, meter := cpuTime(), time.Now(), startPG(st, eng)
				res, err := avtalegiro.SettlePayments(ctx, st, tenant, benchNow)
				took += time.Since(t0)
				cpu += cpuTime() - c0
				pg += meter.stop()
				if err != nil || res.Problems != n {
					b.Fatalf("settle: %+v %v", res, err)
				}
			}
			b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "settle-ms/op")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "settle-cpu-ms/op")
			if eng == store.Postgres {
				b.ReportMetric(float64(pg.Milliseconds())/float64(b.N), "settle-pg-cpu-ms/op")
			}
		})
	}
}
