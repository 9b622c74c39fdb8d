package substatus_test

import (
	"database/sql"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/kadens/kadens/internal/substatus"
)

// TestOneDefinition holds the Go rule and both SQL forms to each other on
// each engine: for periods with and without a cancellation and times on
// and around every boundary, SQL's CASE gives At's status, and exactly that
// one of the four Is conditions holds.
func TestOneDefinition(t *testing.T) {
	engines := map[string]struct{ driver, dsn, ts string }{
		"sqlite": {"sqlite", ":memory:", "?"},
	}
	if url := os.Getenv("KADENS_TEST_POSTGRES_URL"); url != "" {
		engines["postgres"] = struct{ driver, dsn, ts string }{"pgx", url, "?::timestamptz"}
	}
	for name, e := range engines {
		t.Run(name, func(t *testing.T) {
			db, err := sql.Open(e.driver, e.dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			rng := rand.New(rand.NewPCG(7, 27))
			base := time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC)
			for i := range 200 {
				start := base.Add(time.Duration(rng.IntN(100)) * time.Hour)
				end := start.Add(time.Duration(1+rng.IntN(100)) * time.Hour)
				var cancel *time.Time
				if rng.IntN(2) == 0 {
					c := start.Add(time.Duration(rng.IntN(150)-25) * time.Hour)
					cancel = &c
				}
				nows := []time.Time{start, end, start.Add(-time.Microsecond), end.Add(-time.Microsecond), start.Add(time.Duration(rng.IntN(200)-50) * time.Hour)}
				if cancel != nil {
					nows = append(nows, *cancel, cancel.Add(-time.Microsecond))
				}
				for _, now := range nows {
					want := substatus.At(start, end, cancel, now)
					q := "SELECT " + substatus.SQL("s", "n.now")
					for _, st := range substatus.All {
						q += ", CASE WHEN " + substatus.Is("s", st, "n.now") + " THEN 1 ELSE 0 END"
					}
					q += " FROM (SELECT " + e.ts + " AS period_start, " + e.ts + " AS period_end, " + e.ts + " AS cancel_effective_at) s, (SELECT " + e.ts + " AS now) n"
					if name == "postgres" {
						q = numbered(q)
					}
					var got string
					holds := make([]int, len(substatus.All))
					dest := []any{&got}
					for j := range holds {
						dest = append(dest, &holds[j])
					}
					var c any
					if cancel != nil {
						c = *cancel
					}
					if err := db.QueryRow(q, start, end, c, now).Scan(dest...); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					if got != want {
						t.Errorf("case %d at %v: SQL says %s, At says %s (period %v–%v, cancel %v)", i, now, got, want, start, end, cancel)
					}
					for j, st := range substatus.All {
						if (holds[j] == 1) != (st == want) {
							t.Errorf("case %d at %v: Is(%s) is %d, the status is %s", i, now, st, holds[j], want)
						}
					}
				}
			}
		})
	}
}

// numbered turns ? placeholders into PostgreSQL's $1, $2, ….
func numbered(q string) string {
	out, n := make([]byte, 0, len(q)+8), 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			out = append(out, '$')
			out = strconv.AppendInt(out, int64(n), 10)
			continue
		}
		out = append(out, q[i])
	}
	return string(out)
}

func TestUnknownStatusIsNoCondition(t *testing.T) {
	if c := substatus.Is("", "Paused", "$2"); c != "" {
		t.Errorf("Is(Paused) = %q", c)
	}
}
