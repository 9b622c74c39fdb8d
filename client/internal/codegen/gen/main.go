// Command gen writes the client's generated code from the OpenAPI document:
//
//	go run ./internal/codegen/gen -in ../internal/api/testdata/openapi.json -out zz_generated.go
//
// (go generate ./client runs it.)
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kadens/kadens/client/internal/codegen"
	"github.com/kadens/kadens/internal/atomicfile"
)

func main() {
	in := flag.String("in", "", "the OpenAPI document")
	out := flag.String("out", "", "the Go file to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	doc, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	src, err := codegen.Generate(doc)
	if err != nil {
		return err
	}
	// Whole or not at all: an interrupted run leaves the old client.
	return atomicfile.WriteFile(out, src, 0o644)
}
