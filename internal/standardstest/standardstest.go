// Package standardstest finds the published standards that tests check
// Kadens' output against (the UBL 2.1 and OData CSDL schemas, the Peppol
// BIS 3 schematron, …). The project carries no copy of them: they live in
// the folder shared/standards beside the repository (../shared/standards
// from its root), or wherever KADENS_STANDARDS_DIR points.
//
// Where the folder or a file in it is missing the test is skipped, naming
// both the folder and the variable, unless KADENS_TEST_REQUIRE_STANDARDS
// is set: .ci/run sets it, so in CI a missing standard fails the test.
package standardstest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// DirEnv names the variable that points at the standards folder.
const DirEnv = "KADENS_STANDARDS_DIR"

// RequireEnv is the variable that turns a skip into a failure.
const RequireEnv = "KADENS_TEST_REQUIRE_STANDARDS"

// Dir returns the standards folder: $KADENS_STANDARDS_DIR when set, else
// shared/standards beside the repository root (the directory of go.mod,
// found from the working directory up, which go test sets to the test's
// package).
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return filepath.Abs(d)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("standardstest: %w", err)
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", "standards"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("standardstest: no go.mod above " + wd)
		}
		dir = parent
	}
}

// Path returns the absolute path of rel (slash-separated, e.g.
// "ubl-2.1/maindoc/UBL-Invoice-2.1.xsd") in the standards folder. When it
// is missing t is skipped, saying what is missing and how to provide it,
// or fails under KADENS_TEST_REQUIRE_STANDARDS.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p, err := Find(rel)
	if err != nil {
		Missing(t, err)
	}
	return p
}

// Find is Path without the test: the absolute path of rel, or an error
// saying what is missing.
func Find(rel string) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not found in the standards folder %s (../shared/standards beside the repository, or set %s): %w",
			rel, dir, DirEnv, err)
	}
	return p, nil
}

// Missing skips t for err (a Find error), or fails it under
// KADENS_TEST_REQUIRE_STANDARDS.
func Missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%v (%s is set: the standards are required)", err, RequireEnv)
	}
	t.Skipf("skipped: %v", err)
}

// Vipps returns the path of a Vipps MobilePay API document in the
// standards folder's vipps directory ("recurring-api-openapi.yaml",
// "webhooks-api-swagger.yaml"), skipping t when it is missing.
func Vipps(t testing.TB, name string) string {
	t.Helper()
	return Path(t, "vipps/"+name)
}
