package analytics_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/standardstest"
)

// xmllint finds xmllint, or skips when it is absent outside CI (.ci/run
// installs it and sets KADENS_TEST_REQUIRE_XMLLINT, so there it never
// skips).
func xmllint(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("KADENS_TEST_REQUIRE_XMLLINT") != "" {
			t.Fatalf("xmllint is required (KADENS_TEST_REQUIRE_XMLLINT is set): %v", err)
		}
		t.Skip("skipped: xmllint is not installed; CI installs it (see .ci/run)")
	}
	return p
}

// $metadata is valid against the OASIS OData CSDL XML schemas (edmx.xsd
// importing edm.xsd, odata-csdl/ in the standards folder:
// internal/standardstest), which is what Excel's and Power BI's OData
// feeds parse.
func TestMetadataValidatesAgainstOASISSchema(t *testing.T) {
	lint := xmllint(t)
	schema := standardstest.Path(t, "odata-csdl/edmx.xsd")
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		c := client{t: t, e: e, tn: e.Tenant}
		a := c.get("/$metadata")
		if a.status != 200 {
			t.Fatalf("$metadata: %d %s", a.status, a.body)
		}
		doc := filepath.Join(t.TempDir(), "metadata.xml")
		if err := os.WriteFile(doc, a.body, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(lint, "--noout", "--nonet", "--schema", schema, doc).CombinedOutput()
		if err != nil {
			t.Fatalf("$metadata does not validate against the OASIS CSDL schema: %v\n%s", err, out)
		}
	})
}
