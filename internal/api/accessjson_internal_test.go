package api

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/subscriberuser"
)

// encodingJSON is what apikit.WriteJSON (encoding/json) writes for a.
func encodingJSON(t *testing.T, a subscriberuser.UserAccess) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(a); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func accessOf(s1, s2 string, at, until time.Time, disabled bool) subscriberuser.UserAccess {
	return subscriberuser.UserAccess{UserID: s1, SubscriberID: s2, Disabled: disabled, At: at, Products: []subscriberuser.ProductAccess{
		{ProductID: s2, Name: s1, Category: s1 + s2, SubscriptionID: "x", SubscriberID: s2, Until: until},
		{ProductID: s1, Name: "", Category: "c", Until: at},
	}}
}

// TestAccessJSON: the hand-written encoding of the entitlement answer is
// encoding/json's, for the strings and times that differ most.
func TestAccessJSON(t *testing.T) {
	at := time.Date(2026, 11, 24, 18, 0, 0, 123456000, time.UTC)
	cases := []struct {
		name string
		a    subscriberuser.UserAccess
	}{
		{"no products", subscriberuser.UserAccess{UserID: "u", At: at, Products: []subscriberuser.ProductAccess{}}},
		{"nil products", subscriberuser.UserAccess{UserID: "u", At: at}},
		{"plain", accessOf("c4a1b1c0-0d7e-4c53-9a47-2b1d1d5b7c1e", "Gold plan", at, at.Add(time.Hour), false)},
		{"html and quotes", accessOf(`<a href="x">&</a>`, `back\slash`, at, at, true)},
		{"control characters", accessOf("tab\there\nnl\r\b\f\x00\x1f\x7f", "é ü 中文 🎉", at, at, false)},
		{"invalid utf-8 and line separators", accessOf("bad\xff\xfe byte", "ls\u2028ps\u2029end", at, at, false)},
		{"time zones and whole seconds", accessOf("a", "b", time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), false)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := encodingJSON(t, c.a)
			if got := appendAccess(nil, c.a); !bytes.Equal(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			rec := httptest.NewRecorder()
			writeAccess(rec, c.a)
			if !bytes.Equal(rec.Body.Bytes(), want) || rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
				t.Errorf("writeAccess: %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes())
			}
		})
	}
}

// TestAccessJSONYearOutOfRange: a time encoding/json cannot write is
// answered as apikit.WriteJSON answers it, not written differently.
func TestAccessJSONYearOutOfRange(t *testing.T) {
	a := subscriberuser.UserAccess{UserID: "u", At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Products: []subscriberuser.ProductAccess{}}
	got, want := httptest.NewRecorder(), httptest.NewRecorder()
	writeAccess(got, a)
	apikit.WriteJSON(want, 200, a)
	if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || got.Code != want.Code {
		t.Errorf("got %d %q, want %d %q", got.Code, got.Body.Bytes(), want.Code, want.Body.Bytes())
	}
}

func FuzzAccessJSON(f *testing.F) {
	f.Add("u", "s", "Gold <plan> & \"more\"", int64(1795000000), int64(123456789), false)
	f.Add("\xff\u2028\t", "", "\x00", int64(-62135596800), int64(0), true)
	f.Fuzz(func(t *testing.T, s1, s2, s3 string, sec, nsec int64, disabled bool) {
		at := time.Unix(sec%253402300799, nsec%1_000_000_000).UTC()
		if !jsonTime(at) {
			return
		}
		a := accessOf(s1, s2, at, at.Add(time.Duration(nsec)), disabled)
		a.Products[1].Name = s3
		if !productTimes(a.Products) {
			return
		}
		if got, want := appendAccess(nil, a), encodingJSON(t, a); !bytes.Equal(got, want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}
