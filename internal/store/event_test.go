package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/actor"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// TestEventActors: every event names who caused it, taken from the context
// on both write paths (one event, and the multi-row insert the engine's
// renewals use), and the audit filters (actor kind, actor id, recorded
// between) select by it.
func TestEventActors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		now := time.Now().UTC()
		ten, err := st.CreateTenant(context.Background(), "actors", false, now)
		if err != nil {
			t.Fatal(err)
		}
		base := tenancy.With(context.Background(), ten.ID)
		staff := actor.Actor{Kind: actor.Staff, ID: "u-1", Label: "kari@avis.no " + strings.Repeat("x", 300)}
		client := actor.Actor{Kind: actor.Client, ID: "kc_abc"}
		write := func(ctx context.Context, subject string, bulk bool) {
			t.Helper()
			err := st.InTx(ctx, func(tx *store.Tx) error {
				if bulk {
					return tx.AddEvents(ctx, []store.NewEvent{{Type: "Test", Subject: subject, Data: map[string]string{}, At: now},
						{Type: "Test", Subject: subject, Data: map[string]string{}, At: now}})
				}
				return tx.AddEvent(ctx, "Test", subject, map[string]string{}, now)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		write(base, "/system", false)
		write(base, "/system-bulk", true)
		write(actor.With(base, staff), "/staff", false)
		write(actor.With(base, staff), "/staff-bulk", true)
		write(actor.With(base, client), "/client", false)

		list := func(f store.EventFilter) []store.Event {
			t.Helper()
			evs, _, err := st.ListEvents(base, f, store.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			return evs
		}
		all := list(store.EventFilter{})
		if len(all) != 7 {
			t.Fatalf("%d events, want 7", len(all))
		}
		for _, e := range all {
			var want actor.Kind
			switch {
			case strings.HasPrefix(e.Subject, "/system"):
				want = actor.System
			case strings.HasPrefix(e.Subject, "/staff"):
				want = actor.Staff
				if e.Actor.ID != "u-1" || !strings.HasPrefix(e.Actor.Label, "kari@avis.no x") || len(e.Actor.Label) != 200 {
					t.Errorf("%s: actor %+v (label %d bytes), want u-1 with the label cut to 200", e.Subject, e.Actor, len(e.Actor.Label))
				}
			default:
				want = actor.Client
				if e.Actor != client {
					t.Errorf("%s: actor %+v, want %+v", e.Subject, e.Actor, client)
				}
			}
			if e.Actor.Kind != want {
				t.Errorf("%s: actor kind %q, want %q", e.Subject, e.Actor.Kind, want)
			}
		}
		if got := list(store.EventFilter{ActorKind: actor.Staff}); len(got) != 3 {
			t.Errorf("staff events: %d, want 3", len(got))
		}
		if got := list(store.EventFilter{ActorKind: actor.Client, ActorID: "kc_abc"}); len(got) != 1 || got[0].Subject != "/client" {
			t.Errorf("the client's events: %+v", got)
		}
		if got := list(store.EventFilter{ActorKind: actor.Client, ActorID: "kc_other"}); len(got) != 0 {
			t.Errorf("another client's events: %d, want 0", len(got))
		}
		if got := list(store.EventFilter{ActorKind: actor.System}); len(got) != 3 {
			t.Errorf("system events: %d, want 3", len(got))
		}
		if got := list(store.EventFilter{From: now.Add(-time.Minute), Until: now.Add(time.Minute)}); len(got) != 7 {
			t.Errorf("recorded in the last minute: %d, want 7", len(got))
		}
		if got := list(store.EventFilter{From: now.Add(time.Hour)}); len(got) != 0 {
			t.Errorf("recorded from an hour ahead: %d, want 0", len(got))
		}
		if got := list(store.EventFilter{Until: now.Add(-time.Hour)}); len(got) != 0 {
			t.Errorf("recorded before an hour ago: %d, want 0", len(got))
		}
		// The subscriber filter: subjects from a list, with the others.
		if got := list(store.EventFilter{Subjects: []string{"/staff", "/client", "/nothing"}}); len(got) != 2 {
			t.Errorf("events of /staff and /client: %d, want 2", len(got))
		}
		if got := list(store.EventFilter{Subjects: []string{"/staff-bulk", "/client"}, ActorKind: actor.Staff}); len(got) != 2 ||
			got[0].Subject != "/staff-bulk" {
			t.Errorf("staff events of /staff-bulk and /client: %+v, want the two bulk ones", got)
		}
		if _, _, err := st.ListEvents(base, store.EventFilter{Subjects: make([]string, store.MaxEventSubjects+1)}, store.Page{Limit: 1}); err == nil {
			t.Error("more subjects than MaxEventSubjects were accepted")
		}
	})
}
