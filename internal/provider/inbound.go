package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/tenancy"
	"github.com/kadens/kadens/internal/validation"
)

// CallbackLimit bounds a callback's body. Providers' notifications are
// small JSON documents (a Vipps webhook is well under 4 KiB); anything
// larger is refused (413) before it is read into memory, and nothing is
// stored for a request before its provider has verified it.
const CallbackLimit = 256 << 10

// CallbackPattern is the route of providers' callbacks on the main
// listener. It is not an API operation (no bearer token: the provider
// authenticates with its own scheme), so it is not in /openapi.json.
const CallbackPattern = "POST /provider/{type}/callback/{tenantId}"

// CallbackHandler serves CallbackPattern: it finds the provider of the
// path's type and hands it the request with the tenant in the context.
// An unknown type, a type without a Callback, or an unknown tenant is an
// empty 404 (nothing tells a prober which types are registered); a tenant
// id that is no uuid a 400; the provider's own verdicts map as its doc
// says. The provider answers 204 when it accepted the notification.
func CallbackHandler(reg *Registry, st *store.Store, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := reg.Lookup(r.PathValue("type"))
		if !ok || p.Callback == nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		tenant := r.PathValue("tenantId")
		if !store.ValidID(tenant) {
			problem(w, http.StatusBadRequest, "tenantId", "must be the tenant's id (a uuid)")
			return
		}
		if _, err := st.TenantByID(r.Context(), tenant); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			log.ErrorContext(r.Context(), "provider callback: tenant", "type", p.Type, "err", err)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, CallbackLimit))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			problem(w, http.StatusRequestEntityTooLarge, "body", "is larger than the callback limit")
			return
		case err != nil:
			problem(w, http.StatusBadRequest, "body", "could not be read")
			return
		}
		ctx := tenancy.With(r.Context(), tenant)
		err = p.Callback(ctx, Callback{TenantID: tenant, Header: r.Header.Clone(), Body: body,
			Host: r.Host, Target: r.URL.RequestURI(), Received: time.Now().UTC()})
		var verr validation.Errors
		switch {
		case err == nil:
			w.WriteHeader(http.StatusNoContent)
		case errors.Is(err, ErrUnauthenticated):
			w.WriteHeader(http.StatusUnauthorized)
		case errors.As(err, &verr):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"errors": verr})
		case errors.Is(err, store.ErrNotFound):
			w.WriteHeader(http.StatusNotFound)
		default:
			// A failure of ours: the provider retries a 5xx on its schedule.
			log.ErrorContext(ctx, "provider callback", "type", p.Type, "tenant", tenant, "err", err)
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
}

// problem answers status with the one field at fault, in the shape of
// validation.Errors' JSON.
func problem(w http.ResponseWriter, status int, field, msg string) {
	var errs validation.Errors
	errs.Add(field, "%s", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": errs})
}

// RunPolls runs every registered provider's Poll until ctx ends: each on
// its own ticker, the first run at once, a run's error logged and the next
// run kept (the providers' own retries are their business). It returns
// when every poll loop has stopped.
func RunPolls(ctx context.Context, reg *Registry, log *slog.Logger) {
	var wg sync.WaitGroup
	for typ, p := range reg.Polls() {
		wg.Go(func() {
			t := time.NewTicker(p.Every)
			defer t.Stop()
			for {
				if err := p.Run(ctx); err != nil && ctx.Err() == nil {
					log.WarnContext(ctx, "provider poll", "type", typ, "err", err)
				}
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		})
	}
	wg.Wait()
}
