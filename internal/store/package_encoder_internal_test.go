package store

import (
	"encoding/json"
	"testing"

	"github.com/kadens/kadens/internal/catalog"
)

// TestPackageEncoder: whatever the sequence of packages, the remembered
// encodings are exactly what json.Marshal gives for each, including
// packages that differ only deep inside (a line's product) and more
// distinct packages than it remembers.
func TestPackageEncoder(t *testing.T) {
	pkg := func(name, product string, units int) catalog.SubscriptionPackage {
		return catalog.SubscriptionPackage{Name: name, Currency: "NOK", Units: units,
			Products: []catalog.Line{{ProductID: product}}}
	}
	distinct := []catalog.SubscriptionPackage{
		pkg("Digital", "p1", 1), pkg("Digital", "p2", 1), pkg("Digital", "p1", 2), pkg("Helg", "p1", 1),
		pkg("Papir", "p1", 1), pkg("Papir", "p3", 1),
	}
	var enc packageEncoder
	for i := range 40 {
		p := distinct[(i*i+i/3)%len(distinct)]
		p.Products = append([]catalog.Line(nil), p.Products...) // equal value, own backing array
		got, err := enc.encode(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if got != (storedPackage{packageHash(string(want)), string(want)}) {
			t.Fatalf("step %d: %+v, want %s", i, got, want)
		}
		if len(enc.recent) > packageEncoderSize {
			t.Fatalf("remembers %d packages, at most %d", len(enc.recent), packageEncoderSize)
		}
	}
	var none *packageEncoder
	want, err := json.Marshal(distinct[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := none.encode(distinct[0]); got.json != string(want) || got.hash != packageHash(string(want)) {
		t.Errorf("nil encoder: %+v, want %s", got, want)
	}
}
