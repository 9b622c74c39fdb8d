package invoicing

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/catalog"
	"github.com/kadens/kadens/internal/money"
	"github.com/kadens/kadens/internal/store"
)

// Invoice events carry a struct; they must read as a map of the same
// fields would (keys in name order), so the fields that were there before
// the compatibility fields were added read exactly as they did.
func TestInvoiceEventDataEncodesAsTheMap(t *testing.T) {
	inv, dem, subr, sub, org := store.NewID(), store.NewID(), store.NewID(), store.NewID(), store.NewID()
	nok, _ := money.LookupCurrency("NOK")
	due := time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC)
	got, err := json.Marshal(InvoiceEventData{Amount: catalog.NewAmount(24800, nok), Currency: "NOK", DueAt: due, DueDate: "2027-02-01",
		InvoiceID: inv, InvoiceNumber: 7, Number: 7, OrganizationID: org, PaymentDemandID: dem, SubscriberID: subr, SubscriptionID: &sub})
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(map[string]any{"amount": json.Number("248.00"), "currency": "NOK", "dueAt": due, "dueDate": "2027-02-01",
		"invoiceId": inv, "invoiceNumber": 7, "number": 7, "organizationId": org, "paymentDemandId": dem, "subscriberId": subr,
		"subscriptionId": sub})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("got %s, want %s", got, want)
	}
}
