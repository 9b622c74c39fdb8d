package store_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestSchemasMatch: the SQLite and PostgreSQL migrations build the same
// schema — the same tables, columns and indexes by name, and beyond the
// names: each index's columns, uniqueness and whether it is partial, the
// primary keys, the unique constraints and which columns are NOT NULL —
// so SQL written once runs on both, and a migration added to one engine
// only, or a constraint written differently, shows up here. (Column types
// and foreign keys differ on purpose; docs/ARCHITECTURE.md.)
// It needs both engines, so it runs where PostgreSQL is configured (CI's
// PostgreSQL step).
func TestSchemasMatch(t *testing.T) {
	t.Parallel()
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skipf("needs PostgreSQL (%s); CI runs it in its PostgreSQL step", storetest.PostgresEnv)
	}
	lite := describe(t, storetest.Open(t, store.SQLite))
	pg := describe(t, storetest.Open(t, store.Postgres))
	for _, kind := range []string{"table", "column", "index", "index definition", "primary key", "unique constraint", "not null"} {
		a, b := lite[kind], pg[kind]
		for _, x := range a {
			if d := kind + " " + x + " is on SQLite only"; !slices.Contains(b, x) && !slices.Contains(meantDifferences, d) {
				t.Error(d)
			}
		}
		for _, x := range b {
			if d := kind + " " + x + " is on PostgreSQL only"; !slices.Contains(a, x) && !slices.Contains(meantDifferences, d) {
				t.Error(d)
			}
		}
	}
	t.Logf("%d tables, %d columns, %d indexes", len(lite["table"]), len(lite["column"]), len(lite["index"]))
	t.Logf("%d primary keys, %d unique constraints, %d NOT NULL columns", len(lite["primary key"]), len(lite["unique constraint"]), len(lite["not null"]))
	if len(lite["table"]) < 20 || len(lite["column"]) < 100 || len(lite["index"]) < 20 || len(lite["primary key"]) < 20 || len(lite["not null"]) < 100 ||
		len(lite["index definition"]) != len(lite["index"]) {
		t.Fatalf("the schema looks empty: %d tables, %d columns, %d indexes", len(lite["table"]), len(lite["column"]), len(lite["index"]))
	}
}

// meantDifferences are the differences made on purpose.
var meantDifferences = []string{
	// The target of the foreign keys PostgreSQL's 00013 folds two into one
	// (a foreign key needs a unique parent key); SQLite keeps the two keys.
	"unique constraint subscriber_accounts(tenant_id, id, subscriber_id) is on PostgreSQL only",
}

// describe lists a store's tables, "table.column"s and indexes by name,
// leaving out the migration tool's own table and the indexes an engine
// makes by itself for keys; and, by kind, each index's definition
// ("name on table(a, b) unique partial"), the primary keys and unique
// constraints ("table(a, b)") and the NOT NULL columns ("table.column";
// a primary key's columns count as NOT NULL, as PostgreSQL makes them and
// SQLite does for rows the store writes).
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
		// Views' columns too, as PostgreSQL's information_schema lists them.
		views := query(`SELECT name, '' FROM sqlite_master WHERE type = 'view'`)
		for _, tb := range append(slices.Clone(tables), views...) {
			columns = append(columns, query(`SELECT ?, name FROM pragma_table_xinfo(?)`, tb[0], tb[0])...)
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
	for kind, rows := range constraints(t, s, query, tables) {
		for _, r := range rows {
			if !strings.HasPrefix(r[0], "goose_") {
				out[kind] = append(out[kind], r[1])
			}
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// constraints returns, by kind, (table, description) pairs of the index
// definitions, primary keys, unique constraints and NOT NULL columns.
func constraints(t *testing.T, s *store.Store, query func(string, ...any) [][2]string, tables [][2]string) map[string][][2]string {
	t.Helper()
	out := map[string][][2]string{}
	add := func(kind, table, desc string) { out[kind] = append(out[kind], [2]string{table, desc}) }
	def := func(name, table string, cols []string, unique, partial bool) string {
		d := name + " on " + table + "(" + strings.Join(cols, ", ") + ")"
		if unique {
			d += " unique"
		}
		if partial {
			d += " partial"
		}
		return d
	}
	if s.Engine() == store.SQLite {
		for _, tb := range tables {
			table := tb[0]
			pk := map[int]string{}
			for _, c := range query(`SELECT name, "notnull" || ' ' || pk FROM pragma_table_info(?)`, table) {
				var notNull, pos int
				if _, err := fmt.Sscan(c[1], &notNull, &pos); err != nil {
					t.Fatal(err)
				}
				if pos > 0 {
					pk[pos] = c[0]
				}
				if notNull == 1 || pos > 0 {
					add("not null", table, table+"."+c[0])
				}
			}
			if len(pk) > 0 {
				cols := make([]string, len(pk))
				for pos, name := range pk {
					cols[pos-1] = name
				}
				add("primary key", table, table+"("+strings.Join(cols, ", ")+")")
			}
			for _, ix := range query(`SELECT name, "unique" || ' ' || origin || ' ' || partial FROM pragma_index_list(?)`, table) {
				var unique, partial int
				var origin string
				if _, err := fmt.Sscan(ix[1], &unique, &origin, &partial); err != nil {
					t.Fatal(err)
				}
				var cols []string
				for _, c := range query(`SELECT seqno, coalesce(name, '(expression)') FROM pragma_index_info(?) ORDER BY seqno`, ix[0]) {
					cols = append(cols, c[1])
				}
				switch origin {
				case "c":
					add("index definition", table, def(ix[0], table, cols, unique == 1, partial == 1))
				case "u":
					add("unique constraint", table, table+"("+strings.Join(cols, ", ")+")")
				}
			}
		}
		return out
	}
	for _, c := range query(`SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_nullable = 'NO'`) {
		add("not null", c[0], c[0]+"."+c[1])
	}
	// Key columns in key order; an expression is "(expression)".
	for _, r := range query(`SELECT t.relname, c.contype::text || ' ' || string_agg(a.attname, ',' ORDER BY k.n)
		FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace ns ON ns.oid = t.relnamespace
		CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
		JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
		WHERE ns.nspname = current_schema() AND c.contype IN ('p', 'u')
		GROUP BY t.relname, c.oid, c.contype::text`) {
		kind, cols, _ := strings.Cut(r[1], " ")
		desc := r[0] + "(" + strings.ReplaceAll(cols, ",", ", ") + ")"
		if kind == "p" {
			add("primary key", r[0], desc)
		} else {
			add("unique constraint", r[0], desc)
		}
	}
	for _, r := range query(`SELECT t.relname, i.relname || ' ' || x.indisunique::text || ' ' || (x.indpred IS NOT NULL)::text || ' ' ||
			string_agg(coalesce(a.attname, '(expression)'), ',' ORDER BY k.n)
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
		JOIN pg_namespace ns ON ns.oid = i.relnamespace
		CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
		LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum AND k.attnum <> 0
		WHERE ns.nspname = current_schema() AND NOT x.indisprimary
		AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('u', 'p'))
		GROUP BY t.relname, i.relname, x.indisunique, x.indpred IS NOT NULL`) {
		f := strings.Fields(r[1])
		if len(f) != 4 {
			t.Fatalf("index row %q", r[1])
		}
		add("index definition", r[0], def(f[0], r[0], strings.Split(f[3], ","), f[1] == "true", f[2] == "true"))
	}
	return out
}
