package analytics

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/kadens/kadens/internal/odata"
)

// apply answers $apply: filter() and compute() steps, then at most one
// groupby(...) or aggregate(...) as the last step. Results are ordered by
// the group keys (or $orderby over the output names) and not paged: a
// grouping's rows are few; $top bounds them.
func (h *Handler) apply(w http.ResponseWriter, r *http.Request, b *builder, req *request, sc *scope, conds []string) error {
	sc.computed = map[string]typed{}
	item, tc := b.from(sc.set, sc.alias)
	where := append([]string{tc}, conds...)
	var groups []string
	var cols []column
	var sel []string
	grouped := false
	// sums are the aggregates split in two levels when every one is a sum
	// or a count and Money sums share one currency column (nil otherwise).
	sums := []splitAgg{}
	sumCur := ""
	for i, t := range req.opts.Apply {
		if grouped {
			return &badRequest{target: "$apply", msg: "groupby or aggregate must be the last transformation"}
		}
		switch t.Kind {
		case "filter":
			c, err := b.cond(sc, t.Filter)
			if err != nil {
				return withTarget(err, "$apply")
			}
			where = append(where, c)
		case "compute":
			for _, c := range t.Compute {
				v, err := b.expr(sc, c.Expr)
				if err != nil {
					return withTarget(err, "$apply")
				}
				if v.lit != nil {
					return &badRequest{target: "$apply", msg: "compute needs a property or function"}
				}
				if _, clash := sc.set.Prop(c.Alias); clash {
					return &badRequest{target: "$apply", msg: c.Alias + " is already a property"}
				}
				sc.computed[c.Alias] = v
			}
		case "groupby", "aggregate":
			grouped = true
			for _, g := range t.GroupBy {
				if len(g.Segments) != 1 {
					return &badRequest{target: "$apply", msg: "groupby takes properties of the set or computed aliases"}
				}
				v, err := b.path(sc, g.Segments)
				if err != nil {
					return withTarget(err, "$apply")
				}
				groups = append(groups, v.sql)
				cols = append(cols, column{name: g.Segments[0], t: v.t})
				sel = append(sel, b.d.output(v.sql, v.t)+" AS c"+strconv.Itoa(len(sel)))
			}
			for _, a := range t.Aggregate {
				expr, typ, err := b.aggregate(sc, a)
				if err != nil {
					return withTarget(err, "$apply")
				}
				if sums != nil {
					if sp, ok := b.splitSum(sc, a); ok && (sumCur == "" || sp.cur == "" || sp.cur == sumCur) {
						if sp.cur != "" {
							sumCur = sp.cur
						}
						sums = append(sums, sp)
					} else {
						sums = nil
					}
				}
				cols = append(cols, column{name: a.Alias, t: typ})
				sel = append(sel, expr+" AS c"+strconv.Itoa(len(sel)))
			}
		default:
			return &badRequest{target: "$apply", msg: fmt.Sprintf("transformation %d (%s) is not supported", i+1, t.Kind)}
		}
	}
	if !grouped {
		return &badRequest{target: "$apply", msg: "end $apply with groupby(...) or aggregate(...)"}
	}
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[c.name] {
			return &badRequest{target: "$apply", msg: c.name + " is named twice"}
		}
		seen[c.name] = true
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + item + " WHERE " + strings.Join(where, " AND ")
	if len(groups) > 0 {
		q += " GROUP BY " + strings.Join(groups, ", ")
	}
	if len(sums) > 0 && sumCur != "" {
		q = b.twoLevel(sel[:len(groups)], groups, sums, sumCur, item, where)
	}
	var order []string
	for _, o := range req.opts.OrderBy {
		idx := -1
		for i, c := range cols {
			if len(o.Path.Segments) == 1 && c.name == o.Path.Segments[0] {
				idx = i
			}
		}
		if idx < 0 {
			return &badRequest{target: "$orderby", msg: "order by the names $apply returns"}
		}
		order = append(order, sortKey{sql: "c" + strconv.Itoa(idx), desc: o.Desc}.order(b.d))
	}
	for i := range groups {
		order = append(order, sortKey{sql: "c" + strconv.Itoa(i)}.order(b.d))
	}
	if len(order) > 0 {
		q += " ORDER BY " + strings.Join(order, ", ")
	}
	if req.opts.Top != nil {
		q += " LIMIT " + strconv.FormatInt(*req.opts.Top, 10)
	} else if len(groups) > 0 {
		q += " LIMIT " + strconv.Itoa(MaxTop)
	}
	if req.opts.Skip != nil {
		q += " OFFSET " + strconv.FormatInt(*req.opts.Skip, 10)
	}
	if req.count {
		var n int64
		if err := h.o.DB.QueryRowContext(r.Context(), "SELECT COUNT(*) FROM ("+q+") a", b.args...).Scan(&n); err != nil {
			return fmt.Errorf("analytics: apply count: %w", err)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, err := w.Write([]byte(strconv.FormatInt(n, 10)))
		return err
	}
	rows, err := h.o.DB.QueryContext(r.Context(), q, b.args...)
	if err != nil {
		return fmt.Errorf("analytics: apply: %w", err)
	}
	defer rows.Close()
	st := &stmt{cols: cols}
	one := &result{st: st, rows: make([][]any, 1), links: make([][]string, 1)}
	bw := h.start(w, req)
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	req.opts.Select = names
	h.head(bw, req, sc.set.Name, nil)
	buf := make([]any, len(cols))
	n := 0
	for rows.Next() {
		vals, _, _, _, err := st.scanRow(rows, buf)
		if err != nil {
			return fmt.Errorf("%w: %w", errWritten, err)
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteByte('{')
		one.rows[0] = vals
		one.writeRow(bw, 0, true)
		bw.WriteByte('}')
		n++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w: %w", errWritten, err)
	}
	h.tail(bw, "")
	return bw.Flush()
}

// splitAgg is a sum or count computed in two levels: inner per group and
// currency (minor units for Money, so no per-row currency scaling), outer
// per group.
type splitAgg struct {
	inner string // the inner aggregate
	cur   string // the currency column of a Money sum; empty otherwise
}

// splitSum says whether aggregate a can be split in two levels.
func (b *builder) splitSum(sc *scope, a odata.Aggregate) (splitAgg, bool) {
	if a.Method == "count" {
		return splitAgg{inner: "COUNT(*)"}, true
	}
	if a.Method != "sum" {
		return splitAgg{}, false
	}
	v, err := b.path(sc, a.Path.Segments)
	switch {
	case err != nil:
		return splitAgg{}, false
	case v.t == Money && v.minor != "":
		return splitAgg{inner: "SUM(" + v.minor + ")", cur: v.currency}, true
	case v.t == Int:
		return splitAgg{inner: "SUM(" + v.sql + ")"}, true
	}
	return splitAgg{}, false
}

// twoLevel is a grouping whose aggregates are sums and counts, written so
// the currency scaling of a Money sum runs once per group and currency
// instead of once per row: the inner statement groups also by currency
// and sums minor units, the outer scales and adds them up. Sums stay exact
// integers. The output names (c0, c1, …) are those of the one-level form.
func (b *builder) twoLevel(groupSel, groups []string, sums []splitAgg, cur, item string, where []string) string {
	inner := append([]string{}, groupSel...)
	inner = append(inner, cur+" AS cur")
	outer := make([]string, 0, len(groupSel)+len(sums))
	var outerGroups []string
	for i := range groupSel {
		c := "c" + strconv.Itoa(i)
		outer = append(outer, c)
		outerGroups = append(outerGroups, c)
	}
	for j, s := range sums {
		a := "a" + strconv.Itoa(j)
		inner = append(inner, s.inner+" AS "+a)
		x := a
		if s.cur != "" {
			x = b.d.money(a, "cur")
		}
		outer = append(outer, "CAST(COALESCE(SUM("+x+"), 0) AS BIGINT) AS c"+strconv.Itoa(len(groupSel)+j))
	}
	q := "SELECT " + strings.Join(outer, ", ") + " FROM (SELECT " + strings.Join(inner, ", ") + " FROM " + item +
		" WHERE " + strings.Join(where, " AND ") + " GROUP BY " + strings.Join(append(append([]string{}, groups...), cur), ", ") + ") g"
	if len(outerGroups) > 0 {
		q += " GROUP BY " + strings.Join(outerGroups, ", ")
	}
	return q
}

// aggregate translates one aggregate expression.
func (b *builder) aggregate(sc *scope, a odata.Aggregate) (string, Edm, error) {
	if a.Method == "count" {
		return "COUNT(*)", Int, nil
	}
	v, err := b.path(sc, a.Path.Segments)
	if err != nil {
		return "", 0, err
	}
	switch a.Method {
	case "sum":
		if v.t != Int && v.t != Money {
			return "", 0, bad("sum needs a number")
		}
		return "CAST(COALESCE(SUM(" + v.sql + "), 0) AS BIGINT)", v.t, nil
	case "min", "max":
		if v.t == Bool || v.t == Guid {
			return "", 0, bad("%s needs a number, a string, a date or a time", a.Method)
		}
		return b.d.output(strings.ToUpper(a.Method)+"("+v.sql+")", v.t), v.t, nil
	case "average":
		switch v.t {
		case Int:
			return "CAST(AVG(" + v.sql + ") AS DOUBLE PRECISION)", Double, nil
		case Money:
			return "CAST(AVG(" + v.sql + ") AS DOUBLE PRECISION) / " + strconv.FormatInt(pow10(moneyScale), 10), Double, nil
		}
		return "", 0, bad("average needs a number")
	case "countdistinct":
		return "COUNT(DISTINCT " + v.sql + ")", Int, nil
	}
	return "", 0, bad("%s is not an aggregation method (sum, min, max, average, countdistinct)", a.Method)
}
