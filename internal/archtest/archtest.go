// Package archtest holds Kadens' layer rules and checks them against the
// module's package graph (`go list -deps -json`) and the API's source; its
// test runs with `go test ./...`, so a violating import or a transaction
// opened in the HTTP layer fails CI. The rules are functions of a graph, so
// the test shows each of them failing on a fake graph too.
//
// The layers, from the bottom:
//
//   - domain: money, period, catalog, billing, checkdigit, bankaccount,
//     country (and validation, which they share): rules without I/O.
//   - store: SQL on SQLite and PostgreSQL: the engines, transactions,
//     migrations, the shared records and the query kit the wings' own SQL
//     runs on. It imports no wing (Wings), nor the records kept above
//     it on the same kit (Records: the catalog's SQL, internal/catalogdb,
//     and the Idempotency-Key records, internal/idempotency).
//   - application: engine, invoicing, provider, idempotency and the wings (Wings:
//     autogiro, avtalegiro, peppol, webhook, outbox, the identity wing
//     idp, subscriberuser, auth, the console's staff users, staff, the
//     subscribers' deletion requests, privacy, print delivery, delivery, and the
//     general ledger, bookkeeping),
//     which open the store's transactions. What two wings share sits
//     below them as a base (internal/password: both user directories hash
//     with it; internal/worker). A wing imports no other wing; only the
//     surfaces (api, app, and the console, internal/console) and the
//     composition import wings (wingImporters). The packages here that are no wing
//     (idempotency, and tenantimport for its import records) run their SQL
//     on the store's kit too; the store cannot import them, as they import
//     it (the compiler refuses the cycle), so no rule of this package is
//     needed for that.
//   - HTTP: api decodes, validates, calls the application and answers; it
//     opens no store transaction. A payment-provider wing keeps its own
//     API file (WingAPIFiles: autogiro/api.go, avtalegiro/api.go,
//     delivery/api.go), written
//     with the handler kit internal/apikit and served by api; those files
//     are handlers under the same rules. apikit imports no wing and not
//     api (the wings' and api's own rules say so).
//   - composition: cmd/... and internal/server assemble a process; config
//     parses its settings, linking neither the store nor the queues. Only
//     they (and the apitest helper, which starts a real server for tests)
//     import api, server and config.
package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"sort"
	"strings"
)

// Module is the module path the rules speak of.
const Module = "github.com/kadens/kadens"

// Package is what the rules need of a package from `go list -deps -json`.
type Package struct {
	ImportPath string
	Standard   bool
	Imports    []string // direct, non-test
	Deps       []string // transitive, non-test
	Dir        string
	GoFiles    []string // non-test sources, relative to Dir
}

// Violation is one broken rule.
type Violation struct {
	Rule    string
	Package string
	Detail  string
}

func (v Violation) String() string { return fmt.Sprintf("%s: %s: %s", v.Rule, v.Package, v.Detail) }

// Domain lists the pure domain packages.
var Domain = []string{"money", "period", "catalog", "billing", "checkdigit", "bankaccount", "country"}

// domainMayUse are the module's packages a domain package may depend on.
var domainMayUse = append(slices.Clone(Domain), "validation")

// domainModules are the third-party modules domain packages may import:
// exact decimals and uuids. (uuid reads network interfaces for version-1
// node ids, so `net` is in the domain's transitive dependencies through it;
// the domain's own code imports no I/O package, which is what the direct
// rule checks.)
var domainModules = []string{"github.com/shopspring/decimal", "github.com/google/uuid"}

// ioDirect are standard packages that do I/O (files, processes, network,
// databases, logs): a domain package may not import any of them, nor a
// package under them.
var ioDirect = []string{"os", "io/fs", "io/ioutil", "path/filepath", "syscall", "net", "database/sql", "log"}

// ioAnywhere may not be among a domain package's transitive dependencies at
// all (exactly these: decimal's Scanner/Valuer brings database/sql/driver,
// an interface package without I/O).
var ioAnywhere = []string{"database/sql", "net/http", "os/exec"}

// Composition are the packages that assemble a process: the only importers
// of api, server and config, together with TestHelpers.
var Composition = []string{"cmd/...", "internal/server"}

// WingAPIFiles are the wings' API files (module-relative): handlers like
// internal/api's, held to the same rules (no transaction, no store write,
// few store reads).
var WingAPIFiles = []string{"internal/autogiro/api.go", "internal/avtalegiro/api.go", "internal/vipps/api.go", "internal/delivery/api.go", "internal/delivery/api_distribution.go", "internal/bookkeeping/api.go"}

// TestHelpers are non-test packages that only tests import; they may start
// a whole server.
var TestHelpers = []string{"internal/apitest"}

// Wings are the integrations and services that own their rules and their
// tables' SQL (internal/autogiro: records.go, sql.go) on top of the store's
// query kit. The store imports none of them, nor a package under them: its
// arrows point down, and a wing's code in the store is a wing's code that
// every other wing links and nobody owns.
var Wings = []string{"internal/autogiro/...", "internal/avtalegiro/...", "internal/peppol/...", "internal/webhook/...",
	"internal/outbox/...", "internal/idp/...", "internal/subscriberuser/...", "internal/auth/...", "internal/staff/...", "internal/privacy/...", "internal/vipps/...", "internal/delivery/...", "internal/bookkeeping/..."}

// Records are packages of records that are not the store's shared ones
// and hold their SQL on the store's query kit, as a wing does, but own no
// rules or integration of their own: the catalog's SQL (internal/catalogdb),
// which the application layer, the engine and the tools that fill a
// tenant use; the Idempotency-Key records; the console dashboard's reports
// (internal/reporting, read-only); and the ledger check
// (internal/ledger), whose item sources the wings register. They are no wings (anything above the store may import
// them); the store imports none of them, or its core would link what it
// moved out.
var Records = []string{"internal/catalogdb/...", "internal/idempotency/...", "internal/ledger/...", "internal/reporting/..."}

// wingGroups are wings written as several packages, which may import each
// other: the identity wing issues tokens (idp), keeps subscriber users and
// their entitlements (subscriberuser) and verifies tokens (auth).
var wingGroups = [][]string{{"internal/idp/...", "internal/subscriberuser/...", "internal/auth/..."}}

// wingImporters may import a wing: the surfaces that call the wings and
// the packages that assemble or exercise a process. A wing imports no
// other wing: what two wings share belongs in the store, a domain package
// or a base such as internal/worker, so that each can be read, changed or
// left out alone.
var wingImporters = []string{"cmd/...", "internal/server", "internal/config", "internal/api", "internal/app", "internal/console", "internal/minside", "internal/demo", "internal/apitest", "bench/..."}

// configMayNotUse are what the settings must not link: they are read
// before a store is opened, by operator commands that open none.
var configMayNotUse = []string{"internal/store/...", "internal/webhook/...", "internal/outbox/..."}

// wingOf is the wing (or wing group) r belongs to, as the first pattern
// of its group; "" when r is no wing.
func wingOf(r string) string {
	for _, g := range wingGroups {
		if slices.ContainsFunc(g, func(w string) bool { return matches(r, w) }) {
			return g[0]
		}
	}
	for _, w := range Wings {
		if matches(r, w) {
			return w
		}
	}
	return ""
}

// checkWings applies the wings' rules to p's imports: a wing only from a
// surface or the composition, never from another wing; and the settings
// link neither the store nor the queues.
func checkWings(p Package) []Violation {
	r := rel(p.ImportPath)
	var out []Violation
	for _, imp := range p.Imports {
		ri := rel(imp)
		if ri == "" {
			continue
		}
		if matches(r, "internal/config") && slices.ContainsFunc(configMayNotUse, func(pat string) bool { return matches(ri, pat) }) {
			out = append(out, Violation{"config", r, "imports " + ri + ": the settings are checked without a store or a dispatcher"})
		}
		w := wingOf(ri)
		if w == "" || w == wingOf(r) {
			continue
		}
		if wingOf(r) != "" {
			out = append(out, Violation{"wings", r, "imports " + ri + ", another wing: what two wings share goes below both"})
		} else if !slices.ContainsFunc(wingImporters, func(pat string) bool { return matches(r, pat) }) {
			out = append(out, Violation{"wings", r, "imports " + ri + ", a wing, which only " + strings.Join(wingImporters, ", ") + " may import"})
		}
	}
	return out
}

// restricted maps a package to who may import it.
var restricted = map[string][]string{
	"internal/api":    {"cmd/...", "internal/server"},
	"internal/server": append(slices.Clone(Composition), TestHelpers...),
	"internal/config": append(slices.Clone(Composition), TestHelpers...),
}

// rel returns p relative to the module ("internal/api"), or "" for a
// package outside it.
func rel(p string) string {
	if p == Module {
		return "."
	}
	if r, ok := strings.CutPrefix(p, Module+"/"); ok {
		return r
	}
	return ""
}

// matches reports whether module-relative path r matches pattern ("x/..."
// matches x and everything under it).
func matches(r, pattern string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return r == base || strings.HasPrefix(r, base+"/")
	}
	return r == pattern
}

func under(p string, roots []string) bool {
	for _, root := range roots {
		if p == root || strings.HasPrefix(p, root+"/") {
			return true
		}
	}
	return false
}

// CheckImports applies the import rules to a package graph.
func CheckImports(pkgs []Package) []Violation {
	var out []Violation
	for _, p := range pkgs {
		r := rel(p.ImportPath)
		if r == "" {
			continue
		}
		if slices.Contains(Domain, strings.TrimPrefix(r, "internal/")) && strings.HasPrefix(r, "internal/") {
			out = append(out, checkDomain(p)...)
		}
		if matches(r, "internal/store/...") {
			out = append(out, checkStore(p)...)
		}
		if !matches(r, "internal/store/...") { // the store's own rule says it
			out = append(out, checkWings(p)...)
		}
		for _, imp := range p.Imports {
			allowed, ok := restricted[rel(imp)]
			if !ok {
				continue
			}
			if !slices.ContainsFunc(allowed, func(pat string) bool { return matches(r, pat) }) {
				out = append(out, Violation{"layers", r, fmt.Sprintf("imports %s, which only %s may import", rel(imp), strings.Join(allowed, ", "))})
			}
		}
	}
	return out
}

// checkStore applies the store's rule: no wing, and none of the Records
// above it, among its imports.
func checkStore(p Package) []Violation {
	var out []Violation
	for _, imp := range p.Imports {
		ri := rel(imp)
		if ri == "" {
			continue
		}
		if slices.ContainsFunc(Wings, func(w string) bool { return matches(ri, w) }) {
			out = append(out, Violation{"store", rel(p.ImportPath), "imports " + ri + ", a wing: a wing's SQL lives in the wing, on the store's query kit"})
		}
		if slices.ContainsFunc(Records, func(w string) bool { return matches(ri, w) }) {
			out = append(out, Violation{"store", rel(p.ImportPath), "imports " + ri + ", records above the store: their SQL uses the store, not the other way round"})
		}
	}
	return out
}

func checkDomain(p Package) []Violation {
	r := rel(p.ImportPath)
	var out []Violation
	for _, imp := range p.Imports {
		switch {
		case under(imp, ioDirect):
			out = append(out, Violation{"domain", r, "imports " + imp + " (I/O)"})
		case rel(imp) != "":
			if !slices.Contains(domainMayUse, strings.TrimPrefix(rel(imp), "internal/")) {
				out = append(out, Violation{"domain", r, "imports " + rel(imp) + ", which is not a domain package"})
			}
		case strings.Contains(strings.Split(imp, "/")[0], "."):
			if !under(imp, domainModules) {
				out = append(out, Violation{"domain", r, "imports " + imp + ", a module domain packages do not use"})
			}
		}
	}
	for _, d := range p.Deps {
		switch {
		case slices.Contains(ioAnywhere, d):
			out = append(out, Violation{"domain", r, "depends on " + d + " (I/O)"})
		case rel(d) != "" && !slices.Contains(domainMayUse, strings.TrimPrefix(rel(d), "internal/")):
			out = append(out, Violation{"domain", r, "depends on " + rel(d) + ", which is not a domain package"})
		}
	}
	return out
}

// TxEntryPoints returns the names of the store's transaction entry points:
// methods of *Store (or *DB-like receivers) that take a func whose
// parameter is a *Tx, or that return a *Tx or *sql.Tx, plus any Begin*
// method, read from the store package's source files (name → source).
func TxEntryPoints(files map[string][]byte) ([]string, error) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for name, src := range files {
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() {
				continue
			}
			if strings.HasPrefix(fd.Name.Name, "Begin") || takesTxFunc(fd.Type) || returnsTx(fd.Type) {
				seen[fd.Name.Name] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// isTx reports whether e is *Tx or *sql.Tx.
func isTx(e ast.Expr) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	switch x := star.X.(type) {
	case *ast.Ident:
		return x.Name == "Tx"
	case *ast.SelectorExpr:
		return x.Sel.Name == "Tx"
	}
	return false
}

func takesTxFunc(ft *ast.FuncType) bool {
	for _, p := range ft.Params.List {
		fn, ok := p.Type.(*ast.FuncType)
		if !ok {
			continue
		}
		for _, q := range fn.Params.List {
			if isTx(q.Type) {
				return true
			}
		}
	}
	return false
}

func returnsTx(ft *ast.FuncType) bool {
	if ft.Results == nil {
		return false
	}
	for _, r := range ft.Results.List {
		if isTx(r.Type) {
			return true
		}
	}
	return false
}

// CheckNoTx reports every use, in files (name → source) of package pkg, of a
// method named like one of the store's transaction entry points, and every
// mention of the store's transaction type: the HTTP layer calls the
// application, which opens transactions.
func CheckNoTx(pkg string, files map[string][]byte, entryPoints []string) ([]Violation, error) {
	fset := token.NewFileSet()
	var out []Violation
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, files[name], parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pos := fset.Position(sel.Pos())
			where := fmt.Sprintf("%s:%d", name, pos.Line)
			switch {
			case slices.Contains(entryPoints, sel.Sel.Name):
				out = append(out, Violation{"no-tx", pkg, fmt.Sprintf("%s: uses %s, a store transaction entry point", where, sel.Sel.Name)})
			case sel.Sel.Name == "Tx":
				if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "store" || id.Name == "sql") {
					out = append(out, Violation{"no-tx", pkg, fmt.Sprintf("%s: mentions %s.Tx", where, id.Name)})
				}
			}
			return true
		})
	}
	return out, nil
}

// StoreWrites returns the exported methods of *Store that write, read from
// the store package's source files (name → source): a method whose body
// uses the writer pool (the receiver's w), opens a transaction, or calls
// another such method of the store. (A read that runs in a transaction for
// a consistent view counts as a write: the HTTP layer has no business
// there either.)
func StoreWrites(files map[string][]byte) ([]string, error) {
	fset := token.NewFileSet()
	type method struct {
		writes bool
		calls  []string
	}
	methods := map[string]*method{}
	for name, src := range files {
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Body == nil || len(fd.Recv.List) != 1 || len(fd.Recv.List[0].Names) != 1 {
				continue
			}
			star, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
			if !ok {
				continue
			}
			if id, ok := star.X.(*ast.Ident); !ok || id.Name != "Store" {
				continue
			}
			recv := fd.Recv.List[0].Names[0].Name
			m := &method{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == recv {
					if sel.Sel.Name == "w" {
						m.writes = true
					}
					m.calls = append(m.calls, sel.Sel.Name)
				}
				return true
			})
			methods[fd.Name.Name] = m
		}
	}
	// A write is whatever reaches the writer: iterate to a fixed point.
	for changed := true; changed; {
		changed = false
		for _, m := range methods {
			if m.writes {
				continue
			}
			for _, c := range m.calls {
				if callee, ok := methods[c]; ok && callee.writes {
					m.writes, changed = true, true
					break
				}
			}
		}
	}
	var names []string
	for n, m := range methods {
		if m.writes && ast.IsExported(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// StoreCall is one use of a store method in a surface's source.
type StoreCall struct {
	Where  string // file:line
	Method string
}

// StoreCalls returns every use in files (name → source) of a method of the
// surface's store field (x.store.Method, or x.Store.Method for the store a
// wing's API file gets in its apikit.Env; called or passed as a value):
// what a handler reads from the store directly rather than through the
// application layer.
func StoreCalls(files map[string][]byte) ([]StoreCall, error) {
	fset := token.NewFileSet()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []StoreCall
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, files[name], parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if field, ok := sel.X.(*ast.SelectorExpr); ok && (field.Sel.Name == "store" || field.Sel.Name == "Store") {
				out = append(out, StoreCall{fmt.Sprintf("%s:%d", name, fset.Position(sel.Pos()).Line), sel.Sel.Name})
			}
			return true
		})
	}
	return out, nil
}

// CheckNoStoreWrites reports every call in package pkg's store calls to one
// of the store's write methods: the HTTP layer decodes, calls the
// application layer (internal/app) and answers; writes go below it, where
// the console and Min side reach the same rules.
func CheckNoStoreWrites(pkg string, calls []StoreCall, writes []string) []Violation {
	var out []Violation
	for _, c := range calls {
		if slices.Contains(writes, c.Method) {
			out = append(out, Violation{"no-store-writes", pkg, fmt.Sprintf("%s: calls the store's write %s; call the application layer (internal/app)", c.Where, c.Method)})
		}
	}
	return out
}
