// Package server assembles a running Kadens process: it opens and migrates
// the store, loads the signing keys, builds the main API, the identity
// provider and the operational endpoints, and serves them on one listener or
// on one per surface, shutting down gracefully.
package server

import (
	"context"
	"errors"
	"fmt"
	"github.com/kadens/kadens/internal/app"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kadens/kadens/internal/analytics"
	"github.com/kadens/kadens/internal/api"
	"github.com/kadens/kadens/internal/auth"
	"github.com/kadens/kadens/internal/bookkeeping"
	"github.com/kadens/kadens/internal/config"
	"github.com/kadens/kadens/internal/console"
	"github.com/kadens/kadens/internal/delivery"
	"github.com/kadens/kadens/internal/engine"
	"github.com/kadens/kadens/internal/idempotency"
	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/invoicing"
	"github.com/kadens/kadens/internal/minside"
	"github.com/kadens/kadens/internal/outbox"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/retries"
	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/subscriberuser"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/vipps"
	"github.com/kadens/kadens/internal/webhook"
)

// Server is an assembled Kadens process.
type Server struct {
	cfg     *config.Config
	log     *slog.Logger
	Store   *store.Store
	Keys    *idp.Keys
	Engine  *engine.Engine
	API     *api.Server
	IdP     *idp.Server
	Staff   *staff.Directory
	surface map[string]http.Handler // surface name → handler
	// listeners are bound by New, before the store is opened, and served
	// by Start.
	listeners map[string]net.Listener
	// Addrs are the bound addresses by surface name ("main", "idp",
	// "analytics"), known once New returned.
	Addrs   map[string]string
	servers []*http.Server
	stop    context.CancelFunc
	done    chan struct{}

	// replica is the analytics API's read replica, when configured.
	replica *store.Store

	// Webhooks delivers events to registered endpoints (docs/WEBHOOKS.md).
	Webhooks *webhook.Dispatcher
	// Peppol sends the invoices and credit notes of EHF/OIO subscriptions
	// to the configured access point (nil when none is; docs/PEPPOL.md).
	// Its Run loop retries and follows deliveries; its Hook is the EHF and
	// OIO providers' delivery hook.
	Peppol *peppol.Deliverer
	// Providers are the registered payment-agreement provider types; their
	// hooks run from the outbox consumer "providers" (provider.Dispatcher).
	Providers *provider.Registry
	// Outbox runs the other consumers of the events outbox (bank
	// collection, e-invoice delivery): they register on it before Start
	// (docs/ARCHITECTURE.md, "Events and their consumers").
	Outbox *outbox.Runner
}

// New binds every listener, then opens the store (migrating it) and builds
// every component, without serving yet. The listeners come first: a taken
// address is reported at once, before seconds of connecting and migrating,
// and nothing of the data directory or the database is touched then.
func New(ctx context.Context, cfg *config.Config, log *slog.Logger) (*Server, error) {
	lns, err := listen(cfg)
	if err != nil {
		return nil, err
	}
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	opts := store.Options{DatabaseURL: cfg.DatabaseURL, DataDir: cfg.DataDir}
	opts.Log, opts.LockWait = log, store.DefaultLockWait
	st, err := store.Open(ctx, opts)
	if err != nil {
		closeAll()
		return nil, err
	}
	s, err := build(ctx, cfg, log, st)
	if err != nil {
		st.Close()
		closeAll()
		return nil, err
	}
	s.listeners = lns
	for name, ln := range lns {
		s.Addrs[name] = ln.Addr().String()
	}
	return s, nil
}

// listen binds the address of every surface: the main one, and /idp's and
// /analytics' when they have their own.
func listen(cfg *config.Config) (map[string]net.Listener, error) {
	lns := map[string]net.Listener{}
	for _, l := range []struct{ name, addr, flag string }{
		{"main", cfg.Listen, "listen"}, {"idp", cfg.IdPListen, "idp-listen"}, {"analytics", cfg.AnalyticsListen, "analytics-listen"},
		{"console", cfg.ConsoleListen, "console-listen"},
	} {
		if l.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			for _, ln := range lns {
				ln.Close()
			}
			return nil, fmt.Errorf("listen on %s for the %s surface: %w (is another kadens running? stop it, or pick another address with %s)",
				l.addr, l.name, err, cfg.Name(l.flag))
		}
		lns[l.name] = ln
	}
	return lns, nil
}

func build(ctx context.Context, cfg *config.Config, log *slog.Logger, st *store.Store) (*Server, error) {
	if err := st.Migrate(ctx, log); err != nil {
		return nil, err
	}
	master, err := idp.MasterKey(cfg.MasterKey, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	keys := idp.NewKeys(st, master, cfg.TokenTTL, log)
	if err := keys.Load(ctx); err != nil {
		return nil, err
	}
	// One egress policy for every outbound connection (internal/egress):
	// webhooks, AvtaleGiro banks, Peppol, trusted issuers' key sets, SMTP.
	egressPolicy := cfg.Egress()
	idpCfg := idp.Config{Issuer: cfg.IdPURL, Audience: cfg.BaseURL, ClaimsNamespace: cfg.ClaimsNamespace, TokenTTL: cfg.TokenTTL,
		SMTPURL: cfg.SMTPURL, Egress: egressPolicy}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(st.DB(), "write"),
	)
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "kadens_access_cache_hits_total",
			Help: "Entitlement answers served from the answer cache."},
			func() float64 { h, _ := subscriberuser.AccessCacheStats(st); return float64(h) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "kadens_access_cache_misses_total",
			Help: "Entitlement answers read from the database."},
			func() float64 { _, m := subscriberuser.AccessCacheStats(st); return float64(m) }),
	)
	if st.ReadDB() != st.DB() {
		reg.MustRegister(collectors.NewDBStatsCollector(st.ReadDB(), "read"))
	}
	metrics := api.NewMetrics(reg)
	host, _ := os.Hostname()
	eng := engine.New(st, log, fmt.Sprintf("%s/%d/%s", host, os.Getpid(), store.NewID()))
	eng.Lease = cfg.EngineLease
	// billing: demand + invoice per period (docs/BILLING.md), the vacation
	// stops following the series and credited first (docs/PRINT.md)
	eng.Hooks.PeriodsCreated = delivery.RenewalHook(invoicing.IssuePeriods)
	eng.Hooks.Cancelled = delivery.CancelHook(invoicing.SettleCancellation) // the stops settled, credit notes and proration of cancelled periods
	eng.Hooks.BindingRemainder = invoicing.ChargeBindingRemainder           // ChargeRemainder bindings cancelled early (docs/ORDERS.md)
	eng.Hooks.Dun = invoicing.DunCounts                                     // reminders and payment stops by the dunning processes
	eng.Hooks.NextDun = invoicing.NextDunningAt                             // when dunning falls due among the engine's work
	schedule, err := retries.Parse(cfg.WebhookRetrySchedule)
	if err != nil {
		return nil, err
	}
	hooks := webhook.New(webhook.Options{Store: st, Log: log, Schedule: schedule, Timeout: cfg.WebhookTimeout,
		Egress: egressPolicy, Concurrency: cfg.WebhookConcurrency, Metrics: webhook.NewMetrics(reg)})
	pc := cfg.Peppol
	lookup := peppol.NewLookup(peppol.LookupConfig{Zone: pc.SMLZone, DNSServer: pc.DNSServer, DirectoryURL: pc.DirectoryURL, TTL: pc.LookupTTL,
		Egress: egressPolicy})
	// Peppol delivery runs when an access point or a drop directory is set.
	var delivery *peppol.Deliverer
	switch {
	case pc.APURL != "":
		delivery = &peppol.Deliverer{Store: st, Log: log, Sender: &peppol.AccessPoint{URL: pc.APURL, Token: pc.APToken,
			Username: pc.APUsername, Password: pc.APPassword, Client: egressPolicy.Client(30 * time.Second)}}
	case pc.DropDir != "":
		delivery = &peppol.Deliverer{Store: st, Log: log, Sender: &peppol.Directory{Dir: pc.DropDir}}
	}
	// The Vipps wing seals merchant keys with the master key; the provider
	// and the API share it (and its access-token cache).
	vippsWing := vipps.New(st, master, egressPolicy)
	registry := providers(st, delivery, cfg, vippsWing)
	// One application layer for every surface of the process.
	application := app.New(app.Options{Store: st, Engine: eng, Providers: registry})
	a, err := api.New(api.Options{
		App:       application,
		Peppol:    lookup,
		Webhooks:  hooks,
		Egress:    egressPolicy,
		Providers: registry,
		Vipps:     vippsWing,
		Store:     st,
		Engine:    eng,
		Verifier:  auth.NewVerifier(ctx, auth.Options{IdP: idpCfg, Keys: keys, External: cfg.Issuers(), Egress: egressPolicy}),
		Log:       log,
		Metrics:   metrics,
		BaseURL:   cfg.BaseURL,
		IdPURL:    cfg.IdPURL,
		BodyLimit: cfg.BodyLimit,
	})
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, Store: st, Keys: keys, API: a, Engine: eng, IdP: idp.New(idpCfg, st, keys, log), Addrs: map[string]string{}}
	s.Webhooks = hooks
	s.Peppol = delivery
	s.Providers = registry
	s.Outbox = outbox.New(outbox.Options{Store: st, Log: log, Metrics: outbox.NewMetrics(reg, st, log)})
	// The providers' collection and delivery hooks run after the invoice's
	// transaction committed, each event in its own queue, so a bank or an
	// access point that is down holds back neither webhooks nor the other.
	if kinds := registry.Events(); kinds != nil {
		if err := s.Outbox.Register(outbox.Consumer{Name: "providers", Kinds: kinds,
			Handle: provider.Dispatcher{Registry: registry, Store: st}.Handle}); err != nil {
			return nil, err
		}
	}

	// The general ledger posts every invoice, credit note and payment of
	// an organization with a chart of accounts (docs/BOOKKEEPING.md).
	if err := s.Outbox.Register(outbox.Consumer{Name: bookkeeping.ConsumerName, Kinds: bookkeeping.Kinds,
		Handle: func(ctx context.Context, tenant string, e store.Event) error {
			return bookkeeping.Post(tenancy.With(ctx, tenant), st, e)
		}}); err != nil {
		return nil, err
	}

	main := http.NewServeMux()
	main.Handle("/", a.Handler())
	ops := func(route string, h http.Handler) {
		main.Handle(route, api.Observe("ops", route, metrics, log, h))
	}
	ops("GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	}))
	ops("GET /readyz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "application/json")
		if err := a.Ready(ctx); err != nil {
			log.Warn("not ready", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"unavailable","check":"database"}` + "\n"))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	}))
	ops("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	// The page a browser gets at the server's address; not an API
	// operation, so not in /openapi.json (like /swagger/ and /healthz).
	ops("GET /{$}", landing(cfg))
	// The manual webhook validation URL: public, the token is the credential.
	ops("GET /webhook/validate", a.WebhookValidation())
	// Providers' own notifications (a Vipps webhook): public, each
	// provider verifies its scheme; not an API operation either.
	ops(provider.CallbackPattern, provider.CallbackHandler(registry, st, log))

	idpHandler := observeAll("idp", metrics, log, s.IdP.Handler())
	// The analytics API reads the store's read pool (SQLite: query_only
	// connections beside the writer) or, when configured, a PostgreSQL
	// read replica; it sits behind the main API's authentication.
	adb, postgres := st.ReadDB(), st.Engine() == store.Postgres
	if cfg.AnalyticsDatabaseURL != "" {
		replica, err := store.Open(ctx, store.Options{DatabaseURL: cfg.AnalyticsDatabaseURL})
		if err != nil {
			return nil, fmt.Errorf("analytics database: %w", err)
		}
		s.replica = replica
		adb, postgres = replica.ReadDB(), true
	}
	odataHandler := analytics.New(analytics.Options{DB: adb, Postgres: postgres, URL: cfg.AnalyticsURL, Log: log, Now: a.TenantNow})
	analyticsHandler := observeAll("analytics", metrics, log, a.Authenticated(odataHandler))
	// The merchant console (internal/console): staff users of the
	// tenants log in with their own sessions and call the same
	// application layer; its paths carry /console on its own listener too.
	s.Staff = staff.New(st, staff.Options{})
	cons, err := console.New(console.Options{App: application, Staff: s.Staff, Store: st, Log: log, BaseURL: cfg.ConsoleURL,
		SecureCookies: strings.HasPrefix(cfg.ConsoleURL, "https://")})
	if err != nil {
		return nil, err
	}
	consoleHandler := observeAll("console", metrics, log, cons.Handler())
	s.surface = map[string]http.Handler{}
	if cfg.ConsoleListen != "" {
		s.surface["console"] = consoleHandler
	} else {
		main.Handle(console.Prefix+"/", consoleHandler)
	}
	// Min side (internal/minside): the subscribers' own pages, logged in
	// through the identity provider above as a relying party.
	my, err := newMinSide(cfg, st, application, master, log)
	if err != nil {
		return nil, err
	}
	main.Handle(minside.Prefix+"/", observeAll("minside", metrics, log, my.Handler()))
	mount := func(name, listen, prefix string, h http.Handler) {
		if listen != "" {
			s.surface[name] = h
			return
		}
		main.Handle(prefix+"/", http.StripPrefix(prefix, h))
	}
	mount("idp", cfg.IdPListen, "/idp", idpHandler)
	mount("analytics", cfg.AnalyticsListen, "/analytics", analyticsHandler)
	// The main listener's ServeMux would answer a path that is not
	// canonical (an empty, "." or ".." segment) with a redirect to its
	// cleaned form; the API answers it 404 instead, for its own routes,
	// the operational ones and /analytics alike. The identity provider's
	// paths are its own (zitadel/oidc's router).
	s.surface["main"] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !api.CanonicalPath(r.URL.Path) && !strings.HasPrefix(r.URL.Path, "/idp/") {
			a.Handler().ServeHTTP(w, r)
			return
		}
		main.ServeHTTP(w, r)
	})
	return s, nil
}

// observeAll labels every request of a whole surface with one route label:
// the surface's own routes are few and fixed.
func observeAll(surface string, m *api.Metrics, log *slog.Logger, h http.Handler) http.Handler {
	return api.Observe(surface, surface, m, log, h)
}

// Start serves every surface on the listener New bound, in the
// background. Background maintenance (key reloads, idempotency purge) runs
// until Shutdown.
func (s *Server) Start(ctx context.Context) error {
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	s.done = make(chan struct{})
	for name, h := range s.surface {
		ln := s.listeners[name]
		srv := &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       120 * time.Second,
			ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
			BaseContext:       func(net.Listener) context.Context { return bg },
		}
		s.servers = append(s.servers, srv)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("serve", "surface", name, "err", err)
			}
		}()
	}
	go func() {
		defer close(s.done)
		var wg sync.WaitGroup
		if s.Peppol != nil {
			wg.Go(func() { s.Peppol.Run(bg, s.cfg.Peppol.DeliveryInterval) })
		}
		// The providers' reconciliations (AvtaleGiro's file exchange with
		// its bank) run beside the housekeeping until Shutdown.
		wg.Go(func() { provider.RunPolls(bg, s.Providers, s.log) })
		s.maintain(bg)
		wg.Wait()
	}()
	s.Webhooks.Start()
	if err := s.Outbox.Start(ctx); err != nil {
		return err
	}
	// Recorded only once listening, so that a start that fails (say, on a
	// taken address) leaves the running server's URLs in place.
	if err := s.Store.SetPublicURLs(ctx, store.PublicURLs{Base: s.cfg.BaseURL, IdP: s.cfg.IdPURL,
		Analytics: s.cfg.AnalyticsURL, RecordedAt: time.Now()}); err != nil {
		s.log.Warn("operator commands will not know this server's public URLs", "err", err)
	}
	return nil
}

// maintain runs periodic housekeeping until ctx ends.
func (s *Server) maintain(ctx context.Context) {
	keys := time.NewTicker(time.Minute)
	purge := time.NewTicker(time.Hour)
	advance := time.NewTicker(s.cfg.EngineInterval)
	defer keys.Stop()
	defer purge.Stop()
	defer advance.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-keys.C:
			s.Keys.Refresh(ctx, 0)
		case <-advance.C:
			s.advanceAll(ctx)
		case <-purge.C:
			if n, err := s.Staff.Sweep(ctx); err != nil {
				s.log.Error("sweep staff sessions", "err", err)
			} else if n > 0 {
				s.log.Info("swept staff sessions and links", "count", n)
			}
			if n, err := idempotency.Purge(ctx, s.Store, time.Now().Add(-25*time.Hour)); err != nil {
				s.log.Error("purge idempotency keys", "err", err)
			} else if n > 0 {
				s.log.Info("purged idempotency keys", "count", n)
			}
		}
	}
}

// advanceAll runs the engine for every tenant on real time. Test tenants
// are left alone: their clocks move only through the API. A tenant another
// process is advancing is skipped until the next tick.
func (s *Server) advanceAll(ctx context.Context) {
	tenants, err := s.Store.Tenants(ctx)
	if err != nil {
		s.log.Error("engine: list tenants", "err", err)
		return
	}
	for _, t := range tenants {
		if t.Test || ctx.Err() != nil {
			continue
		}
		stats, err := s.Engine.Advance(ctx, t.ID, time.Now())
		switch {
		case errors.Is(err, engine.ErrBusy) || errors.Is(err, context.Canceled):
		case err != nil:
			s.log.Error("engine: advance", "tenant", t.ID, "err", err)
		case stats != (engine.Stats{}):
			s.log.Info("engine: advanced", "tenant", t.ID, "renewals", stats.Renewals, "deactivations", stats.Deactivations, "plan_changes", stats.PlanChanges)
		}
	}
}

// Shutdown stops accepting connections, waits (up to the configured
// timeout) for in-flight requests to finish, then stops background work and
// closes the store.
func (s *Server) Shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	var errs []error
	for _, srv := range s.servers {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shutdown: %w", err))
		}
	}
	if s.stop != nil {
		s.stop()
		<-s.done
		// In-flight webhook attempts get what is left of the timeout.
		if err := s.Webhooks.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
		if err := s.Outbox.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if s.stop == nil {
		// Never started: the listeners New bound are not served yet.
		for _, ln := range s.listeners {
			ln.Close()
		}
	}
	errs = append(errs, s.Store.Close())
	if s.replica != nil {
		errs = append(errs, s.replica.Close())
	}
	return errors.Join(errs...)
}
