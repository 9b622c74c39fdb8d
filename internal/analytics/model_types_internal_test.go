package analytics

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// TestSourceColumnTypes reads every property of every entity set from its
// source on each engine and checks, on PostgreSQL, that the column has the
// type its Edm type promises. Navigation properties join Guid columns and
// $filter binds Guid literals as uuid, so a Guid property that is text in
// its source (a member read from a JSON document) makes every join, IN and
// comparison on it an error ("operator does not exist: text = uuid"), not
// an empty answer.
func TestSourceColumnTypes(t *testing.T) {
	want := map[Edm][]string{
		Guid:    {"UUID"},
		String:  {"TEXT", "VARCHAR"},
		Int:     {"INT8", "INT4", "INT2"},
		Bool:    {"BOOL"},
		Money:   {"INT8", "INT4", "NUMERIC"},
		Decimal: {"TEXT"},
		Date:    {"TEXT", "VARCHAR"},
		Time:    {"TIMESTAMPTZ"},
	}
	m := NewModel()
	for _, e := range storetest.Engines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			s := storetest.Open(t, e)
			d := newDialect(e == store.Postgres)
			for _, set := range m.Sets {
				b := &builder{d: d, m: m, tenant: "00000000-0000-0000-0000-000000000000", at: time.Now()}
				var cols []string
				for i, p := range set.Props {
					cols = append(cols, p.sql(b, "a")+" AS c"+strconv.Itoa(i))
				}
				item, cond := b.from(set, "a")
				q := "SELECT " + strings.Join(cols, ", ") + " FROM " + item + " WHERE " + cond
				rows, err := s.ReadDB().QueryContext(context.Background(), q, b.args...)
				if err != nil {
					t.Errorf("%s: %v\n%s", set.Name, err, q)
					continue
				}
				types, err := rows.ColumnTypes()
				rows.Close()
				if err != nil {
					t.Fatal(err)
				}
				if e != store.Postgres {
					continue // SQLite's expression columns carry no declared type
				}
				for i, p := range set.Props {
					if got := types[i].DatabaseTypeName(); !contains(want[p.Type], got) {
						t.Errorf("%s.%s (%s) is %s on PostgreSQL, want one of %v", set.Name, p.Name, p.Type.name(), got, want[p.Type])
					}
				}
			}
		})
	}
}
