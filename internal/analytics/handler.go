package analytics

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/odata"
	"github.com/kadens/kadens/internal/tenancy"
)

// Limits of the API (docs/ANALYTICS.md, "Limits").
const (
	DefaultPageSize = 1000
	MaxPageSize     = 5000
	MaxTop          = 1_000_000
	MaxSkip         = 100_000
	// MaxExpandRows bounds the related rows one page may expand.
	MaxExpandRows = 100_000
	// QueryTimeout bounds the database work of one request (the
	// listener's write timeout is 60 s).
	QueryTimeout = 55 * time.Second
)

// Options configure a Handler.
type Options struct {
	// DB is the pool analytics reads from: the store's read pool, or a
	// PostgreSQL read replica.
	DB       *sql.DB
	Postgres bool
	// URL is the public address of the analytics API (for @odata.context
	// and @odata.nextLink).
	URL string
	Log *slog.Logger
	// Now is the tenant's time (a test tenant's clock) for status
	// properties; the wall clock when nil.
	Now func(context.Context) (time.Time, error)
}

// Handler serves the analytics API. It expects the tenant in the request
// context (the server puts the API's authentication in front of it).
type Handler struct {
	o    Options
	m    *Model
	d    *dialect
	meta []byte
	sdoc []byte
}

// New builds a Handler.
func New(o Options) *Handler {
	if o.Now == nil {
		o.Now = func(context.Context) (time.Time, error) { return time.Now(), nil }
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	o.URL = strings.TrimRight(o.URL, "/")
	m := NewModel()
	h := &Handler{o: o, m: m, d: newDialect(o.Postgres)}
	h.meta = Metadata(m)
	h.sdoc = serviceDocument(m, o.URL)
	return h
}

// ServeHTTP routes: /, /$metadata, /{Set}, /{Set}/$count, /{Set}({key}),
// /{Set}({key})/{Nav}, /{Set}({key})/{Nav}/$count.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "the analytics API is read-only", "")
		return
	}
	w.Header().Set("OData-Version", "4.0")
	ctx, cancel := context.WithTimeout(r.Context(), QueryTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	if err := h.serve(w, r); err != nil {
		var br *badRequest
		var pe *odata.Error
		switch {
		case errors.As(err, &br):
			writeError(w, http.StatusBadRequest, "BadRequest", br.msg, br.target)
		case errors.As(err, &pe):
			writeError(w, http.StatusBadRequest, "BadRequest", pe.Message, pe.Target)
		case errors.Is(err, errNotFound):
			w.WriteHeader(http.StatusNotFound)
		case errors.Is(err, errWritten):
			// The body had begun: the error is logged, the client sees a cut response.
			h.o.Log.Error("analytics: response cut", "err", err, "path", r.URL.Path)
		case errors.Is(err, context.Canceled):
		default:
			h.o.Log.Error("analytics: query failed", "err", err, "path", r.URL.Path)
			writeError(w, http.StatusInternalServerError, "InternalError", "the query failed", "")
		}
	}
}

var (
	errNotFound = errors.New("not found")
	errWritten  = errors.New("response already started")
)

func writeError(w http.ResponseWriter, status int, code, msg, target string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	body := map[string]any{"error": map[string]any{"code": code, "message": msg, "target": target}}
	_ = json.NewEncoder(w).Encode(body)
}

// request is one parsed request.
type request struct {
	set      *Set
	key      *odata.Literal // entity or parent key
	nav      *Nav           // navigation from set(key)
	count    bool           // /$count
	opts     odata.Options
	raw      url.Values
	token    string
	metadata string // minimal or none
	pageSize int
	prefer   bool
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) error {
	path := strings.TrimPrefix(r.URL.Path, "/")
	path = strings.TrimSuffix(path, "/")
	switch path {
	case "":
		w.Header().Set("Content-Type", "application/json; odata.metadata=minimal; charset=utf-8")
		_, err := w.Write(h.sdoc)
		return err
	case "$metadata":
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		_, err := w.Write(h.meta)
		return err
	}
	req, err := h.parse(r, path)
	if err != nil {
		return err
	}
	tenant, err := tenancy.From(r.Context())
	if err != nil {
		return err
	}
	at, err := h.o.Now(r.Context())
	if err != nil {
		return err
	}
	b := &builder{d: h.d, m: h.m, tenant: tenant, at: at}
	if req.key != nil && req.nav == nil {
		return h.entity(w, r, b, req)
	}
	return h.collection(w, r, b, req)
}

func (h *Handler) parse(r *http.Request, path string) (*request, error) {
	req := &request{metadata: "minimal", pageSize: DefaultPageSize}
	segs := strings.Split(path, "/")
	if segs[len(segs)-1] == "$count" {
		req.count = true
		segs = segs[:len(segs)-1]
	}
	if len(segs) == 0 || len(segs) > 2 {
		return nil, errNotFound
	}
	name, keyText, hasKey := strings.Cut(segs[0], "(")
	set, ok := h.m.Set(name)
	if !ok {
		return nil, errNotFound
	}
	req.set = set
	if hasKey {
		if !strings.HasSuffix(keyText, ")") {
			return nil, errNotFound
		}
		keyText = strings.TrimSuffix(keyText, ")")
		if k, v, ok := strings.Cut(keyText, "="); ok && strings.TrimSpace(k) == set.Key {
			keyText = v
		}
		e, err := odata.ParseFilter(keyText)
		l, isLit := e.(*odata.Literal)
		if err != nil || !isLit {
			return nil, &badRequest{target: "key", msg: "the key must be a literal, e.g. " + set.Name + "(0190...)"}
		}
		req.key = l
	}
	if len(segs) == 2 {
		if !hasKey {
			return nil, errNotFound
		}
		nav, ok := set.Nav(segs[1])
		if !ok {
			return nil, errNotFound
		}
		req.nav = nav
	} else if hasKey && req.count {
		return nil, errNotFound
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, &badRequest{target: "query", msg: "the query string is not well escaped"}
	}
	req.raw = q
	opts := map[string]string{}
	for k, v := range q {
		if !strings.HasPrefix(k, "$") {
			continue
		}
		if len(v) > 1 {
			return nil, &badRequest{target: k, msg: "given more than once"}
		}
		if k == "$skiptoken" {
			req.token = v[0]
			continue
		}
		opts[k] = v[0]
	}
	if req.opts, err = odata.ParseOptions(opts, 0); err != nil {
		return nil, err
	}
	if t := req.opts.Top; t != nil && *t > MaxTop {
		return nil, &badRequest{target: "$top", msg: fmt.Sprintf("at most %d; follow @odata.nextLink for more", MaxTop)}
	}
	if s := req.opts.Skip; s != nil && *s > MaxSkip {
		return nil, &badRequest{target: "$skip", msg: fmt.Sprintf("at most %d; follow @odata.nextLink to page further", MaxSkip)}
	}
	if f := r.URL.Query().Get("$format"); strings.Contains(f, "odata.metadata=none") {
		req.metadata = "none"
	}
	for _, a := range r.Header.Values("Accept") {
		if strings.Contains(a, "odata.metadata=none") {
			req.metadata = "none"
		}
	}
	for _, pref := range r.Header.Values("Prefer") {
		for _, part := range strings.Split(pref, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
			if strings.EqualFold(k, "odata.maxpagesize") {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err == nil && n > 0 {
					req.pageSize, req.prefer = min(n, MaxPageSize), true
				}
			}
		}
	}
	if req.opts.Apply != nil && (req.opts.Filter != nil || req.opts.Select != nil || req.opts.Expand != nil || req.token != "") {
		return nil, &badRequest{target: "$apply", msg: "combine $apply only with $orderby, $top, $skip and $count (filter inside $apply with filter(...))"}
	}
	return req, nil
}

// entity answers /{Set}({key}).
func (h *Handler) entity(w http.ResponseWriter, r *http.Request, b *builder, req *request) error {
	if req.opts.Apply != nil || req.opts.Filter != nil || req.opts.OrderBy != nil || req.opts.Top != nil || req.opts.Skip != nil {
		return &badRequest{target: "query", msg: "a single entity takes only $select and $expand"}
	}
	sc := &scope{set: req.set, alias: "t"}
	keyCond, err := b.keyCond(sc, req.key)
	if err != nil {
		return err
	}
	rows, err := h.fetch(r.Context(), b, sc, req.opts, []string{keyCond}, nil, 1)
	if err != nil {
		return err
	}
	if len(rows.rows) == 0 {
		return errNotFound
	}
	bw := h.start(w, req)
	bw.WriteString("{")
	first := true
	if req.metadata != "none" {
		bw.WriteString(`"@odata.context":`)
		writeJSONString(bw, h.o.URL+"/$metadata#"+req.set.Name+h.selectSuffix(req.opts)+"/$entity")
		first = false
	}
	rows.writeRow(bw, 0, first)
	bw.WriteString("}")
	return bw.Flush()
}

// keyCond is the condition that picks the row with key l.
func (b *builder) keyCond(sc *scope, l *odata.Literal) (string, error) {
	kp, _ := sc.set.Prop(sc.set.Key)
	ph, err := b.bind(l, kp.Type, nil)
	if err != nil {
		return "", &badRequest{target: "key", msg: err.Error()}
	}
	return kp.sql(b, sc.alias) + " = " + ph, nil
}

func (h *Handler) start(w http.ResponseWriter, req *request) *bufio.Writer {
	w.Header().Set("Content-Type", "application/json; odata.metadata="+req.metadata+"; odata.streaming=true; charset=utf-8")
	if req.prefer {
		w.Header().Set("Preference-Applied", "odata.maxpagesize="+strconv.Itoa(req.pageSize))
	}
	return bufio.NewWriterSize(w, 32<<10)
}

func (h *Handler) selectSuffix(o odata.Options) string {
	if o.Select == nil {
		return ""
	}
	return "(" + strings.Join(o.Select, ",") + ")"
}

// column is one output column of a statement.
type column struct {
	name string
	t    Edm
}

// sortKey is one key of a statement's order.
type sortKey struct {
	sql      string
	t        Edm
	desc     bool
	nullable bool
}

// order writes the key for ORDER BY. Nulls count as larger than every
// value (PostgreSQL's default, so its indexes serve the order); a key that
// cannot be null gets no NULLS clause, so both engines walk an index.
func (k sortKey) order(d *dialect) string {
	switch {
	case k.desc && k.nullable:
		return k.sql + " DESC NULLS FIRST"
	case k.desc:
		return k.sql + " DESC"
	case k.nullable:
		return k.sql + " ASC NULLS LAST"
	}
	return k.sql + " ASC"
}

// orderKeys translates $orderby and appends the key, so every order is total.
func (b *builder) orderKeys(sc *scope, items []odata.OrderItem) ([]sortKey, error) {
	var keys []sortKey
	for _, it := range items {
		v, err := b.path(sc, it.Path.Segments)
		if err != nil {
			return nil, withTarget(err, "$orderby")
		}
		keys = append(keys, sortKey{sql: v.sql, t: v.t, desc: it.Desc, nullable: v.nullable})
	}
	if sc.set != nil {
		kp, _ := sc.set.Prop(sc.set.Key)
		keys = append(keys, sortKey{sql: kp.sql(b, sc.alias), t: kp.Type})
	}
	return keys, nil
}

// after is the keyset condition "strictly after values in this order". When
// every key runs one way and none is null it is a row-value comparison
// ((a, b) > ($1, $2)), which both engines answer from an index range;
// otherwise the expanded form, null-aware.
func (b *builder) after(keys []sortKey, values []*odata.Literal) (string, error) {
	if len(values) != len(keys) {
		return "", &badRequest{target: "$skiptoken", msg: "does not belong to this query"}
	}
	simple := true
	for i, k := range keys {
		if values[i].Kind == odata.LitNull || k.desc != keys[0].desc {
			simple = false
		}
	}
	phs := make([]string, len(keys))
	for i, k := range keys {
		if values[i].Kind == odata.LitNull {
			continue
		}
		ph, err := b.bind(values[i], k.t, nil)
		if err != nil {
			return "", &badRequest{target: "$skiptoken", msg: "does not belong to this query"}
		}
		phs[i] = ph
	}
	if simple {
		var cols []string
		for _, k := range keys {
			cols = append(cols, k.sql)
		}
		op := " > "
		if keys[0].desc {
			op = " < "
		}
		if len(keys) == 1 {
			return "(" + cols[0] + op + phs[0] + (map[bool]string{true: " OR " + cols[0] + " IS NULL", false: ""}[keys[0].nullable && !keys[0].desc]) + ")", nil
		}
		// Nulls are larger than values: an ascending nullable key's null rows
		// come after, a descending one's before (already read).
		cond := "(" + strings.Join(cols, ", ") + ")" + op + "(" + strings.Join(phs, ", ") + ")"
		var nullsAfter []string
		for i, k := range keys {
			if k.nullable && !k.desc {
				eqs := []string{}
				for j := 0; j < i; j++ {
					eqs = append(eqs, keys[j].sql+" = "+phs[j])
				}
				nullsAfter = append(nullsAfter, "("+strings.Join(append(eqs, k.sql+" IS NULL"), " AND ")+")")
			}
		}
		if len(nullsAfter) > 0 {
			cond = "(" + cond + " OR " + strings.Join(nullsAfter, " OR ") + ")"
		}
		return cond, nil
	}
	var ors, eqs []string
	for i, k := range keys {
		var gt, eq string
		if values[i].Kind == odata.LitNull {
			eq = k.sql + " IS NULL"
			if k.desc {
				gt = k.sql + " IS NOT NULL" // nulls come first descending
			} else {
				gt = "1 = 0" // and last ascending
			}
		} else {
			eq = k.sql + " = " + phs[i]
			switch {
			case k.desc:
				gt = k.sql + " < " + phs[i]
			case k.nullable:
				gt = "(" + k.sql + " > " + phs[i] + " OR " + k.sql + " IS NULL)"
			default:
				gt = k.sql + " > " + phs[i]
			}
		}
		ors = append(ors, "("+strings.Join(append(append([]string{}, eqs...), gt), " AND ")+")")
		eqs = append(eqs, eq)
	}
	return "(" + strings.Join(ors, " OR ") + ")", nil
}

// token encodes the sort values of a row as literals.
func encodeToken(vals []any, keys []sortKey) string {
	out := make([][2]string, len(vals))
	for i, v := range vals {
		l := valueLiteral(v, keys[i].t)
		out[i] = [2]string{strconv.Itoa(int(l.Kind)), l.Text}
	}
	b, _ := json.Marshal(out)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeToken(s string) ([]*odata.Literal, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	var pairs [][2]string
	if err != nil || json.Unmarshal(raw, &pairs) != nil {
		return nil, &badRequest{target: "$skiptoken", msg: "is not a token this service issued"}
	}
	out := make([]*odata.Literal, len(pairs))
	for i, p := range pairs {
		k, err := strconv.Atoi(p[0])
		if err != nil || k < int(odata.LitNull) || k > int(odata.LitGuid) {
			return nil, &badRequest{target: "$skiptoken", msg: "is not a token this service issued"}
		}
		out[i] = &odata.Literal{Kind: odata.LitKind(k), Text: p[1]}
	}
	return out, nil
}

// valueLiteral is the literal of a converted output value.
func valueLiteral(v any, t Edm) odata.Literal {
	if v == nil {
		return odata.Literal{Kind: odata.LitNull}
	}
	kind := map[Edm]odata.LitKind{Guid: odata.LitGuid, String: odata.LitString, Int: odata.LitNumber, Money: odata.LitNumber,
		Double: odata.LitNumber, Bool: odata.LitBool, Date: odata.LitDate, Time: odata.LitDateTime}[t]
	switch x := v.(type) {
	case string:
		return odata.Literal{Kind: kind, Text: x}
	case json.Number:
		return odata.Literal{Kind: kind, Text: string(x)}
	case int64:
		return odata.Literal{Kind: kind, Text: strconv.FormatInt(x, 10)}
	case bool:
		return odata.Literal{Kind: kind, Text: strconv.FormatBool(x)}
	case float64:
		return odata.Literal{Kind: kind, Text: strconv.FormatFloat(x, 'g', -1, 64)}
	}
	return odata.Literal{Kind: kind, Text: fmt.Sprint(v)}
}

// convert turns a scanned value into its JSON value for type t.
func convert(v any, t Edm) (any, error) {
	if v == nil {
		return nil, nil
	}
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	switch t {
	case Decimal:
		var d decimal.Decimal
		var err error
		switch x := v.(type) {
		case string:
			d, err = decimal.NewFromString(x)
		case float64:
			d = decimal.NewFromFloat(x)
		case int64:
			d = decimal.NewFromInt(x)
		default:
			err = fmt.Errorf("analytics: cannot read %T as a decimal", v)
		}
		if err != nil {
			return nil, err
		}
		return json.Number(d.String()), nil
	case Guid, String, Date:
		switch x := v.(type) {
		case string:
			return x, nil
		case [16]byte:
			return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16]), nil
		}
		return fmt.Sprint(v), nil
	case Int:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int32:
			return int64(x), nil
		case float64:
			return int64(x), nil
		case string:
			return strconv.ParseInt(x, 10, 64)
		}
	case Bool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			return x != 0, nil
		}
	case Money:
		switch x := v.(type) {
		case int64:
			return json.Number(decimal.New(x, -moneyScale).String()), nil
		case string:
			d, err := decimal.NewFromString(x)
			if err != nil {
				return nil, err
			}
			return json.Number(d.Shift(-moneyScale).String()), nil
		case float64:
			return json.Number(decimal.NewFromFloat(x).Shift(-moneyScale).String()), nil
		}
	case Double:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case string:
			return strconv.ParseFloat(x, 64)
		}
	case Time:
		switch x := v.(type) {
		case time.Time:
			return x.UTC().Format(time.RFC3339Nano), nil
		case string:
			tm, err := time.Parse(time.RFC3339Nano, x)
			if err != nil {
				if tm, err = time.Parse("2006-01-02 15:04:05.999999999-07:00", x); err != nil {
					return nil, fmt.Errorf("analytics: read time %q: %w", x, err)
				}
			}
			return tm.UTC().Format(time.RFC3339Nano), nil
		}
	}
	return nil, fmt.Errorf("analytics: cannot read %T as %s", v, t.name())
}

func writeJSONString(w *bufio.Writer, s string) {
	b, _ := json.Marshal(s)
	w.Write(b)
}

func writeValue(w *bufio.Writer, v any) {
	switch x := v.(type) {
	case nil:
		w.WriteString("null")
	case string:
		writeJSONString(w, x)
	case int64:
		w.WriteString(strconv.FormatInt(x, 10))
	case bool:
		w.WriteString(strconv.FormatBool(x))
	case json.Number:
		w.WriteString(string(x))
	case float64:
		w.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	}
}
