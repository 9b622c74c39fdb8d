package auth

import "testing"

// A subscriber token may act for its own user only; an administrative
// token for any user of its tenant; a token with neither for none.
func TestMayActFor(t *testing.T) {
	const me, other = "01900000-0000-7000-8000-0000000000aa", "01900000-0000-7000-8000-0000000000bb"
	sub := Principal{UserID: me, Scopes: []string{"openid"}}
	admin := Principal{Subject: "kc_x", Scopes: []string{"api"}}
	none := Principal{Subject: "kc_y", Scopes: []string{"openid"}}
	// An external end-user token names no user itself (the API finds it
	// through an idp-b account), so it may act for nobody here.
	external := Principal{Issuer: "https://login.example", Subject: me, External: true, ExternalSubscriber: true}
	for _, c := range []struct {
		name string
		p    Principal
		user string
		want bool
	}{
		{"subscriber, own user", sub, me, true},
		{"subscriber, own user in upper case", sub, "01900000-0000-7000-8000-0000000000AA", true},
		{"subscriber, another user", sub, other, false},
		{"administrative token", admin, other, true},
		{"token without api scope", none, me, false},
		{"external subscriber token, even for a user id equal to its subject", external, me, false},
	} {
		if got := c.p.MayActFor(c.user); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
	if !sub.IsSubscriber() || admin.IsSubscriber() || !external.IsSubscriber() {
		t.Error("IsSubscriber")
	}
}
