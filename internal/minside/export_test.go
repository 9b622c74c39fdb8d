package minside

import (
	"fmt"
	"io/fs"
	"os"
	"regexp"

	"github.com/kadens/kadens/internal/app"
)

// Route is one route of the table, for the route × session walk of the
// tests.
type Route struct {
	Pattern string
	Public  bool
}

// Routes lists the route table.
func Routes() []Route {
	var out []Route
	for p := range publicRoutes {
		out = append(out, Route{p, true})
	}
	for p := range sessionRoutes {
		out = append(out, Route{p, false})
	}
	return out
}

// MissingTexts lists every text key a page or handler uses that a
// language lacks, and every key a language has that English does not:
// the keys of the templates' T calls, the handlers' error and notice
// keys, and the keys made from a record's value (status., invoice.,
// payment., pending., field.) for every value the pages can show.
func MissingTexts() []string {
	var used []string
	tmplKey := regexp.MustCompile(`T "([^"]+)"`)
	names, _ := fs.Glob(assets, "templates/*.html")
	for _, n := range names {
		b, _ := fs.ReadFile(assets, n)
		for _, m := range tmplKey.FindAllStringSubmatch(string(b), -1) {
			used = append(used, m[1])
		}
	}
	goKey := regexp.MustCompile(`(?:fail\([^"]*|Error: |Notice = |Data: |fields\[k\] = )"([a-zA-Z]+)"`)
	for _, f := range []string{"minside.go", "auth.go", "pages.go", "render.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			return []string{err.Error()}
		}
		for _, m := range goKey.FindAllStringSubmatch(string(b), -1) {
			if m[1] != "error" { // the error page's name, from fail's own body
				used = append(used, m[1])
			}
		}
	}
	for _, s := range []string{"Pending", "Active", "Completed", "Cancelled"} {
		used = append(used, "status."+s)
	}
	for _, s := range []string{"Issued", "PartiallyPaid", "Paid", "Overdue", "Credited"} {
		used = append(used, "invoice."+s)
	}
	used = append(used, "payment.Succeeded", "payment.Failed", "pending."+app.UpcomingPlanChange, "pending."+app.UpcomingCancellation)
	for k := range profileFields {
		used = append(used, "field."+k)
	}
	used = append(used, "languageName", "login", "overview", "invoices", "profile")
	var out []string
	for _, l := range languages {
		for _, k := range used {
			if _, ok := texts[l][k]; !ok {
				out = append(out, fmt.Sprintf("%s lacks %q", l, k))
			}
		}
		for k := range texts[l] {
			if _, ok := texts["en"][k]; !ok {
				out = append(out, fmt.Sprintf("%s has %q, which English lacks", l, k))
			}
		}
	}
	if len(used) < 80 {
		out = append(out, fmt.Sprintf("only %d keys found: the scan is broken", len(used)))
	}
	return out
}
