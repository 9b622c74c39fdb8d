package actor

import (
	"context"
	"testing"
)

func TestFrom(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		ctx  context.Context
		want Actor
	}{
		{"none is the system", ctx, Actor{Kind: System}},
		{"staff", With(ctx, Actor{Kind: Staff, ID: "u1", Label: "a@example.no"}), Actor{Kind: Staff, ID: "u1", Label: "a@example.no"}},
		{"client", With(ctx, Actor{Kind: Client, ID: "kc_1"}), Actor{Kind: Client, ID: "kc_1"}},
		{"an unknown kind is the system", With(ctx, Actor{Kind: "robot", ID: "x"}), Actor{Kind: System}},
		{"the innermost wins", With(With(ctx, Actor{Kind: Client, ID: "kc_1"}), Actor{Kind: Subscriber, ID: "s1"}), Actor{Kind: Subscriber, ID: "s1"}},
	}
	for _, c := range cases {
		if got := From(c.ctx); got != c.want {
			t.Errorf("%s: From = %+v, want %+v", c.name, got, c.want)
		}
	}
}
