package api

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/kadens/kadens/internal/apikit"
	"github.com/kadens/kadens/internal/subscriberuser"
)

// The entitlement answer is the busiest response of the service (issue 18),
// and encoding/json's reflection was several microseconds of its cost. It
// is written by hand here with the list pages' appenders (listing.go),
// byte for byte what encoding/json writes for subscriberuser.UserAccess
// (FuzzAccessJSON compares the two), into a pooled buffer.

var accessBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// writeAccess writes a as apikit.WriteJSON would.
func writeAccess(w http.ResponseWriter, a subscriberuser.UserAccess) {
	if !jsonTime(a.At) || !productTimes(a.Products) {
		apikit.WriteJSON(w, http.StatusOK, a) // encoding/json's own answer to a year it cannot write
		return
	}
	bp := accessBufs.Get().(*[]byte)
	b := appendAccess((*bp)[:0], a)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	if cap(b) <= 64<<10 {
		*bp = b
		accessBufs.Put(bp)
	}
}

// jsonTime reports whether encoding/json can write t (time.Time.MarshalJSON
// refuses years outside 0–9999).
func jsonTime(t time.Time) bool { y := t.Year(); return y >= 0 && y <= 9999 }

func productTimes(ps []subscriberuser.ProductAccess) bool {
	for _, p := range ps {
		if !jsonTime(p.Until) {
			return false
		}
	}
	return true
}

// appendAccess appends a's JSON and a newline, as json.Encoder.Encode
// writes it. Its times must satisfy jsonTime.
func appendAccess(b []byte, a subscriberuser.UserAccess) []byte {
	b = append(b, `{"userId":`...)
	b = appendJSONString(b, a.UserID)
	b = append(b, `,"subscriberId":`...)
	b = appendJSONString(b, a.SubscriberID)
	b = append(b, `,"disabled":`...)
	b = strconv.AppendBool(b, a.Disabled)
	b = append(b, `,"at":`...)
	b = appendJSONTime(b, a.At)
	b = append(b, `,"products":`...)
	if a.Products == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, p := range a.Products {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"productId":`...)
			b = appendJSONString(b, p.ProductID)
			b = append(b, `,"name":`...)
			b = appendJSONString(b, p.Name)
			b = append(b, `,"category":`...)
			b = appendJSONString(b, p.Category)
			b = append(b, `,"subscriptionId":`...)
			b = appendJSONString(b, p.SubscriptionID)
			b = append(b, `,"subscriberId":`...)
			b = appendJSONString(b, p.SubscriberID)
			b = append(b, `,"until":`...)
			b = appendJSONTime(b, p.Until)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...)
}
