package odata

// Expr is a node of a $filter (or $orderby, compute) expression.
type Expr interface{ expr() }

// Binary is a logical (and, or) or comparison (eq, ne, gt, ge, lt, le)
// operation.
type Binary struct {
	Op   string
	L, R Expr
}

// Not negates X.
type Not struct{ X Expr }

// In is X in (List...).
type In struct {
	X    Expr
	List []Expr
}

// Call is a function call: contains, startswith, endswith, tolower,
// toupper, year, month, day, date, ...
type Call struct {
	Name string
	Args []Expr
}

// Path names a property, possibly through single-valued navigation
// properties (Subscriber/Name).
type Path struct{ Segments []string }

// LitKind is the kind of a literal.
type LitKind int

// Literal kinds.
const (
	LitNull LitKind = iota
	LitBool
	LitString
	LitNumber
	LitDate
	LitDateTime
	LitGuid
)

// Literal is a constant as written; the analytics model converts it to the
// type of what it is compared with.
type Literal struct {
	Kind LitKind
	Text string
}

func (*Binary) expr()  {}
func (*Not) expr()     {}
func (*In) expr()      {}
func (*Call) expr()    {}
func (*Path) expr()    {}
func (*Literal) expr() {}

// OrderItem is one key of $orderby.
type OrderItem struct {
	Path Path
	Desc bool
}

// Expand is one item of $expand with its nested options.
type Expand struct {
	Nav     string
	Options Options
}

// Options are the query options of a request or of one $expand item.
type Options struct {
	Filter  Expr
	OrderBy []OrderItem
	Select  []string // nil: all
	Expand  []Expand
	Top     *int64
	Skip    *int64
	Count   bool
	Apply   []Transform
}

// Transform is one step of $apply.
type Transform struct {
	// Kind is "filter", "compute", "groupby" or "aggregate".
	Kind      string
	Filter    Expr
	Compute   []Computed
	GroupBy   []Path
	Aggregate []Aggregate
}

// Computed is `expr as Alias` of compute().
type Computed struct {
	Expr  Expr
	Alias string
}

// Aggregate is `Path with method as Alias`, or `$count as Alias` (Path nil).
type Aggregate struct {
	Path   *Path
	Method string // sum, min, max, average, countdistinct; "count" for $count
	Alias  string
}
