package engine

import (
	"encoding/json"
	"testing"

	"github.com/kadens/kadens/internal/store"
)

// Subscription events carry a struct; they must read exactly as they did
// when their payload was a map (webhook consumers compare bytes).
func TestSubscriptionEventDataEncodesAsTheMap(t *testing.T) {
	sub := store.Subscription{ID: store.NewID(), SubscriberID: store.NewID(), OrganizationID: store.NewID()}
	got, err := json.Marshal(subscriptionData(sub))
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(map[string]any{"subscriptionId": sub.ID, "subscriberId": sub.SubscriberID, "organizationId": sub.OrganizationID})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("got %s, want %s", got, want)
	}
}
