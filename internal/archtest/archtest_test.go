package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// graph lists the module's packages with their dependencies.
func graph(t *testing.T) []Package {
	t.Helper()
	root := moduleRoot(t)
	touchSources(t, root)
	cmd := exec.Command("go", "list", "-deps", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// touchSources reads every directory and Go file of the module. go test
// caches a passing result keyed by the files a test opened; the graph comes
// from a `go list` child process, whose reads it does not see, so without
// this an import added later would be answered from the cache.
func touchSources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir():
			_, err = os.ReadDir(path)
		case strings.HasSuffix(path, ".go") || d.Name() == "go.mod":
			_, err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func sources(t *testing.T, p Package) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, f := range p.GoFiles {
		b, err := os.ReadFile(filepath.Join(p.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = b
	}
	return files
}

func find(t *testing.T, pkgs []Package, r string) Package {
	t.Helper()
	for _, p := range pkgs {
		if p.ImportPath == Module+"/"+r {
			return p
		}
	}
	t.Fatalf("no package %s in the graph", r)
	return Package{}
}

// TestLayers checks the module as it is: a violating import or a store
// transaction opened in internal/api fails here, and so `go test ./...`.
func TestLayers(t *testing.T) {
	pkgs := graph(t)
	for _, d := range Domain {
		find(t, pkgs, "internal/"+d) // a renamed domain package must be renamed here too
	}
	for _, w := range append(slices.Clone(Wings), Records...) {
		find(t, pkgs, strings.TrimSuffix(w, "/...")) // and a renamed wing
	}
	for _, v := range CheckImports(pkgs) {
		t.Error(v)
	}
	entry, err := TxEntryPoints(sources(t, find(t, pkgs, "internal/store")))
	if err != nil {
		t.Fatal(err)
	}
	// The store's entry points today; if they are renamed the scan follows
	// them, but finding none would make the rule vacuous.
	for _, want := range []string{"InTx", "InTxRetrying"} {
		if !strings.Contains(","+strings.Join(entry, ",")+",", ","+want+",") {
			t.Errorf("transaction entry points %v lack %s", entry, want)
		}
	}
	vs, err := CheckNoTx("internal/api", sources(t, find(t, pkgs, "internal/api")), entry)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Error(v)
	}

	// Handlers call the application layer: no store write, few reads.
	writes, err := StoreWrites(sources(t, find(t, pkgs, "internal/store")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CreateOrder", "CreateOrganization", "CreateSubscriber"} {
		if !slices.Contains(writes, want) { // finding none would make the rule vacuous
			t.Errorf("the store's writes %v lack %s", writes, want)
		}
	}
	calls, err := StoreCalls(sources(t, find(t, pkgs, "internal/api")))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range CheckNoStoreWrites("internal/api", calls, writes) {
		t.Error(v)
	}
	handlerCalls := len(calls)
	// checkHandlers holds handler source src (named name) to the rules: no
	// transaction, no store write; it returns how many store calls it makes.
	checkHandlers := func(name string, src map[string][]byte) int {
		vs, err := CheckNoTx(name, src, entry)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			t.Error(v)
		}
		calls, err := StoreCalls(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range CheckNoStoreWrites(name, calls, writes) {
			t.Error(v)
		}
		return len(calls)
	}

	// The wings' API files are handlers too.
	for _, f := range WingAPIFiles {
		dir, name := filepath.Split(f)
		p := find(t, pkgs, strings.TrimSuffix(dir, "/"))
		if !slices.Contains(p.GoFiles, name) {
			t.Fatalf("%s is not among %s's files %v", name, p.ImportPath, p.GoFiles)
		}
		src := map[string][]byte{name: sources(t, p)[name]}
		handlerCalls += checkHandlers(f, src)
	}
	// The console and Min side are surfaces under the same rules: they
	// open no transaction and write nothing to the store themselves; they
	// read only the tenant a login names (maxSurfaceStoreCalls).
	for _, surface := range []string{"internal/console", "internal/minside"} {
		if n := checkHandlers(surface, sources(t, find(t, pkgs, surface))); n > maxSurfaceStoreCalls[surface] {
			t.Errorf("%s calls the store directly %d times (at most %d); read through internal/app", surface, n, maxSurfaceStoreCalls[surface])
		}
	}
	if handlerCalls > maxAPIStoreCalls {
		t.Errorf("the handlers call the store directly %d times (at most %d); read through internal/app or the wing", handlerCalls, maxAPIStoreCalls)
	}
}

// maxSurfaceStoreCalls bound the console's and Min side's direct store
// reads: the console's the tenant of a login (by name, or id) and of a
// session, by id; Min side's the tenant a login names.
var maxSurfaceStoreCalls = map[string]int{"internal/console": 5, "internal/minside": 1}

// maxAPIStoreCalls bounds the handlers' direct store reads (issue 28: at
// most 40); there are two today, the readiness ping and the subscriber's
// name an AvtaleGiro claim carries.
const maxAPIStoreCalls = 40

// TestRulesCatchViolations shows every rule failing on a fake graph and a
// fake handler.
func TestRulesCatchViolations(t *testing.T) {
	m := func(r string) string { return Module + "/" + r }
	cases := []struct {
		name string
		pkg  Package
		want string // in the one violation expected; "" for none
	}{
		{"domain imports store", Package{ImportPath: m("internal/billing"), Imports: []string{m("internal/store")}}, "not a domain package"},
		{"domain depends on store", Package{ImportPath: m("internal/money"), Deps: []string{m("internal/store")}}, "depends on internal/store"},
		{"domain opens files", Package{ImportPath: m("internal/period"), Imports: []string{"os"}}, "imports os (I/O)"},
		{"domain uses the network", Package{ImportPath: m("internal/checkdigit"), Imports: []string{"net/http"}}, "imports net/http (I/O)"},
		{"domain reaches database/sql", Package{ImportPath: m("internal/catalog"), Deps: []string{"database/sql"}}, "depends on database/sql"},
		{"domain imports a module", Package{ImportPath: m("internal/country"), Imports: []string{"github.com/jackc/pgx/v5"}}, "a module domain packages do not use"},
		{"domain may use validation and decimal", Package{ImportPath: m("internal/catalog"),
			Imports: []string{m("internal/validation"), m("internal/money"), "github.com/shopspring/decimal", "fmt"},
			Deps:    []string{"os", "net", "database/sql/driver"}}, ""},
		{"engine imports api", Package{ImportPath: m("internal/engine"), Imports: []string{m("internal/api")}}, "imports internal/api"},
		{"demo imports server", Package{ImportPath: m("internal/demo"), Imports: []string{m("internal/server")}}, "imports internal/server"},
		{"auth imports config", Package{ImportPath: m("internal/auth"), Imports: []string{m("internal/config")}}, "imports internal/config"},
		{"apitest may start a server", Package{ImportPath: m("internal/apitest"), Imports: []string{m("internal/server"), m("internal/config")}}, ""},
		{"apitest may not use api", Package{ImportPath: m("internal/apitest"), Imports: []string{m("internal/api")}}, "imports internal/api"},
		{"cmd may", Package{ImportPath: m("cmd/kadens"), Imports: []string{m("internal/server"), m("internal/config")}}, ""},
		{"server may use api", Package{ImportPath: m("internal/server"), Imports: []string{m("internal/api")}}, ""},
		{"the kit imports a wing", Package{ImportPath: m("internal/apikit"), Imports: []string{m("internal/autogiro")}}, "imports internal/autogiro, a wing, which only"},
		{"the kit imports api", Package{ImportPath: m("internal/apikit"), Imports: []string{m("internal/api")}}, "imports internal/api, which only"},
		{"a wing may use the kit", Package{ImportPath: m("internal/avtalegiro"), Imports: []string{m("internal/apikit"), m("internal/store")}}, ""},
		{"store imports a wing", Package{ImportPath: m("internal/store"), Imports: []string{m("internal/autogiro")}}, "imports internal/autogiro, a wing"},
		{"store imports a wing's sub-package", Package{ImportPath: m("internal/store"), Imports: []string{m("internal/peppol/peppoltest")}}, "imports internal/peppol/peppoltest, a wing"},
		{"storetest imports a wing", Package{ImportPath: m("internal/store/storetest"), Imports: []string{m("internal/webhook")}}, "imports internal/webhook, a wing"},
		{"store may use the domain and its own helpers", Package{ImportPath: m("internal/store"),
			Imports: []string{m("internal/billing"), m("internal/tenancy"), m("internal/rowcache"), m("internal/autogirofile")}}, ""},
		{"store imports a wing's format", Package{ImportPath: m("internal/store"), Imports: []string{m("internal/avtalegiro/ocrgiro")}}, "imports internal/avtalegiro/ocrgiro, a wing"},
		{"store imports the catalog's SQL", Package{ImportPath: m("internal/store"), Imports: []string{m("internal/catalogdb")}}, "imports internal/catalogdb, records above the store"},
		{"the engine and the app may use the catalog's SQL", Package{ImportPath: m("internal/engine"), Imports: []string{m("internal/catalogdb"), m("internal/store")}}, ""},
		{"a wing may use the store", Package{ImportPath: m("internal/autogiro"), Imports: []string{m("internal/store")}}, ""},
		{"a wing imports another", Package{ImportPath: m("internal/webhook"), Imports: []string{m("internal/outbox")}}, "imports internal/outbox, another wing"},
		{"a wing imports another's sub-package", Package{ImportPath: m("internal/autogiro"), Imports: []string{m("internal/avtalegiro/ocrgiro")}}, "another wing"},
		{"the identity wing's packages may use each other", Package{ImportPath: m("internal/idp"), Imports: []string{m("internal/subscriberuser"), m("internal/store")}}, ""},
		{"the engine imports a wing", Package{ImportPath: m("internal/engine"), Imports: []string{m("internal/peppol")}}, "only cmd/..., internal/server"},
		{"the API and the demo may use wings", Package{ImportPath: m("internal/api"), Imports: []string{m("internal/autogiro"), m("internal/webhook")}}, ""},
		{"config imports the store", Package{ImportPath: m("internal/config"), Imports: []string{m("internal/store")}}, "the settings are checked without"},
		{"config imports webhook", Package{ImportPath: m("internal/config"), Imports: []string{m("internal/webhook")}}, "the settings are checked without"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := CheckImports([]Package{c.pkg})
			switch {
			case c.want == "" && len(vs) > 0:
				t.Errorf("want none, got %v", vs)
			case c.want != "" && (len(vs) != 1 || !strings.Contains(vs[0].Detail, c.want)):
				t.Errorf("want one violation with %q, got %v", c.want, vs)
			}
		})
	}
}

func TestTxRuleCatchesViolations(t *testing.T) {
	store := map[string][]byte{"tx.go": []byte(`package store
type Store struct{}
type Tx struct{}
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error { return nil }
func (s *Store) WithWrite(fn func(*Tx) error) error { return nil }
func (s *Store) Open() (*Tx, error) { return nil, nil }
func (s *Store) BeginRead() error { return nil }
func (s *Store) inTx(fn func(*Tx) error) error { return nil }
func (s *Store) Invoice(id string) error { return nil }
`)}
	entry, err := TxEntryPoints(store)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(entry, ","); got != "BeginRead,InTx,Open,WithWrite" {
		t.Fatalf("entry points %s", got)
	}
	api := map[string][]byte{
		"good.go": []byte(`package api
func (s *Server) h() error { _, err := s.store.Invoice(ctx, id); return s.engine.CompleteOrder(ctx, id) }`),
		"bad.go": []byte(`package api
func (s *Server) h() error {
	return s.store.InTx(ctx, func(tx *store.Tx) error { return nil })
}
var open = (*store.Store).WithWrite`),
	}
	vs, err := CheckNoTx("internal/api", api, entry)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.Detail)
	}
	want := []string{"bad.go:3: uses InTx, a store transaction entry point", "bad.go:3: mentions store.Tx",
		"bad.go:5: uses WithWrite, a store transaction entry point"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestStoreWriteRuleCatchesViolations shows the write rule finding the
// store's writes (through the writer pool, a transaction, or another
// write) and a handler that calls one, and leaving reads alone.
func TestStoreWriteRuleCatchesViolations(t *testing.T) {
	store := map[string][]byte{"s.go": []byte(`package store
type Store struct{ w, r *sql.DB }
func (s *Store) CreateThing(ctx context.Context) error { _, err := s.w.ExecContext(ctx, "INSERT"); return err }
func (s *Store) MoveThing(ctx context.Context) error { return s.InTx(ctx, func(tx *Tx) error { return nil }) }
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error { return s.inTx(ctx, fn) }
func (s *Store) inTx(ctx context.Context, fn func(tx *Tx) error) error { _, err := s.w.BeginTx(ctx, nil); return err }
func (s *Store) RenameThing(ctx context.Context) error { return s.CreateThing(ctx) }
func (s *Store) Thing(ctx context.Context) error { return s.r.QueryRowContext(ctx, "SELECT").Err() }
func (s *Store) Things(ctx context.Context) error { return s.Thing(ctx) }
func (t *Tx) WriteInTx(ctx context.Context) error { return nil }
`)}
	writes, err := StoreWrites(store)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(writes, ","); got != "CreateThing,InTx,MoveThing,RenameThing" {
		t.Fatalf("writes %s", got)
	}
	api := map[string][]byte{"h.go": []byte(`package api
func (s *Server) read() error { return s.store.Things(ctx) }
func (s *Server) write() error {
	return s.store.RenameThing(ctx)
}
var get = getOne(s.store.MoveThing)
func (s *Server) ok() error { return s.app.CreateThing(ctx) }
func (s handlers) wing() error { return s.env.Store.CreateThing(ctx) }`)}
	calls, err := StoreCalls(api)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 4 {
		t.Fatalf("store calls %v, want Things, RenameThing, MoveThing, CreateThing", calls)
	}
	var got []string
	for _, v := range CheckNoStoreWrites("internal/api", calls, writes) {
		got = append(got, v.Detail)
	}
	want := []string{"h.go:4: calls the store's write RenameThing; call the application layer (internal/app)",
		"h.go:6: calls the store's write MoveThing; call the application layer (internal/app)",
		"h.go:8: calls the store's write CreateThing; call the application layer (internal/app)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
