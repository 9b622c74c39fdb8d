// Command river is the River (v0.51.1) side of the comparison in docs/WEBHOOKS.md
// ("Why not a job library"): one River job per webhook message, inserted
// set-based in the producing transaction, worked by a worker that signs and
// POSTs to a local receiver. It is its own module so that Kadens does not
// depend on River:
//
//	cd bench/webhook/river && go run . -engine sqlite -burst 20000
//	go run . -engine postgres -rate 2500 -duration 20s
package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite"
)

type DeliveryArgs struct {
	Seq int    `json:"seq"`
	URL string `json:"url"`
}

func (DeliveryArgs) Kind() string { return "delivery" }

var (
	committed []atomic.Int64
	arrived   []atomic.Int64
	count     atomic.Int64
	last      atomic.Int64
	client    = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	key       = []byte("0123456789abcdef0123456789abcdef")
)

type Worker struct {
	river.WorkerDefaults[DeliveryArgs]
}

func (Worker) Work(ctx context.Context, j *river.Job[DeliveryArgs]) error {
	body, _ := json.Marshal([]map[string]any{{"subject": j.Args.Seq}})
	id := strconv.FormatInt(j.ID, 10)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", j.Args.URL, bytes.NewReader(body))
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func main() {
	engine := flag.String("engine", "sqlite", "")
	pg := flag.String("pg", "postgres://postgres@127.0.0.1:5432/riverbench?sslmode=disable", "")
	rate := flag.Int("rate", 2500, "")
	dur := flag.Duration("duration", 10*time.Second, "")
	burst := flag.Int("burst", 0, "")
	workers := flag.Int("workers", 64, "")
	flag.Parse()
	ctx := context.Background()
	n := *burst
	if n == 0 {
		n = int(float64(*rate) * dur.Seconds())
	}
	committed, arrived = make([]atomic.Int64, n), make([]atomic.Int64, n)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		var evs []struct{ Subject int }
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &evs)
		for _, e := range evs {
			if arrived[e.Subject].CompareAndSwap(0, now) {
				count.Add(1)
				last.Store(now)
			}
		}
		w.WriteHeader(204)
	}))
	url := "http://" + ln.Addr().String() + "/hook"
	workersCfg := river.NewWorkers()
	river.AddWorker(workersCfg, &Worker{})
	cfg := &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: *workers}},
		Workers: workersCfg, FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond}

	var insert func(from, count int)
	var start, stop func()
	switch *engine {
	case "sqlite":
		dir, _ := os.MkdirTemp("", "riverbench")
		defer os.RemoveAll(dir)
		db, err := sql.Open("sqlite", "file:"+dir+"/r.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
		check(err)
		db.SetMaxOpenConns(1)
		drv := riversqlite.New(db)
		m, err := rivermigrate.New(drv, nil)
		check(err)
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		check(err)
		c, err := river.NewClient(drv, cfg)
		check(err)
		insert = func(from, cnt int) {
			tx, err := db.BeginTx(ctx, nil)
			check(err)
			params := make([]river.InsertManyParams, cnt)
			for i := range params {
				params[i] = river.InsertManyParams{Args: DeliveryArgs{Seq: from + i, URL: url}}
			}
			_, err = c.InsertManyFastTx(ctx, tx, params)
			check(err)
			check(tx.Commit())
		}
		start = func() { check(c.Start(ctx)) }
		stop = func() { c.Stop(ctx) }
	default:
		admin, err := pgx.Connect(ctx, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
		check(err)
		admin.Exec(ctx, "DROP DATABASE IF EXISTS riverbench")
		_, err = admin.Exec(ctx, "CREATE DATABASE riverbench")
		check(err)
		pool, err := pgxpool.New(ctx, *pg)
		check(err)
		drv := riverpgxv5.New(pool)
		m, err := rivermigrate.New(drv, nil)
		check(err)
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		check(err)
		c, err := river.NewClient(drv, cfg)
		check(err)
		insert = func(from, cnt int) {
			tx, err := pool.Begin(ctx)
			check(err)
			params := make([]river.InsertManyParams, cnt)
			for i := range params {
				params[i] = river.InsertManyParams{Args: DeliveryArgs{Seq: from + i, URL: url}}
			}
			_, err = c.InsertManyFastTx(ctx, tx, params)
			check(err)
			check(tx.Commit(ctx))
		}
		start = func() { check(c.Start(ctx)) }
		stop = func() { c.Stop(ctx); pool.Close(); admin.Exec(ctx, "DROP DATABASE riverbench") }
	}
	start()
	defer stop()
	t0 := time.Now()
	mark := func(from, cnt int) {
		now := time.Now().UnixNano()
		for i := range cnt {
			committed[from+i].Store(now)
		}
	}
	if *burst > 0 {
		for i := 0; i < n; i += 500 {
			c := min(500, n-i)
			insert(i, c)
			mark(i, c)
		}
	} else {
		tk := time.NewTicker(10 * time.Millisecond)
		for i := 0; i < n; {
			<-tk.C
			owed := min(n, int(float64(*rate)*time.Since(t0).Seconds())) - i
			if owed > 0 {
				insert(i, owed)
				mark(i, owed)
				i += owed
			}
		}
	}
	fmt.Printf("committed %d in %s; backlog %d\n", n, time.Since(t0).Round(time.Millisecond), n-int(count.Load()))
	for count.Load() < int64(n) && time.Since(t0) < 3*time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	el := time.Duration(last.Load() - t0.UnixNano())
	var lat []time.Duration
	for i := range n {
		if a, c := arrived[i].Load(), committed[i].Load(); a != 0 && c != 0 {
			lat = append(lat, time.Duration(max(0, a-c)))
		}
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	fmt.Printf("river %s: delivered %d/%d in %s: %.0f/s; p50 %s p99 %s max %s\n", *engine, count.Load(), n, el.Round(time.Millisecond),
		float64(count.Load())/el.Seconds(), q(.5).Round(100*time.Microsecond), q(.99).Round(100*time.Microsecond), lat[len(lat)-1].Round(time.Millisecond))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
