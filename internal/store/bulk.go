package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Set-based statements. The engine writes a batch of periods (and their
// invoices, demands, ledger entries and events) with multi-row INSERTs and
// reads what they need with IN lists, instead of one statement per row.
//
// A statement's text depends on its row count, and every text becomes a
// cached prepared statement (Tx.exec), so the counts are limited to powers
// of two: n rows go out as a few full chunks and at most log2(chunk)
// smaller ones (e.g. 1000 rows of 16: 62×16 + 8), and a table has at most
// a handful of statement texts.
//
// A chunk holds at most maxParams parameters, far below SQLite's variable
// limit (32,766): the SQLite driver looks every parameter's name up in a
// list as long as the statement's parameters, so binding costs grow with
// the square of a statement's size, and a few hundred parameters per
// statement is the sweet spot between that and per-statement overhead.
const (
	maxParams = 512
	maxChunk  = 256
)

// On PostgreSQL binding costs nothing of the kind and every statement is
// a round trip to the server, so its chunks are larger (its limit is
// 65,535 parameters).
const (
	pgMaxParams = 8192
	pgMaxChunk  = 1024
)

// chunkSize is the largest power of two ≤ n whose rows of width values
// fit in the engine's parameter budget (at least 1).
func (tx *Tx) chunkSize(n, width int) int {
	c, params := maxChunk, maxParams
	if tx.s.engine == Postgres {
		c, params = pgMaxChunk, pgMaxParams
	}
	for c > 1 && (c > n || c*width > params) {
		c >>= 1
	}
	return c
}

// bulkTexts caches built statement texts by (head, row, tail, count,
// engine).
var bulkTexts sync.Map

type bulkKey struct {
	head, row, tail string
	n               int
	anonymous       bool
}

// bulkText is head followed by n copies of row separated by commas, then
// tail. The ? of row and tail stay anonymous on SQLite (binding a named
// parameter costs the SQLite driver a scan of the statement's parameter
// names) and become $1, $2, … on PostgreSQL, in the order of the text.
func bulkText(head, row, tail string, n int, anonymous bool) string {
	k := bulkKey{head, row, tail, n, anonymous}
	if s, ok := bulkTexts.Load(k); ok {
		return s.(string)
	}
	var b strings.Builder
	b.WriteString(head)
	p := 1
	write := func(part string) {
		for _, r := range part {
			if r == '?' && !anonymous {
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(p))
				p++
				continue
			}
			b.WriteRune(r)
		}
	}
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		write(row)
	}
	write(tail)
	s := b.String()
	bulkTexts.Store(k, s)
	return s
}

// insertRows inserts rows into table, each row a value for every column
// of columns (a comma-separated list, in the order of the values); a
// non-empty onConflict (e.g. ON CONFLICT DO NOTHING) follows every
// statement. On SQLite the rows go out as multi-row INSERTs in chunks; on
// PostgreSQL larger sets without onConflict are streamed with COPY (see
// copyRows).
func (tx *Tx) insertRows(ctx context.Context, table, columns string, rows [][]any, onConflict string) error {
	if len(rows) == 0 {
		return nil
	}
	if tx.conn != nil && onConflict == "" && len(rows) >= copyMinRows {
		return tx.copyRows(ctx, table, columns, rows)
	}
	anonymous := tx.s.engine == SQLite
	head := "INSERT INTO " + table + " (" + columns + ") VALUES "
	row := "(?" + strings.Repeat(", ?", len(rows[0])-1) + ")"
	if onConflict != "" {
		onConflict = " " + onConflict
	}
	for len(rows) > 0 {
		n := tx.chunkSize(len(rows), len(rows[0]))
		args := make([]any, 0, n*len(rows[0]))
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		if _, err := tx.exec(ctx, bulkText(head, row, onConflict, n, anonymous), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// copyMinRows is the smallest set PostgreSQL gets with COPY: below it the
// extra round trip COPY costs (pgx asks the server for the columns' types)
// outweighs what it saves.
const copyMinRows = 32

// copyRows streams rows into table with PostgreSQL's COPY, in the
// transaction. A multi-row INSERT of a thousand rows is a statement with
// tens of thousands of text parameters that the server parses and plans;
// COPY sends the rows in binary as pgx encodes them, so the server works
// on the first rows while this process still encodes the last.
func (tx *Tx) copyRows(ctx context.Context, table, columns string, rows [][]any) error {
	return tx.conn.Raw(func(dc any) error {
		pc, ok := dc.(interface{ Conn() *pgx.Conn })
		if !ok {
			return fmt.Errorf("store: copy into %s: driver connection %T is not pgx", table, dc)
		}
		target, err := describeCopy(ctx, pc.Conn(), table, columns)
		if err != nil {
			return fmt.Errorf("store: copy into %s: %w", table, err)
		}
		if len(target.cols) != len(rows[0]) {
			return fmt.Errorf("store: copy into %s: %d columns for %d values", table, len(target.cols), len(rows[0]))
		}
		if err := binaryUUIDs(rows, target.uuid); err != nil {
			return fmt.Errorf("store: copy into %s: %w", table, err)
		}
		n, err := pc.Conn().CopyFrom(ctx, pgx.Identifier{table}, target.cols, pgx.CopyFromRows(rows))
		if err != nil {
			return err
		}
		if n != int64(len(rows)) {
			return fmt.Errorf("store: copy into %s: %d of %d rows written", table, n, len(rows))
		}
		return nil
	})
}

// copyTarget is a table's column list as COPY needs it: the names, and
// which of them are uuid columns.
type copyTarget struct {
	cols []string
	uuid []bool
}

// copyTargets caches describeCopy by table and column list.
var copyTargets sync.Map

// describeCopy splits columns (a comma-separated list of table's columns)
// and finds out which are uuid columns, asking the server once per table
// and list.
func describeCopy(ctx context.Context, c *pgx.Conn, table, columns string) (copyTarget, error) {
	key := table + "(" + columns + ")"
	if t, ok := copyTargets.Load(key); ok {
		return t.(copyTarget), nil
	}
	cols := strings.Split(columns, ",")
	for i := range cols {
		cols[i] = strings.TrimSpace(cols[i])
	}
	sd, err := c.Prepare(ctx, "", "SELECT "+columns+" FROM "+pgx.Identifier{table}.Sanitize())
	if err != nil {
		return copyTarget{}, err
	}
	if len(sd.Fields) != len(cols) {
		return copyTarget{}, fmt.Errorf("%d columns described for %d", len(sd.Fields), len(cols))
	}
	t := copyTarget{cols: cols, uuid: make([]bool, len(cols))}
	for i, f := range sd.Fields {
		t.uuid[i] = f.DataTypeOID == pgtype.UUIDOID
	}
	copyTargets.Store(key, t)
	return t, nil
}

// binaryUUIDs replaces the ids of uuid columns, which the store holds as
// strings, by their 16 bytes: COPY is binary, and pgx would otherwise
// find out how to encode each string by failing to, every time.
func binaryUUIDs(rows [][]any, uuids []bool) error {
	for _, r := range rows {
		for i, isUUID := range uuids {
			if !isUUID {
				continue
			}
			var s string
			switch v := r[i].(type) {
			case string:
				s = v
			case *string:
				if v == nil {
					r[i] = nil
					continue
				}
				s = *v
			default:
				continue
			}
			id, err := uuid.Parse(s)
			if err != nil {
				return fmt.Errorf("column %d: %q is not a uuid: %w", i+1, s, err)
			}
			r[i] = [16]byte(id)
		}
	}
	return nil
}

// updateRows runs head + rows + tail, whose tail ends with the tenant's
// parameter, for every row of rows in chunks like insertRows, and returns
// how many rows the statements changed.
func (tx *Tx) updateRows(ctx context.Context, head, row, tail string, rows [][]any) (int64, error) {
	anonymous := tx.s.engine == SQLite
	var changed int64
	for len(rows) > 0 {
		n := tx.chunkSize(len(rows), len(rows[0]))
		args := make([]any, 0, n*len(rows[0])+1)
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		args = append(args, tx.tenant)
		res, err := tx.exec(ctx, bulkText(head, row, tail, n, anonymous), args...)
		if err != nil {
			return changed, err
		}
		c, err := res.RowsAffected()
		if err != nil {
			return changed, err
		}
		changed += c
		rows = rows[n:]
	}
	return changed, nil
}

// queryIn runs query (whose IN list is written as (?), after $1 the
// tenant and fixed the parameters of fixed) for the values of in, in
// chunks, and calls scan for every row. The list of a chunk is padded to a
// power of two by repeating its last value, which changes no result.
func (tx *Tx) queryIn(ctx context.Context, head, tail string, fixed []any, in []string, scan func(*sql.Rows) error) error {
	for len(in) > 0 {
		n := min(len(in), maxChunk)
		size := maxChunk
		for size/2 >= n {
			size /= 2
		}
		args := make([]any, 0, 1+len(fixed)+size)
		args = append(args, tx.tenant)
		args = append(args, fixed...)
		for i := range size {
			args = append(args, in[min(i, n-1)])
		}
		var b strings.Builder
		b.WriteString(head)
		b.WriteString("(")
		for i := range size {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(2 + len(fixed) + i))
		}
		b.WriteString(")")
		b.WriteString(tail)
		if err := tx.queryEach(ctx, b.String(), args, scan); err != nil {
			return err
		}
		in = in[n:]
	}
	return nil
}

func (tx *Tx) queryEach(ctx context.Context, query string, args []any, scan func(*sql.Rows) error) error {
	rows, err := tx.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
