package invoicing

import (
	"encoding/json"
	"testing"

	"github.com/kadens/kadens/internal/store"
)

// InvoiceIssued events carry a struct; they must read exactly as they did
// when their payload was a map (webhook consumers compare bytes).
func TestInvoiceIssuedDataEncodesAsTheMap(t *testing.T) {
	inv, dem, subr, sub := store.NewID(), store.NewID(), store.NewID(), store.NewID()
	got, err := json.Marshal(invoiceIssuedData{InvoiceID: inv, PaymentDemandID: dem, SubscriberID: subr, SubscriptionID: sub})
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(map[string]string{"invoiceId": inv, "paymentDemandId": dem, "subscriberId": subr, "subscriptionId": sub})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("got %s, want %s", got, want)
	}
}
