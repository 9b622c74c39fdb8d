package codegen

import (
	"strings"
	"testing"
)

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{
		"id":                    "ID",
		"subscriberId":          "SubscriberID",
		"logoUrl":               "LogoURL",
		"vatRate":               "VATRate",
		"kid":                   "KID",
		"BillingPlans":          "BillingPlans",
		"pricesIncludeVat":      "PricesIncludeVAT",
		"S4-TenantId":           "S4TenantID",
		"ValidationResultModel": "ValidationResultModel",
		"PartiallyPaid":         "PartiallyPaid",
		"MOD10":                 "MOD10",
		"listInvoices":          "ListInvoices",
	} {
		if got := goName(in); got != want {
			t.Errorf("goName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGenerateRefusesWhatItCannotType: a construct the generator does not
// know fails generation instead of becoming a wrong type.
func TestGenerateRefusesWhatItCannotType(t *testing.T) {
	for name, doc := range map[string]string{
		"float number": `{"components":{"schemas":{"A":{"type":"object","properties":{"x":{"type":"number"}}}}}}`,
		"oneOf":        `{"components":{"schemas":{"A":{"type":"object","properties":{"x":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}}}}`,
		"cookie param": `{"paths":{"/a":{"get":{"operationId":"getA","parameters":[{"name":"c","in":"cookie","schema":{"type":"string"}}],"responses":{}}}}}`,
	} {
		if _, err := Generate([]byte(doc)); err == nil {
			t.Errorf("%s: generated without an error", name)
		}
	}
	src, err := Generate([]byte(`{"components":{"schemas":{"A":{"type":"object","required":["n"],
		"properties":{"n":{"type":"number","format":"decimal"},"o":{"anyOf":[{"type":"null"},{"$ref":"#/components/schemas/A"}]}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(string(src)), " ")
	for _, want := range []string{"N Decimal `json:\"n\"`", "O *A `json:\"o,omitempty\"`"} {
		if !strings.Contains(flat, want) {
			t.Errorf("generated code lacks %s:\n%s", want, src)
		}
	}
}
