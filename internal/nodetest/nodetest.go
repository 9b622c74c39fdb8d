// Package nodetest finds Node.js and the npm packages of a test's
// testdata directory, for the tests that run independent JavaScript
// implementations against Kadens (the Standard Webhooks verifier, the
// Event Grid SDK receiver, the OData clients, the OpenID relying party).
//
// Where node or the packages are missing the test is skipped with what to
// run, unless KADENS_TEST_REQUIRE_NODE is set: .ci/run installs both and
// sets it, so in CI these tests fail rather than skip.
package nodetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireEnv is the variable that turns a skip into a failure.
const RequireEnv = "KADENS_TEST_REQUIRE_NODE"

// Find returns the node executable and the absolute path of dir (relative
// to the test's package), after checking that every package in packages
// is installed in dir's node_modules.
func Find(t testing.TB, dir string, packages ...string) (node, absDir string) {
	t.Helper()
	required := os.Getenv(RequireEnv) != ""
	node, err := exec.LookPath("node")
	if err != nil {
		if required {
			t.Fatalf("node is required (%s is set): %v", RequireEnv, err)
		}
		t.Skip("node is not installed; CI installs it (see .ci/run)")
	}
	absDir, err = filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range packages {
		if _, err := os.Stat(filepath.Join(absDir, "node_modules", pkg)); err != nil {
			if required {
				t.Fatalf("run `npm ci` in %s first (.ci/run does): %v", absDir, err)
			}
			t.Skipf("the npm packages of %s are not installed: run `npm ci` there (CI does)", absDir)
		}
	}
	return node, absDir
}
