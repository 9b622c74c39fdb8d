package password_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/password"
)

// cheap keeps the tests fast; the default cost is measured by
// BenchmarkHash.
var cheap = password.Params{Memory: 64, Time: 1, Threads: 1}

func TestHashAndVerify(t *testing.T) {
	t.Parallel()
	h, err := password.Hash("correct horse", cheap)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("not a PHC string: %s", h)
	}
	h2, _ := password.Hash("correct horse", cheap)
	if h == h2 {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	for pw, want := range map[string]bool{"correct horse": true, "correct hors": false, "": false, "Correct horse": false} {
		if ok, err := password.Verify(h, pw); err != nil || ok != want {
			t.Errorf("Verify(%q) = %v %v, want %v", pw, ok, err, want)
		}
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=16$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=19$m=99999999,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", // 95 GiB: refused, not run
		"$argon2id$v=19$m=64,t=1000,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=19$m=64,t=1,p=1$!!$aGFzaGhhc2hoYXNoaGFzaA"} {
		if _, err := password.Verify(bad, "x"); !errors.Is(err, password.ErrMalformedHash) {
			t.Errorf("Verify(%q): %v, want ErrMalformedHash", bad, err)
		}
	}
	if password.NeedsRehash(h, cheap) || !password.NeedsRehash(h, password.DefaultParams) {
		t.Fatal("NeedsRehash")
	}
}

func TestParamsOfAndCounter(t *testing.T) {
	h, err := password.Hash("correct horse", cheap)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := password.ParamsOf(h); err != nil || p != cheap {
		t.Fatalf("ParamsOf = %+v %v, want %+v", p, err, cheap)
	}
	if _, err := password.ParamsOf("plain"); !errors.Is(err, password.ErrMalformedHash) {
		t.Fatalf("ParamsOf(plain): %v", err)
	}
	before := password.Hashes()
	if _, err := password.Verify(h, "x"); err != nil {
		t.Fatal(err)
	}
	if n := password.Hashes() - before; n < 1 {
		t.Fatalf("a Verify counted %d hashes", n)
	}
	if password.Slots() < 2 {
		t.Fatalf("%d hash slots", password.Slots())
	}
}

// BenchmarkHash measures one hash at the default cost (docs/AUTHORIZATIONS.md).
func BenchmarkHash(b *testing.B) {
	for b.Loop() {
		if _, err := password.Hash("correct horse battery staple", password.DefaultParams); err != nil {
			b.Fatal(err)
		}
	}
}
