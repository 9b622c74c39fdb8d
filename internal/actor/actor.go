// Package actor carries who is acting through a request's context, so that
// every event a change emits can say who caused it: a machine client of the
// API, a staff user in the console, a subscriber on their own pages, or
// Kadens itself (renewals, dunning, bank files read by a worker).
//
// The surface that authenticates a caller sets the actor once, beside the
// tenant (tenancy.With); the application layer and the store never take it
// as a parameter, so no command can forget to pass it on.
package actor

import "context"

// Kind says what sort of party acted.
type Kind string

const (
	// System is Kadens itself: the engine, workers, imports. It is the actor
	// of a context that carries none.
	System Kind = "system"
	// Client is a machine client of the API (its client id).
	Client Kind = "client"
	// Staff is a person logged in to the merchant console (the staff user's id).
	Staff Kind = "staff"
	// Subscriber is a subscriber acting on their own behalf (the subscriber user's id).
	Subscriber Kind = "subscriber"
)

// Valid reports whether k is one of the kinds above.
func (k Kind) Valid() bool {
	switch k {
	case System, Client, Staff, Subscriber:
		return true
	}
	return false
}

// Actor is one party: its kind, its id in that kind's table (empty for
// System) and a label for people reading an audit log (an e-mail address or
// a client's name), kept as it was when the change was made.
type Actor struct {
	Kind  Kind   `json:"kind"`
	ID    string `json:"id,omitempty"`
	Label string `json:"label,omitempty"`
}

type ctxKey struct{}

// With returns a context carrying a.
func With(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, ctxKey{}, a)
}

// From returns the actor carried by ctx, or System when there is none.
func From(ctx context.Context) Actor {
	if a, ok := ctx.Value(ctxKey{}).(Actor); ok && a.Kind.Valid() {
		return a
	}
	return Actor{Kind: System}
}
