package validation

import (
	"strings"
	"testing"
)

func TestTextProblem(t *testing.T) {
	for _, tc := range []struct {
		s         string
		multiline bool
		want      string // part of the problem; "" for none
	}{
		{"Kari Nordmann", false, ""},
		{"Tromsø – Ærøskøbing 😀", false, ""},
		{"a\x00b", false, "U+0000"},
		{"a\x00b", true, "U+0000"},
		{"line 1\nline 2", false, "single line"},
		{"line 1\r\n\tline 2", true, ""},
		{"bell\a", true, "U+0007"},
		{"del\x7f", false, "U+007F"},
		{"next line \u0085", true, "U+0085"},
		{"csi \u009b", false, "U+009B"},
		{"bad \xff byte", false, "UTF-8"},
		{"replacement \ufffd as written", false, ""},
	} {
		got := TextProblem(tc.s, tc.multiline)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("TextProblem(%q, %v) = %q, want %q", tc.s, tc.multiline, got, tc.want)
		}
	}
}

func TestErrors(t *testing.T) {
	var e Errors
	if e.Err() != nil {
		t.Fatal("no errors must be a nil error")
	}
	e.Add("name", "is required")
	e.Add("contacts[0].email", "must be %s", "an email address")
	if err := e.Err(); err == nil || err.Error() != "invalid input: name: is required; contacts[0].email: must be an email address" {
		t.Fatalf("%v", err)
	}
}
