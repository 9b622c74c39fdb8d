package peppol_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kadens/kadens/internal/peppol/peppoltest"
)

// TestSchematron runs the Peppol BIS Billing 3.0 rules (Peppol's and
// CEN's EN 16931 schematron, from the standards folder) over every
// invoice and credit note these tests generate (the golden files, which
// TestGoldenUBL keeps equal to what is generated, and the documents of
// the rounding and VAT category tests) and the reference samples: a fatal
// assertion on any of them fails the test (warnings are logged). A document with a wrong check digit in its
// endpoint goes along, and must be caught, so a runner that checks
// nothing cannot pass. One run of the rules covers all documents: loading
// them is most of the cost.
func TestSchematron(t *testing.T) {
	t.Parallel()
	docs := map[string][]byte{}
	add := func(name string, doc []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		docs[name] = doc
	}
	for _, dir := range []string{"golden", "reference"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.xml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("testdata/%s: %v %v", dir, files, err)
		}
		for _, f := range files {
			doc, err := os.ReadFile(f)
			add(dir+"-"+filepath.Base(f), doc, err)
		}
	}
	doc, err := roundedPerLineInvoice()
	add("rounded-per-line.xml", doc, err)
	for _, tc := range categoryCases {
		if tc.err || tc.rate == 15 { // 15 % is category S, as 25 % is
			continue
		}
		doc, err := categoryInvoice(tc.rate, tc.registered)
		add(fmt.Sprintf("category-%d-registered-%v.xml", tc.rate, tc.registered), doc, err)
	}
	// 123456785 is the seller's organization number; its check digit
	// (mod 11) is 5, so …784 is no Norwegian organization number.
	broken := bytes.Replace(docs["golden-no-invoice.xml"], []byte(`schemeID="0192">123456785<`), []byte(`schemeID="0192">123456784<`), 1)
	if bytes.Equal(broken, docs["golden-no-invoice.xml"]) {
		t.Fatal("the seller's endpoint is not where this test changes it")
	}
	docs["broken-endpoint.xml"] = broken

	caught := false
	for _, a := range peppoltest.Schematron(t, docs) {
		switch {
		case a.Document == "broken-endpoint.xml":
			caught = caught || a.ID == "PEPPOL-COMMON-R041" && a.Flag == "fatal"
		case a.Flag == "fatal":
			t.Errorf("%v", a)
		default:
			t.Logf("%v", a)
		}
	}
	if !caught {
		t.Errorf("the rules did not flag the wrong check digit of broken-endpoint.xml (PEPPOL-COMMON-R041): the schematron run checks nothing")
	}
	t.Logf("checked %v", slices.Sorted(maps.Keys(docs)))
}
