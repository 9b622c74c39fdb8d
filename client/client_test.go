package client

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kadens/kadens/client/internal/codegen"
)

// TestGeneratedIsCurrent fails when zz_generated.go is not what the checked
// in OpenAPI document generates, so the client never lags the contract.
func TestGeneratedIsCurrent(t *testing.T) {
	doc, err := os.ReadFile("../internal/api/testdata/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := codegen.Generate(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("zz_generated.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("client/zz_generated.go is stale; regenerate it with: go generate ./client")
	}
}

func TestDecimalJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Decimal
		ok   bool
	}{
		{`199.00`, "199.00", true},
		{`0`, "0", true},
		{`-12.5`, "-12.5", true},
		{`"199.00"`, "", false},
		{`true`, "", false},
		{`{}`, "", false},
	} {
		var d Decimal
		err := json.Unmarshal([]byte(c.in), &d)
		if (err == nil) != c.ok || d != c.want {
			t.Errorf("unmarshal %s: %q, %v", c.in, d, err)
		}
	}
	for _, c := range []struct {
		d    Decimal
		want string
		ok   bool
	}{
		{"199.00", "199.00", true},
		{"", "0", true},
		{"12,5", "", false},
		{"NaN", "", false},
		{`1" , "x`, "", false},
	} {
		b, err := json.Marshal(c.d)
		if (err == nil) != c.ok || (c.ok && string(b) != c.want) {
			t.Errorf("marshal %q: %s, %v", c.d, b, err)
		}
	}
}

func TestNextCursor(t *testing.T) {
	for link, want := range map[string]string{
		``: ``,
		`<https://api.example.com/product?cursor=abc&limit=2>; rel="next"`:                  `abc`,
		`<https://x/a?cursor=1>; rel="prev", <https://x/a?limit=5&cursor=MDFh>; rel="next"`: `MDFh`,
		`<https://api.example.com/product?limit=2>; rel="next"`:                             ``,
		`garbage`: ``,
	} {
		if got := nextCursor(link); got != want {
			t.Errorf("nextCursor(%q) = %q, want %q", link, got, want)
		}
	}
}

// FuzzDecimalJSON: whatever a server sends, a Decimal that decodes
// re-encodes to the same JSON number (without surrounding space), and one that does not decode is
// refused rather than half-read.
func FuzzDecimalJSON(f *testing.F) {
	for _, s := range []string{`199.00`, `0`, `-1.5e3`, `"1"`, `null`, `1.`, `01`, `[1]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var d Decimal
		if err := d.UnmarshalJSON([]byte(in)); err != nil {
			if d != "" {
				t.Fatalf("refused %q but kept %q", in, d)
			}
			return
		}
		lit := strings.TrimSpace(in)
		if lit == "null" {
			return
		}
		out, err := json.Marshal(d)
		if err != nil || string(out) != lit {
			t.Fatalf("%q decoded to %q, re-encoded as %s (%v)", in, d, out, err)
		}
	})
}
