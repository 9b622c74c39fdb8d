package client

import (
	"bytes"
	"encoding/json"
	"os"
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
