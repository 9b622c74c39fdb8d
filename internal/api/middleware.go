package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kadens/kadens/internal/actor"
	"github.com/kadens/kadens/internal/auth"
	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// TenantHeader is the header naming the tenant of every API request.
const TenantHeader = "S4-TenantId"

type ctxKey int

const (
	requestIDKey ctxKey = iota
	loggerKey
	principalKey
)

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// logger returns the request's logger, carrying its request id. It is
// built on first use: most requests never log beyond the access line.
func logger(ctx context.Context) *slog.Logger {
	l, ok := ctx.Value(loggerKey).(*slog.Logger)
	if !ok {
		l = slog.Default()
	}
	if id := requestID(ctx); id != "" {
		return l.With(slog.String("request_id", id))
	}
	return l
}

// PrincipalFrom returns the verified caller of an authenticated request.
func PrincipalFrom(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(principalKey).(auth.Principal)
	return p, ok
}

// newRequestID returns a random id; 12 bytes are plenty to be unique in logs.
func newRequestID() string {
	var b [12]byte
	var h [24]byte
	_, _ = rand.Read(b[:])
	hex.Encode(h[:], b[:])
	return string(h[:]) // the one allocation (every request makes an id)
}

// acceptRequestID keeps a client-sent X-Request-Id when it is short and
// printable, so it can be used to correlate logs across systems.
func acceptRequestID(v string) bool {
	if v == "" || len(v) > 128 {
		return false
	}
	for _, c := range v {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// Metrics are the HTTP metrics of one surface.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// NewMetrics registers the HTTP metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kadens_http_requests_total",
			Help: "HTTP requests by surface, route template, method and status code.",
		}, []string{"surface", "route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kadens_http_request_duration_seconds",
			Help:    "HTTP request latency by surface and route template.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"surface", "route", "method"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Observe wraps h with what every request on a surface gets: a request id,
// a request-scoped logger, panic recovery (JSON 500), an access log line and
// metrics labelled with the route template (never the raw path, whose ids
// would explode the label set).
func Observe(surface, route string, m *Metrics, log *slog.Logger, h http.Handler) http.Handler {
	// Resolve the per-route metric children once, not per request.
	var (
		latency  prometheus.Observer
		counters = map[int]prometheus.Counter{}
	)
	method, _, _ := strings.Cut(route, " ")
	if m != nil {
		latency = m.latency.WithLabelValues(surface, route, method)
	}
	counter := func(status int) prometheus.Counter {
		if c, ok := counters[status]; ok {
			return c
		}
		return m.requests.WithLabelValues(surface, route, method, strconv.Itoa(status))
	}
	if m != nil {
		for _, code := range []int{200, 201, 202, 204, 400, 401, 403, 404, 413, 422, 500} {
			counters[code] = m.requests.WithLabelValues(surface, route, method, strconv.Itoa(code))
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !acceptRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		ctx := context.WithValue(r.Context(), requestIDKey, id)
		ctx = context.WithValue(ctx, loggerKey, log)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logger(r.Context()).Error("panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeError(rec, r, fmt.Errorf("panic: %v", p))
				}
			}
			d := time.Since(start)
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			if m != nil {
				latency.Observe(d.Seconds())
				counter(status).Inc()
			}
			if !log.Enabled(r.Context(), slog.LevelInfo) {
				return
			}
			attrs := []slog.Attr{
				slog.String("request_id", id), slog.String("method", r.Method), slog.String("route", route),
				slog.String("path", r.URL.Path), slog.Int("status", status), slog.Duration("duration", d),
			}
			if t, err := tenancy.From(r.Context()); err == nil {
				attrs = append(attrs, slog.String("tenant", t))
			}
			log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		h.ServeHTTP(rec, r)
	})
}

// authenticate admits a request that carries a valid API token for the
// tenant named in S4-TenantId: no or bad token is 401; a missing or
// malformed header is 400; a token of another tenant, an unknown tenant or a
// token without the API scope is 403 (a subscriber token is admitted only
// where subscriber is true, and carries no API scope).
func (s *Server) authenticate(r *http.Request, subscriber bool) (*http.Request, error) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || raw == "" {
		return nil, errUnauthorized
	}
	p, err := s.verifier.Verify(r.Context(), strings.TrimSpace(raw))
	if err != nil {
		logger(r.Context()).Debug("token rejected", "err", err)
		return nil, errUnauthorized
	}
	hdr := r.Header.Get(TenantHeader)
	switch {
	case hdr == "":
		return nil, validation.Field(TenantHeader, "the %s header is required", TenantHeader)
	case !store.ValidID(hdr):
		return nil, validation.Field(TenantHeader, "must be a tenant id (uuid)")
	}
	admitted := p.HasScope(idp.ScopeAPI) && !p.IsSubscriber() || subscriber && p.IsSubscriber()
	if !strings.EqualFold(p.TenantID, hdr) || !admitted {
		return nil, errForbidden
	}
	if _, ok, err := s.app.Tenant(r.Context(), p.TenantID); err != nil {
		return nil, err
	} else if !ok {
		return nil, errForbidden
	}
	ctx := tenancy.With(r.Context(), p.TenantID)
	ctx = actor.With(ctx, principalActor(p))
	ctx = context.WithValue(ctx, principalKey, p)
	return r.WithContext(ctx), nil
}

// Authenticated puts the main API's authentication in front of another
// surface (the analytics API): the same bearer token, S4-TenantId and
// scope rules, answered the same way; the tenant goes into the context.
func (s *Server) Authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ar, err := s.authenticate(r, false) // administrative tokens only: analytics is never a subscriber surface
		if err != nil {
			writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, ar)
	})
}

// principalActor is who a verified token's changes are recorded as (the
// events' actor, the audit log): the subscriber user of a subscriber
// token, else the machine client (its client id, the token's subject). An
// external issuer's token is labelled with its issuer, as its subject
// means nothing without it.
func principalActor(p auth.Principal) actor.Actor {
	a := actor.Actor{Kind: actor.Client, ID: p.Subject}
	if p.IsSubscriber() {
		a = actor.Actor{Kind: actor.Subscriber, ID: p.UserID}
	}
	if p.External {
		a.Label = p.Issuer + " " + p.Subject
	}
	return a
}
