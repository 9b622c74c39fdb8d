// Command analyticsload measures the analytics API's performance targets
// (issue 19) against a running server whose tenant bench/analyticsdata
// filled; bench/analytics.sh starts everything and runs it.
//
//	go run ./bench/analyticsload -url http://127.0.0.1:8080/analytics -token T -tenant ID [-pid PID]
//
// Each target is a series of requests, one at a time, with latencies
// reported as p50/p99/max against the target:
//
//	filter    $filter on SubscriberNumber (indexed) + $orderby + $top=100
//	expand    the same 100 subscribers with $expand=Payments
//	count     /$count of filtered sets
//	apply     revenue per month over all payments ($apply)
//	paging    every page of -paging-set through @odata.nextLink; the
//	          server's VmRSS (from /proc/PID/status, with -pid) is sampled
//	          after every page, and the first and last ten pages' latencies
//	          are compared
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

type client struct {
	base, token, tenant string
	http                *http.Client
}

// get fetches base+path and returns the body and the time to its last byte.
func (c *client) get(u string) ([]byte, time.Duration, error) {
	if !strings.HasPrefix(u, "http") {
		u = c.base + u
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("S4-TenantId", c.tenant)
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	d := time.Since(start)
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("GET %s: %d %s", u, resp.StatusCode, body)
	}
	return body, d, nil
}

func q(s string) string { return url.QueryEscape(s) }

type result struct {
	name      string
	lat       []time.Duration
	p50Target time.Duration // 0: none
	p99Target time.Duration
}

func (r result) pct(p float64) time.Duration {
	s := slices.Clone(r.lat)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
}

func (r result) print() {
	p50, p99, mx := r.pct(0.5), r.pct(0.99), r.pct(1)
	verdict := ""
	if r.p50Target > 0 || r.p99Target > 0 {
		ok := (r.p50Target == 0 || p50 <= r.p50Target) && (r.p99Target == 0 || p99 <= r.p99Target)
		verdict = " MET"
		if !ok {
			verdict = " MISSED"
		}
		var t []string
		if r.p50Target > 0 {
			t = append(t, "p50 ≤ "+ms(r.p50Target))
		}
		if r.p99Target > 0 {
			t = append(t, "p99 ≤ "+ms(r.p99Target))
		}
		verdict += " (target " + strings.Join(t, ", ") + ")"
	}
	fmt.Printf("%-40s n=%-4d p50 %-10s p99 %-10s max %-10s%s\n", r.name, len(r.lat), ms(p50), ms(p99), ms(mx), verdict)
}

func main() {
	c := &client{http: &http.Client{Timeout: 5 * time.Minute}}
	flag.StringVar(&c.base, "url", "", "analytics base URL, e.g. http://127.0.0.1:8080/analytics")
	flag.StringVar(&c.token, "token", "", "bearer token (administrative)")
	flag.StringVar(&c.tenant, "tenant", "", "S4-TenantId")
	pid := flag.Int("pid", 0, "server process id, for VmRSS while paging")
	n := flag.Int("n", 200, "requests per latency target")
	subscribers := flag.Int("subscribers", 1_000_000, "subscribers in the tenant (the range of random SubscriberNumber filters)")
	only := flag.String("only", "filter,expand,count,apply,paging", "targets to run")
	pagingSet := flag.String("paging-set", "Subscribers", "entity set paged through")
	flag.Parse()
	if c.base == "" || c.token == "" || c.tenant == "" {
		fmt.Fprintln(os.Stderr, "analyticsload: -url, -token and -tenant are required")
		os.Exit(2)
	}
	c.base = strings.TrimSuffix(c.base, "/")
	run := func(name string) bool { return slices.Contains(strings.Split(*only, ","), name) }
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "analyticsload:", err)
		os.Exit(1)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	series := func(name string, count int, p50, p99 time.Duration, path func() string) {
		r := result{name: name, p50Target: p50, p99Target: p99}
		if _, _, err := c.get(path()); err != nil { // warm-up
			fail(err)
		}
		for range count {
			_, d, err := c.get(path())
			if err != nil {
				fail(err)
			}
			r.lat = append(r.lat, d)
		}
		r.print()
	}
	from := func() int { return rnd.IntN(max(1, *subscribers-200)) }
	if run("filter") {
		series("filter+orderby+top=100 (Subscribers)", *n, 20*time.Millisecond, 100*time.Millisecond, func() string {
			return "/Subscribers?$filter=" + q(fmt.Sprintf("SubscriberNumber gt %d", from())) + "&$orderby=SubscriberNumber&$top=100"
		})
	}
	if run("expand") {
		series("expand Payments of 100 subscribers", *n/2, 50*time.Millisecond, 0, func() string {
			return "/Subscribers?$filter=" + q(fmt.Sprintf("SubscriberNumber gt %d", from())) + "&$orderby=SubscriberNumber&$top=100&$expand=Payments"
		})
	}
	if run("count") {
		for _, p := range []string{
			"/Subscribers/$count?$filter=" + q("City eq 'Oslo'"),
			"/Payments/$count?$filter=" + q("Status eq 'Failed'"),
			"/Subscriptions/$count?$filter=" + q("Status eq 'Active'"),
		} {
			series("count "+p, 5, 200*time.Millisecond, 0, func() string { return p })
		}
	}
	if run("apply") {
		p := "/Payments?$apply=" + q("filter(Status eq 'Succeeded')/compute(year(PaidAt) as Year,month(PaidAt) as Month)/groupby((Year,Month),aggregate(Amount with sum as Revenue))")
		series("apply revenue by month (Payments)", 3, 2*time.Second, 0, func() string { return p })
	}
	if run("paging") {
		if err := paging(c, *pagingSet, *pid); err != nil {
			fail(err)
		}
	}
}

// paging follows @odata.nextLink through the whole set.
func paging(c *client, set string, pid int) error {
	next := "/" + set
	var lat []time.Duration
	var rows int
	var rssMax, rssFirst int64
	start := time.Now()
	for next != "" {
		body, d, err := c.get(next)
		if err != nil {
			return err
		}
		var page struct {
			Value    []json.RawMessage `json:"value"`
			NextLink string            `json:"@odata.nextLink"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return fmt.Errorf("page %d: %w", len(lat)+1, err)
		}
		lat = append(lat, d)
		rows += len(page.Value)
		next = page.NextLink
		if next != "" && !strings.HasPrefix(next, "http") && !strings.HasPrefix(next, "/") {
			next = "/" + next
		}
		if pid > 0 {
			rss := vmRSS(pid)
			if rssFirst == 0 {
				rssFirst = rss
			}
			rssMax = max(rssMax, rss)
		}
		if len(lat)%200 == 0 {
			fmt.Fprintf(os.Stderr, "analyticsload: paging %s: %d pages, %d rows, RSS %d MB\n", set, len(lat), rows, vmRSS(pid)>>20)
		}
	}
	avg := func(ds []time.Duration) time.Duration {
		var s time.Duration
		for _, d := range ds {
			s += d
		}
		return s / time.Duration(len(ds))
	}
	k := min(10, len(lat))
	fmt.Printf("paging %s: %d rows in %d pages, %s; first %d pages avg %s, last %d pages avg %s; p50 %s p99 %s\n",
		set, rows, len(lat), time.Since(start).Round(time.Millisecond), k, ms(avg(lat[:k])), k, ms(avg(lat[len(lat)-k:])),
		ms(result{lat: lat}.pct(0.5)), ms(result{lat: lat}.pct(0.99)))
	if pid > 0 {
		verdict := "MET"
		if rssMax > 100<<20 {
			verdict = "MISSED"
		}
		fmt.Printf("paging %s: server VmRSS after first page %d MB, max %d MB %s (target ≤ 100 MB)\n", set, rssFirst>>20, rssMax>>20, verdict)
	}
	return nil
}

// vmRSS is the resident set size of process pid in bytes (0 if unknown).
func vmRSS(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
