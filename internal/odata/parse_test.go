package odata

import (
	"errors"
	"strings"
	"testing"
)

func TestParseFilter(t *testing.T) {
	good := []string{
		"Name eq 'A''s'",
		"(Country eq 'NO' or Country eq 'SE') and not contains(tolower(Email),'x')",
		"Amount gt 10.5 and PaidAt ge 2026-01-01T00:00:00Z",
		"year(PaidAt) eq 2026 and month(PaidAt) in (1,2,3)",
		"Id eq 01900000-0000-7000-8000-000000000001",
		"date(IssuedAt) le 2026-03-01",
		"Subscriber/Name eq null",
		"Active eq true",
	}
	for _, s := range good {
		if _, err := ParseFilter(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	bad := []string{"", "Name eq", "Name eq 'x", "(Name eq 'x'", "Name eq 'x')", "Name ; drop", "eq eq eq",
		strings.Repeat("(", 100) + "a eq 1" + strings.Repeat(")", 100), strings.Repeat("not ", 100) + "a", "a eq 1 --", "a eq 'x' /* */"}
	for _, s := range bad {
		_, err := ParseFilter(s)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: want *Error, got %v", s, err)
		}
	}
}

func TestParseApplyAndExpand(t *testing.T) {
	tr, err := ParseApply("filter(Status eq 'Succeeded')/compute(year(PaidAt) as Year,month(PaidAt) as Month)/groupby((Year,Month,ProductId),aggregate(Amount with sum as Revenue,$count as N))")
	if err != nil || len(tr) != 3 || len(tr[2].GroupBy) != 3 || len(tr[2].Aggregate) != 2 || tr[2].Aggregate[1].Method != "count" {
		t.Fatalf("%+v %v", tr, err)
	}
	ex, err := ParseExpand("Payments($filter=Amount gt 5;$top=3;$orderby=PaidAt desc;$select=Amount;$expand=Subscriber($select=Name)),Invoices", 0)
	if err != nil || len(ex) != 2 || ex[0].Options.Top == nil || *ex[0].Options.Top != 3 || len(ex[0].Options.Expand) != 1 {
		t.Fatalf("%+v %v", ex, err)
	}
	if _, err := ParseExpand("A($expand=B($expand=C($expand=D)))", 0); err == nil {
		t.Fatal("depth not limited")
	}
}

func fuzzNoPanic(f *testing.F, seeds []string, parse func(string) error) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := parse(s)
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("%q: error %T is not *Error", s, err)
		}
	})
}

func FuzzFilter(f *testing.F) {
	fuzzNoPanic(f, []string{"Name eq 'x' and (A gt 1 or not B le 2020-01-01)", "a in (1,2)", "contains(tolower(a),'b')", "x eq 01900000-0000-7000-8000-000000000001"},
		func(s string) error { _, err := ParseFilter(s); return err })
}

func FuzzOrderBy(f *testing.F) {
	fuzzNoPanic(f, []string{"a asc,b desc", "A/B"}, func(s string) error { _, err := ParseOrderBy(s); return err })
}

func FuzzExpand(f *testing.F) {
	fuzzNoPanic(f, []string{"A($filter=x eq 'a;b';$top=1),B", "A($expand=B($select=C))"}, func(s string) error { _, err := ParseExpand(s, 0); return err })
}

func FuzzApply(f *testing.F) {
	fuzzNoPanic(f, []string{"filter(a eq 1)/groupby((b),aggregate(c with sum as d))", "aggregate($count as n)", "compute(year(a) as y)"},
		func(s string) error { _, err := ParseApply(s); return err })
}
