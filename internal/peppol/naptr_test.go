package peppol

import (
	"strings"
	"testing"
)

func TestNAPTRURL(t *testing.T) {
	for re, want := range map[string]string{
		"!^.*$!https://smp.example/!":    "https://smp.example/",
		"!^.*$!https://smp.example/a/b!": "https://smp.example/a/b",
		"|^.*$|http://h/p|":              "http://h/p",
		"!^.*$!ftp://smp.example/!":      "",
		"!^.*$!":                         "",
		"":                               "",
	} {
		got, ok := naptrURL(re)
		if got != want || ok != (want != "") {
			t.Errorf("%q → %q %v, want %q", re, got, ok, want)
		}
	}
}

func FuzzNAPTRURL(f *testing.F) {
	for _, s := range []string{"!^.*$!https://smp.example/!", "!!!", "", "x", "!^.*$!ftp://a!", "|^.*$|http://h/p|"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, re string) {
		if u, ok := naptrURL(re); ok && !strings.HasPrefix(u, "http") {
			t.Errorf("%q → %q", re, u)
		}
	})
}
