package analytics

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kadens/kadens/internal/odata"
)

// stmt is one SELECT and how to read its rows: output columns, then the
// sort keys, then the link columns of each $expand, then (for an expanded
// child) its own link column.
type stmt struct {
	sql     string
	args    []any
	cols    []column
	keys    []sortKey
	expands []odata.Expand
	navs    []*Nav
	ownLink bool
}

// selectColumns are the properties $select names (all without $select).
func selectColumns(s *Set, sel []string) ([]*Prop, error) {
	if sel == nil || contains(sel, "*") {
		out := make([]*Prop, len(s.Props))
		for i := range s.Props {
			out[i] = &s.Props[i]
		}
		return out, nil
	}
	var out []*Prop
	seen := map[string]bool{}
	for _, name := range sel {
		if seen[name] {
			continue
		}
		seen[name] = true
		p, ok := s.Prop(name)
		if _, nav := s.Nav(name); !ok && nav {
			continue // clients may name an expanded navigation property
		}
		if !ok {
			return nil, &badRequest{target: "$select", msg: name + " is not a property of " + s.Name}
		}
		out = append(out, p)
	}
	return out, nil
}

// build assembles the SELECT of set sc.set under conds (each already
// holding its parameters in b), in keys' order. partition, when set, is the
// child column whose groups $top/$skip apply to (expanded collections).
func (b *builder) build(sc *scope, opts odata.Options, conds []string, keys []sortKey, limit int, offset int64, partition string) (*stmt, error) {
	props, err := selectColumns(sc.set, opts.Select)
	if err != nil {
		return nil, err
	}
	st := &stmt{keys: keys, expands: opts.Expand}
	var sel []string
	for i, p := range props {
		st.cols = append(st.cols, column{name: p.Name, t: p.Type})
		sel = append(sel, b.d.output(p.sql(b, sc.alias), p.Type)+" AS c"+strconv.Itoa(i))
	}
	for i, k := range keys {
		sel = append(sel, b.d.output(k.sql, k.t)+" AS s"+strconv.Itoa(i))
	}
	for i, e := range opts.Expand {
		for _, prev := range opts.Expand[:i] {
			if prev.Nav == e.Nav {
				return nil, &badRequest{target: "$expand", msg: e.Nav + " is expanded twice"}
			}
		}
		nav, ok := sc.set.Nav(e.Nav)
		if !ok {
			return nil, &badRequest{target: "$expand", msg: e.Nav + " is not a navigation property of " + sc.set.Name}
		}
		st.navs = append(st.navs, nav)
		sel = append(sel, b.d.output(sc.alias+"."+nav.From, Guid)+" AS l"+strconv.Itoa(i))
	}
	if partition != "" {
		st.ownLink = true
		sel = append(sel, b.d.output(partition, Guid)+" AS o")
	}
	item, tenantCond := b.from(sc.set, sc.alias)
	where := append([]string{tenantCond}, conds...)
	if opts.Filter != nil {
		c, err := b.cond(sc, opts.Filter)
		if err != nil {
			return nil, withTarget(err, "$filter")
		}
		where = append(where, c)
	}
	var order []string
	for _, k := range keys {
		order = append(order, k.order(b.d))
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + item + " WHERE " + strings.Join(where, " AND ")
	if partition != "" && (opts.Top != nil || opts.Skip != nil) {
		// $top/$skip of an expanded collection count per parent.
		var outer []string
		for i, k := range keys {
			outer = append(outer, sortKey{sql: "x.s" + strconv.Itoa(i), desc: k.desc}.order(b.d))
		}
		var names []string
		for _, c := range sel {
			names = append(names, "x."+c[strings.LastIndex(c, " AS ")+4:])
		}
		q = "SELECT " + strings.Join(names, ", ") + " FROM (SELECT " + strings.Join(sel, ", ") + ", ROW_NUMBER() OVER (PARTITION BY " + partition + " ORDER BY " +
			strings.Join(order, ", ") + ") AS rn FROM " + item + " WHERE " + strings.Join(where, " AND ") + ") x WHERE "
		lo := int64(0)
		if opts.Skip != nil {
			lo = *opts.Skip
		}
		q += "x.rn > " + strconv.FormatInt(lo, 10)
		if opts.Top != nil {
			q += " AND x.rn <= " + strconv.FormatInt(lo+*opts.Top, 10)
		}
		q += " ORDER BY x.o, " + strings.Join(outer, ", ")
	} else {
		if partition != "" {
			order = append([]string{partition}, order...)
		}
		q += " ORDER BY " + strings.Join(order, ", ")
	}
	if limit > 0 {
		q += " LIMIT " + strconv.Itoa(limit)
	}
	if offset > 0 {
		if limit <= 0 {
			q += " LIMIT -1"
			if b.d.postgres {
				q = strings.TrimSuffix(q, " LIMIT -1") + " LIMIT ALL"
			}
		}
		q += " OFFSET " + strconv.FormatInt(offset, 10)
	}
	st.sql, st.args = q, b.args
	return st, nil
}

func withTarget(err error, target string) error {
	if br, ok := err.(*badRequest); ok && br.target == "" {
		return &badRequest{target: target, msg: br.msg}
	}
	return err
}

// result is a materialized set of rows (a page with $expand, an expanded
// collection, a single entity).
type result struct {
	st    *stmt
	rows  [][]any // output columns
	sorts [][]any
	links [][]string
	own   []string
	exp   []*expansion
}

type expansion struct {
	nav    *Nav
	child  *result
	byLink map[string][]int
}

// scanRow reads one row into converted values.
func (st *stmt) scanRow(rows *sql.Rows, buf []any) (vals, sorts []any, links []string, own string, err error) {
	ptrs := make([]any, len(buf))
	for i := range buf {
		ptrs[i] = &buf[i]
	}
	if err = rows.Scan(ptrs...); err != nil {
		return
	}
	n := len(st.cols)
	vals = make([]any, n)
	for i, c := range st.cols {
		if vals[i], err = convert(buf[i], c.t); err != nil {
			return
		}
	}
	sorts = make([]any, len(st.keys))
	for i, k := range st.keys {
		if sorts[i], err = convert(buf[n+i], k.t); err != nil {
			return
		}
	}
	n += len(st.keys)
	links = make([]string, len(st.navs))
	for i := range st.navs {
		if buf[n+i] != nil {
			v, _ := convert(buf[n+i], Guid)
			links[i] = v.(string)
		}
	}
	n += len(st.navs)
	if st.ownLink && buf[n] != nil {
		v, _ := convert(buf[n], Guid)
		own = v.(string)
	}
	return
}

func (st *stmt) width() int {
	w := len(st.cols) + len(st.keys) + len(st.navs)
	if st.ownLink {
		w++
	}
	return w
}

// fetch runs a statement and reads every row, then its expansions.
func (h *Handler) fetch(ctx context.Context, b *builder, sc *scope, opts odata.Options, conds []string, keys []sortKey, limit int) (*result, error) {
	if keys == nil {
		var err error
		if keys, err = b.orderKeys(sc, opts.OrderBy); err != nil {
			return nil, err
		}
	}
	st, err := b.build(sc, opts, conds, keys, limit, 0, "")
	if err != nil {
		return nil, err
	}
	return h.materialize(ctx, st, b)
}

func (h *Handler) materialize(ctx context.Context, st *stmt, b *builder) (*result, error) {
	rows, err := h.o.DB.QueryContext(ctx, st.sql, st.args...)
	if err != nil {
		return nil, fmt.Errorf("analytics: query: %w", err)
	}
	defer rows.Close()
	res := &result{st: st}
	buf := make([]any, st.width())
	for rows.Next() {
		vals, sorts, links, own, err := st.scanRow(rows, buf)
		if err != nil {
			return nil, err
		}
		res.rows = append(res.rows, vals)
		res.sorts = append(res.sorts, sorts)
		res.links = append(res.links, links)
		res.own = append(res.own, own)
		if len(res.rows) > MaxExpandRows {
			return nil, &badRequest{target: "$expand", msg: fmt.Sprintf("expands more than %d rows; use $top inside $expand or a smaller page", MaxExpandRows)}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("analytics: query: %w", err)
	}
	if err := h.expand(ctx, b, res); err != nil {
		return nil, err
	}
	return res, nil
}

// expand runs one query per expanded navigation property for all rows of
// res at once (IN (...)), never one per row.
func (h *Handler) expand(ctx context.Context, parent *builder, res *result) error {
	for i, nav := range res.st.navs {
		e := &expansion{nav: nav, byLink: map[string][]int{}}
		res.exp = append(res.exp, e)
		seen := map[string]bool{}
		var links []string
		for _, l := range res.links {
			if l[i] != "" && !seen[l[i]] {
				seen[l[i]] = true
				links = append(links, l[i])
			}
		}
		if len(links) == 0 {
			continue
		}
		target, _ := h.m.Set(nav.Target)
		b := &builder{d: parent.d, m: parent.m, tenant: parent.tenant, at: parent.at}
		sc := &scope{set: target, alias: "t"}
		opts := res.st.expands[i].Options
		var phs []string
		for _, l := range links {
			phs = append(phs, b.arg(l, Guid))
		}
		keys, err := b.orderKeys(sc, opts.OrderBy)
		if err != nil {
			return err
		}
		part := "t." + nav.To
		st, err := b.build(sc, opts, []string{part + " IN (" + strings.Join(phs, ", ") + ")"}, keys, 0, 0, part)
		if err != nil {
			return err
		}
		if e.child, err = h.materialize(ctx, st, b); err != nil {
			return err
		}
		for j, own := range e.child.own {
			e.byLink[own] = append(e.byLink[own], j)
		}
	}
	return nil
}

// writeRow writes the properties of row i (without braces).
func (res *result) writeRow(w *bufio.Writer, i int, first bool) {
	for j, c := range res.st.cols {
		if !first || j > 0 {
			w.WriteByte(',')
		}
		writeJSONString(w, c.name)
		w.WriteByte(':')
		writeValue(w, res.rows[i][j])
	}
	first = first && len(res.st.cols) == 0
	for k, e := range res.exp {
		if !first || k > 0 {
			w.WriteByte(',')
		}
		writeJSONString(w, e.nav.Name)
		w.WriteByte(':')
		var idx []int
		if e.child != nil {
			idx = e.byLink[res.links[i][k]]
		}
		if !e.nav.Many {
			if len(idx) == 0 {
				w.WriteString("null")
				continue
			}
			w.WriteByte('{')
			e.child.writeRow(w, idx[0], true)
			w.WriteByte('}')
			continue
		}
		w.WriteByte('[')
		for n, j := range idx {
			if n > 0 {
				w.WriteByte(',')
			}
			w.WriteByte('{')
			e.child.writeRow(w, j, true)
			w.WriteByte('}')
		}
		w.WriteByte(']')
	}
}

// collection answers /{Set}, /{Set}({key})/{Nav} and their /$count.
func (h *Handler) collection(w http.ResponseWriter, r *http.Request, b *builder, req *request) error {
	ctx := r.Context()
	set := req.set
	var conds []string
	ctxName := set.Name
	if req.nav != nil {
		// The parent must exist (404 otherwise); the children are those
		// whose link matches the parent's, both of this tenant.
		parent := &scope{set: set, alias: "p"}
		pb := &builder{d: b.d, m: b.m, tenant: b.tenant, at: b.at}
		keyCond, err := pb.keyCond(parent, req.key)
		if err != nil {
			return err
		}
		item, tc := pb.from(set, "p")
		var one int
		err = h.o.DB.QueryRowContext(ctx, "SELECT 1 FROM "+item+" WHERE "+tc+" AND "+keyCond, pb.args...).Scan(&one)
		if err == sql.ErrNoRows {
			return errNotFound
		} else if err != nil {
			return fmt.Errorf("analytics: parent: %w", err)
		}
		keyCond, _ = b.keyCond(parent, req.key)
		item, tc = b.from(set, "p")
		conds = append(conds, "t."+req.nav.To+" IN (SELECT p."+req.nav.From+" FROM "+item+" WHERE "+tc+" AND "+keyCond+")")
		set, _ = h.m.Set(req.nav.Target)
		ctxName = set.Name
		if !req.nav.Many && !req.count {
			return h.single(w, r, b, req, set, conds)
		}
	}
	sc := &scope{set: set, alias: "t"}
	if req.opts.Apply != nil {
		return h.apply(w, r, b, req, sc, conds)
	}
	if req.count || req.opts.Count {
		n, err := h.count(ctx, sc, b, req.opts, conds)
		if err != nil {
			return err
		}
		if req.count {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, err := w.Write([]byte(strconv.FormatInt(n, 10)))
			return err
		}
		return h.page(w, r, b, req, sc, conds, ctxName, &n)
	}
	return h.page(w, r, b, req, sc, conds, ctxName, nil)
}

// single answers a single-valued navigation (/Payments(id)/Subscriber).
func (h *Handler) single(w http.ResponseWriter, r *http.Request, b *builder, req *request, set *Set, conds []string) error {
	res, err := h.fetch(r.Context(), b, &scope{set: set, alias: "t"}, req.opts, conds, nil, 1)
	if err != nil {
		return err
	}
	if len(res.rows) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	bw := h.start(w, req)
	bw.WriteString("{")
	first := true
	if req.metadata != "none" {
		bw.WriteString(`"@odata.context":`)
		writeJSONString(bw, h.o.URL+"/$metadata#"+set.Name+h.selectSuffix(req.opts)+"/$entity")
		first = false
	}
	res.writeRow(bw, 0, first)
	bw.WriteString("}")
	return bw.Flush()
}

func (h *Handler) count(ctx context.Context, sc *scope, parent *builder, opts odata.Options, conds []string) (int64, error) {
	// conds hold parameters of parent; count in the same builder order.
	b := &builder{d: parent.d, m: parent.m, tenant: parent.tenant, at: parent.at, args: append([]any{}, parent.args...), tenPH: parent.tenPH, nowPH: parent.nowPH, alias: parent.alias}
	item, tc := b.from(sc.set, sc.alias)
	where := append([]string{tc}, conds...)
	if opts.Filter != nil {
		c, err := b.cond(sc, opts.Filter)
		if err != nil {
			return 0, withTarget(err, "$filter")
		}
		where = append(where, c)
	}
	var n int64
	if err := h.o.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+item+" WHERE "+strings.Join(where, " AND "), b.args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("analytics: count: %w", err)
	}
	return n, nil
}

// page streams one page of a collection with keyset paging.
func (h *Handler) page(w http.ResponseWriter, r *http.Request, b *builder, req *request, sc *scope, conds []string, ctxName string, count *int64) error {
	ctx := r.Context()
	keys, err := b.orderKeys(sc, req.opts.OrderBy)
	if err != nil {
		return err
	}
	if req.token != "" {
		vals, err := decodeToken(req.token)
		if err != nil {
			return err
		}
		c, err := b.after(keys, vals)
		if err != nil {
			return err
		}
		conds = append(conds, c)
	}
	size := req.pageSize
	remaining := int64(-1)
	if req.opts.Top != nil {
		remaining = *req.opts.Top
		if remaining < int64(size) {
			size = int(remaining)
		}
	}
	var offset int64
	if req.opts.Skip != nil && req.token == "" {
		offset = *req.opts.Skip
	}
	if size == 0 {
		return h.writePage(w, req, ctxName, count, nil, nil, "")
	}
	st, err := b.build(sc, req.opts, conds, keys, size+1, offset, "")
	if err != nil {
		return err
	}
	if len(st.navs) > 0 {
		res, err := h.materialize(ctx, st, b)
		if err != nil {
			return err
		}
		next := ""
		n := len(res.rows)
		if n > size {
			n = size
			next = h.nextLink(req, encodeToken(res.sorts[size-1], keys), remaining, int64(size))
		}
		return h.writePage(w, req, ctxName, count, res, &n, next)
	}
	rows, err := h.o.DB.QueryContext(ctx, st.sql, st.args...)
	if err != nil {
		return fmt.Errorf("analytics: query: %w", err)
	}
	defer rows.Close()
	bw := h.start(w, req)
	h.head(bw, req, ctxName, count)
	buf := make([]any, st.width())
	var last []any
	n := 0
	next := ""
	one := &result{st: st, rows: make([][]any, 1), links: make([][]string, 1)}
	for rows.Next() {
		vals, sorts, _, _, err := st.scanRow(rows, buf)
		if err != nil {
			return fmt.Errorf("%w: %w", errWritten, err)
		}
		if n == size {
			next = h.nextLink(req, encodeToken(last, keys), remaining, int64(size))
			break
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteByte('{')
		one.rows[0] = vals
		one.writeRow(bw, 0, true)
		bw.WriteByte('}')
		last = sorts
		n++
		if bw.Buffered() > 16<<10 {
			if err := bw.Flush(); err != nil {
				return fmt.Errorf("%w: %w", errWritten, err)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w: %w", errWritten, err)
	}
	h.tail(bw, next)
	return bw.Flush()
}

func (h *Handler) head(bw *bufio.Writer, req *request, ctxName string, count *int64) {
	bw.WriteString("{")
	if req.metadata != "none" {
		bw.WriteString(`"@odata.context":`)
		writeJSONString(bw, h.o.URL+"/$metadata#"+ctxName+h.selectSuffix(req.opts))
		bw.WriteString(",")
	}
	if count != nil {
		bw.WriteString(`"@odata.count":` + strconv.FormatInt(*count, 10) + ",")
	}
	bw.WriteString(`"value":[`)
}

func (h *Handler) tail(bw *bufio.Writer, next string) {
	bw.WriteString("]")
	if next != "" {
		bw.WriteString(`,"@odata.nextLink":`)
		writeJSONString(bw, next)
	}
	bw.WriteString("}")
}

func (h *Handler) writePage(w http.ResponseWriter, req *request, ctxName string, count *int64, res *result, n *int, next string) error {
	bw := h.start(w, req)
	h.head(bw, req, ctxName, count)
	if res != nil {
		for i := 0; i < *n; i++ {
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.WriteByte('{')
			res.writeRow(bw, i, true)
			bw.WriteByte('}')
		}
	}
	h.tail(bw, next)
	return bw.Flush()
}

// nextLink repeats the request's options with the token of the page's last
// row; $skip applied to the first page only, $top counts down.
func (h *Handler) nextLink(req *request, token string, remaining, size int64) string {
	if remaining >= 0 && remaining-size <= 0 {
		return ""
	}
	q := url.Values{}
	for k, v := range req.raw {
		if k == "$skip" || k == "$skiptoken" || k == "$top" {
			continue
		}
		q[k] = v
	}
	if remaining >= 0 {
		q.Set("$top", strconv.FormatInt(remaining-size, 10))
	}
	q.Set("$skiptoken", token)
	path := req.set.Name
	if req.nav != nil {
		path += "(" + litText(req.key) + ")/" + req.nav.Name
	}
	return h.o.URL + "/" + path + "?" + strings.ReplaceAll(q.Encode(), "+", "%20")
}
