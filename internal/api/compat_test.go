package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/peppol"
	"github.com/kadens/kadens/internal/seed"
)

// The compatibility suite: every request example of INFO-Subscription's
// public documentation (testdata/infosub, one file per page; ids replaced
// by the fixture's, every other field kept as written) either means the
// same in Kadens — read back and compared field by field — or is refused
// with a 400 naming the field, or names an operation Kadens does not have
// (404/405, listed in docs/MIGRATION.md). Nothing is accepted and then
// billed differently.

// infosubFile is one documentation page's examples.
type infosubFile struct {
	Page string `json:"page"`
	// IDs maps the page's ids and placeholders to fixture roles.
	IDs      map[string]string `json:"ids"`
	Examples []infosubExample  `json:"examples"`
}

type infosubExample struct {
	Name   string `json:"name"`
	Line   int    `json:"line"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Body   any    `json:"body"`
	// NotSent are top-level properties the page itself says are not part
	// of the request (a plan's id, assigned by the service).
	NotSent []string `json:"notSent"`
	// Omitted are properties the page leaves out "for brevity" that Kadens
	// needs; they are added (and compared like the rest).
	Omitted map[string]any `json:"omitted"`
	// Map names, for a documented field, where the read-back shows it (a
	// path with [] for any index), or a check ("!name").
	Map map[string]string `json:"map"`
	// As is the page's id for the resource this request creates.
	As     string   `json:"as"`
	After  string   `json:"after"`
	Expect string   `json:"expect"` // same, refused, noOperation
	Fields []string `json:"fields"`
}

// infosubExamples is how many request examples the pages hold (the suite
// fails when one is lost).
const infosubExamples = 29

func TestInfoSubCompatibility(t *testing.T) {
	files := loadInfoSub(t)
	eachPeppol(t, func(t *testing.T, e *apitest.Env, n *peppolNetwork) {
		n.register(peppol.ParticipantID{Scheme: "0192", Value: "999999999"}, peppol.DocTypeInvoice, peppol.DocTypeCreditNote)
		n.register(peppol.ParticipantID{Scheme: "0184", Value: "10150817"}, peppol.DocTypeInvoice, peppol.DocTypeCreditNote)
		tn := e.NewTenant("infosub", true)
		roles := newInfoSubFixture(t, tn)
		counts := map[string]int{}
		total := 0
		for _, name := range sortedKeys(files) {
			f := files[name]
			t.Run(name, func(t *testing.T) {
				ids := map[string]string{}
				created := map[string]bool{}
				for _, ex := range f.Examples {
					created[ex.As] = ex.As != ""
				}
				for doc, role := range f.IDs {
					id, ok := roles[role]
					if created[doc] {
						continue // created by an example of the page
					}
					if !ok {
						t.Fatalf("%s: no fixture role %q", f.Page, role)
					}
					ids[doc] = id
				}
				for role, id := range roles {
					ids["{"+role+"}"] = id
				}
				for _, ex := range f.Examples {
					total++
					counts[ex.Expect]++
					runInfoSubExample(t, tn, f.Page, ex, ids)
				}
			})
		}
		if total != infosubExamples {
			t.Errorf("%d examples, want %d", total, infosubExamples)
		}
		t.Logf("INFO-Subscription examples: %d mean the same, %d refused with a 400 naming the field, %d name operations Kadens does not have",
			counts["same"], counts["refused"], counts["noOperation"])
	})
}

func loadInfoSub(t *testing.T) map[string]infosubFile {
	t.Helper()
	paths, err := filepath.Glob("testdata/infosub/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	out := map[string]infosubFile{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var f infosubFile
		if err := dec.Decode(&f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".json")] = f
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// newInfoSubFixture creates what the examples refer to and returns it by
// role: an organization, products 1–8 at 25 % VAT, a monthly plan, a
// package, a package that allows price overrides, a subscriber with an
// Invoice agreement and a completed order (so a payment demand and a
// subscriber account), and an AvtaleGiro account with a mandate.
func newInfoSubFixture(t *testing.T, tn apitest.Tenant) map[string]string {
	t.Helper()
	sd := tn.Seed(t)
	r := map[string]string{}
	r["organization"] = sd.Organization(seed.Organization{Name: "Nordavis AS", OrganizationNumber: "923609016", Country: "NO",
		Currency: "NOK", TimeZone: "Europe/Oslo", PricesIncludeVAT: seed.Bool(true)})
	for i := 1; i <= 8; i++ {
		r[fmt.Sprintf("product:%d", i)] = sd.Product(seed.Product{Name: fmt.Sprintf("Product %d", i), Category: "digital", VATRate: "25"})
	}
	r["plan"] = sd.Plan(seed.Plan{Name: "Monthly", Unit: "Month"})
	r["package"] = sd.Package(seed.Package{Name: "Digital", Price: "199.00", Products: []string{r["product:1"]}, Plans: []string{r["plan"]}})
	r["overridablePackage"] = create(t, tn, "/package", map[string]any{"Name": "Negotiated", "Currency": "NOK", "Price": json.Number("999.00"),
		"products": []any{map[string]any{"productId": r["product:1"]}}, "BillingPlans": []string{r["plan"]},
		"allowedChoices": map[string]any{"priceOverride": true}})
	r["subscriber"] = sd.Subscriber(seed.Kari)
	r["agreement"] = isCreateOrOK(t, tn, "/paymentagreement", map[string]any{"subscriberId": r["subscriber"], "providerType": "Invoice"})
	order := create(t, tn, "/order", map[string]any{"organizationId": r["organization"], "templatePackageId": r["package"],
		"subscriberId": r["subscriber"]})
	if resp := tn.Do("POST", "/order/"+order+"/complete", nil); resp.Status != http.StatusOK {
		t.Fatalf("complete: %d %s", resp.Status, resp.Body)
	}
	var demands []map[string]any
	tn.Do("GET", "/paymentdemand?subscriberId="+r["subscriber"], nil).JSON(t, &demands)
	if len(demands) != 1 {
		t.Fatalf("%d demands", len(demands))
	}
	r["demand"], r["account"] = demands[0]["id"].(string), demands[0]["subscriberAccountId"].(string)
	r["avtaleGiroAccount"] = create(t, tn, "/avtalegiro/account", map[string]any{"name": "Avis", "bankAccountNumber": "12345678903",
		"customerUnitId": "12345678", "kidAlgorithm": "MOD10", "kidLength": 14, "baseComboApiEndpointUrl": "https://bank.example/api"})
	r["avtaleGiroMandate"] = create(t, tn, "/avtalegiro/mandate", map[string]any{"accountId": r["avtaleGiroAccount"],
		"kid": "00000000000018", "subscriberId": r["subscriber"]})
	return r
}

// isCreateOrOK posts a create that may answer 201 or 200 (an existing
// Invoice agreement) and returns the id.
func isCreateOrOK(t *testing.T, tn apitest.Tenant, path string, body any) string {
	t.Helper()
	resp := tn.Do("POST", path, body)
	if resp.Status != http.StatusCreated && resp.Status != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, resp.Status, resp.Body)
	}
	var id string
	resp.JSON(t, &id)
	return id
}

func runInfoSubExample(t *testing.T, tn apitest.Tenant, page string, ex infosubExample, ids map[string]string) {
	t.Helper()
	where := fmt.Sprintf("%s:%d %s", page, ex.Line, ex.Name)
	path := ex.Path
	for doc, id := range ids {
		path = strings.ReplaceAll(path, doc, id)
	}
	var sent map[string]any
	var body any
	if ex.Body != nil {
		sent, _ = substitute(ex.Body, ids).(map[string]any)
		for _, k := range ex.NotSent {
			delete(sent, k)
		}
		for k, v := range ex.Omitted {
			sent[k] = substitute(v, ids)
		}
		body = sent
	}
	resp := tn.Do(ex.Method, path, body)
	switch ex.Expect {
	case "noOperation":
		if resp.Status != http.StatusNotFound && resp.Status != http.StatusMethodNotAllowed {
			t.Errorf("%s: %s %s answered %d, want 404 or 405 (no such operation): %s", where, ex.Method, path, resp.Status, resp.Body)
		}
	case "refused":
		if resp.Status != http.StatusBadRequest {
			t.Errorf("%s: answered %d, want a 400 naming %v: %s", where, resp.Status, ex.Fields, resp.Body)
			return
		}
		got := resp.Fields(t)
		for _, f := range ex.Fields {
			if !slices.Contains(got, f) {
				t.Errorf("%s: the 400 names %v, not %s: %s", where, got, f, resp.Body)
			}
			if _, ok := lookupPath(sent, f); !ok {
				t.Errorf("%s: the expected field %s is not in the example", where, f)
			}
		}
	case "same":
		var back any
		switch {
		case ex.Method == http.MethodGet:
			if resp.Status != http.StatusOK {
				t.Errorf("%s: %d %s", where, resp.Status, resp.Body)
				return
			}
			back = decodeAny(t, resp.Body)
			checkListQuery(t, where, path, back)
		case resp.Status == http.StatusCreated:
			var id string
			resp.JSON(t, &id)
			if ex.As != "" {
				ids[ex.As] = id
			}
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil {
				t.Fatalf("%s: Location %q", where, resp.Header.Get("Location"))
			}
			got := tn.Do("GET", loc.Path, nil)
			if got.Status != http.StatusOK {
				t.Fatalf("%s: read back %s: %d", where, loc.Path, got.Status)
			}
			back = decodeAny(t, got.Body)
		case resp.Status == http.StatusOK && ex.Method == http.MethodPost:
			back = decodeAny(t, resp.Body) // an answer, not a create (a lookup)
		default:
			t.Errorf("%s: answered %d: %s", where, resp.Status, resp.Body)
			return
		}
		if sent != nil {
			compareInfoSub(t, tn, where, sent, back, ex.Map)
		}
		infoSubAfter(t, tn, where, ex.After, back)
	default:
		t.Fatalf("%s: unknown expectation %q", where, ex.Expect)
	}
}

// substitute replaces the page's ids in v.
func substitute(v any, ids map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substitute(e, ids)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substitute(e, ids)
		}
		return out
	case string:
		if id, ok := ids[x]; ok {
			return id
		}
	}
	return v
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return v
}

type leaf struct {
	path  string
	value any
}

// leaves lists the scalar values of v with their paths (a.b[0].c).
func leaves(v any, path string, out *[]leaf) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			leaves(x[k], p, out)
		}
	case []any:
		for i, e := range x {
			leaves(e, fmt.Sprintf("%s[%d]", path, i), out)
		}
	default:
		*out = append(*out, leaf{path, v})
	}
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// lookupPath finds path in v, matching property names ignoring case.
func lookupPath(v any, path string) (any, bool) {
	for _, seg := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		if name != "" {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			found := false
			for k, e := range m {
				if strings.EqualFold(k, name) {
					v, found = e, true
					break
				}
			}
			if !found {
				return nil, false
			}
		}
		for rest != "" {
			var i int
			if _, err := fmt.Sscanf(rest, "%d]", &i); err != nil {
				return nil, false
			}
			a, ok := v.([]any)
			if !ok || i >= len(a) {
				return nil, false
			}
			v = a[i]
			_, rest, _ = strings.Cut(rest, "[")
		}
	}
	return v, true
}

// compareInfoSub checks every field sent against the read-back.
func compareInfoSub(t *testing.T, tn apitest.Tenant, where string, sent map[string]any, back any, mapping map[string]string) {
	t.Helper()
	var ls []leaf
	leaves(sent, "", &ls)
	for _, l := range ls {
		pattern := indexRE.ReplaceAllString(l.path, "[]")
		target := l.path
		if m, ok := mapping[pattern]; ok {
			if strings.HasPrefix(m, "!") {
				infoSubCheck(t, tn, where, m, l, sent, back)
				continue
			}
			idx := indexRE.FindAllString(l.path, -1)
			target = m
			for _, i := range idx {
				target = strings.Replace(target, "[]", i, 1)
			}
		}
		got, ok := lookupPath(back, target)
		if !ok {
			t.Errorf("%s: %s = %v is not in the read-back (as %s)", where, l.path, l.value, target)
			continue
		}
		if !sameValue(l.value, got) {
			t.Errorf("%s: %s = %v was read back as %s = %v", where, l.path, l.value, target, got)
		}
	}
}

// sameValue compares JSON scalars: numbers by value, strings ignoring case
// (ids and enums come back in canonical case).
func sameValue(a, b any) bool {
	if na, ok := a.(json.Number); ok {
		nb, ok := b.(json.Number)
		if !ok {
			return false
		}
		da, err1 := decimal.NewFromString(string(na))
		db, err2 := decimal.NewFromString(string(nb))
		return err1 == nil && err2 == nil && da.Equal(db)
	}
	if sa, ok := a.(string); ok {
		sb, ok := b.(string)
		return ok && strings.EqualFold(sa, sb)
	}
	return a == b
}

// infoSubCheck runs a named check for a field whose meaning is shown
// elsewhere than in the read-back.
func infoSubCheck(t *testing.T, tn apitest.Tenant, where, check string, l leaf, sent map[string]any, back any) {
	t.Helper()
	name, arg, _ := strings.Cut(strings.TrimPrefix(check, "!"), ":")
	switch name {
	case "productVATRate": // taxPercent is the product's VAT rate
		product, _ := lookupPath(sent, strings.TrimSuffix(l.path, ".taxPercent")+".productId")
		var p map[string]any
		resp := tn.Do("GET", fmt.Sprintf("/product/%v", product), nil)
		dec := json.NewDecoder(bytes.NewReader(resp.Body))
		dec.UseNumber()
		if err := dec.Decode(&p); err != nil || !sameValue(l.value, p["vatRate"]) {
			t.Errorf("%s: %s = %v but product %v has vatRate %v", where, l.path, l.value, product, p["vatRate"])
		}
	case "registeredIn": // the network the lookup used (Peppol's own scheme)
		m, _ := back.(map[string]any)
		if m["registered"] != true || !strings.Contains(fmt.Sprint(m["participantId"]), "::"+arg+":") {
			t.Errorf("%s: %s = %v: lookup answered %v", where, l.path, l.value, back)
		}
	default:
		t.Fatalf("%s: unknown check %s", where, check)
	}
}

// infoSubAfter runs what follows a request to show it billed as meant.
func infoSubAfter(t *testing.T, tn apitest.Tenant, where, after string, back any) {
	t.Helper()
	if after == "" {
		return
	}
	name, arg, _ := strings.Cut(strings.TrimPrefix(after, "!"), ":")
	switch name {
	case "completedTotalPrice": // the completed order's subscription costs arg per period
		order, _ := back.(map[string]any)
		resp := tn.Do("POST", fmt.Sprintf("/order/%v/complete", order["id"]), nil)
		if resp.Status != http.StatusOK {
			t.Fatalf("%s: complete: %d %s", where, resp.Status, resp.Body)
		}
		done := decodeAny(t, resp.Body).(map[string]any)
		sub := decodeAny(t, tn.Do("GET", fmt.Sprintf("/subscription/%v", done["subscriptionId"]), nil).Body)
		if got, _ := lookupPath(sub, "package.totalPrice"); !sameValue(json.Number(arg), got) {
			t.Errorf("%s: the subscription costs %v per period, want %s", where, got, arg)
		}
	default:
		t.Fatalf("%s: unknown after %s", where, after)
	}
}

// checkListQuery checks that every item of a filtered list has the
// filtered values (a filter Kadens cannot match answers none).
func checkListQuery(t *testing.T, where, path string, back any) {
	t.Helper()
	items, ok := back.([]any)
	if !ok {
		t.Fatalf("%s: not a list: %v", where, back)
	}
	u, _ := url.Parse(path)
	for i, it := range items {
		for k, vs := range u.Query() {
			got, ok := lookupPath(it, k)
			if !ok || !sameValue(vs[0], got) {
				t.Errorf("%s: item %d has %s = %v, the query asked for %s", where, i, k, got, vs[0])
			}
		}
	}
}
