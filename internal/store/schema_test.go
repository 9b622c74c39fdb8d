package store_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestSchemasMatch: the SQLite and PostgreSQL migrations build the same
// schema — the same tables, columns and indexes by name — so SQL written
// once runs on both and a migration added to one engine only shows up
// here. (Column types and foreign keys differ on purpose; docs/ARCHITECTURE.md.)
// It needs both engines, so it runs where PostgreSQL is configured (CI's
// PostgreSQL step).
func TestSchemasMatch(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skipf("needs PostgreSQL (%s); CI runs it in its PostgreSQL step", storetest.PostgresEnv)
	}
	lite := describe(t, storetest.Open(t, store.SQLite))
	pg := describe(t, storetest.Open(t, store.Postgres))
	for _, kind := range []string{"table", "column", "index"} {
		a, b := lite[kind], pg[kind]
		for _, x := range a {
			if !slices.Contains(b, x) {
				t.Errorf("%s %s is on SQLite only", kind, x)
			}
		}
		for _, x := range b {
			if !slices.Contains(a, x) {
				t.Errorf("%s %s is on PostgreSQL only", kind, x)
			}
		}
	}
	t.Logf("%d tables, %d columns, %d indexes", len(lite["table"]), len(lite["column"]), len(lite["index"]))
	if len(lite["table"]) < 20 || len(lite["column"]) < 100 || len(lite["index"]) < 20 {
		t.Fatalf("the schema looks empty: %d tables, %d columns, %d indexes", len(lite["table"]), len(lite["column"]), len(lite["index"]))
	}
}

// describe lists a store's tables, "table.column"s and indexes by name,
// leaving out the migration tool's own table and the indexes an engine
// makes by itself for keys.
func describe(t *testing.T, s *store.Store) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := map[string][]string{}
	query := func(q string, args ...any) [][2]string {
		rows, err := s.DB().QueryContext(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var res [][2]string
		for rows.Next() {
			var a, b string
			if err := rows.Scan(&a, &b); err != nil {
				t.Fatal(err)
			}
			res = append(res, [2]string{a, b})
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return res
	}
	var tables, columns, indexes [][2]string
	if s.Engine() == store.SQLite {
		tables = query(`SELECT name, '' FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
		for _, tb := range tables {
			columns = append(columns, query(`SELECT ?, name FROM pragma_table_info(?)`, tb[0], tb[0])...)
		}
		indexes = query(`SELECT name, '' FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`)
	} else {
		tables = query(`SELECT table_name, '' FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
		columns = query(`SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`)
		indexes = query(`SELECT i.relname, '' FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
			WHERE n.nspname = current_schema() AND NOT x.indisprimary
			AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('u', 'p'))`)
	}
	for _, tb := range tables {
		if !strings.HasPrefix(tb[0], "goose_") {
			out["table"] = append(out["table"], tb[0])
		}
	}
	for _, c := range columns {
		if !strings.HasPrefix(c[0], "goose_") {
			out["column"] = append(out["column"], c[0]+"."+c[1])
		}
	}
	for _, ix := range indexes {
		out["index"] = append(out["index"], ix[0])
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}
