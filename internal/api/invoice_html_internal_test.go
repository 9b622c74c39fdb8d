package api

import "testing"

func TestNegotiate(t *testing.T) {
	offers := invoiceMediaTypes
	for _, tc := range []struct {
		accept string
		want   string // "" = 406
	}{
		{"", mediaJSON},
		{"   ", mediaJSON},
		{"*/*", mediaJSON},
		{"application/json", mediaJSON},
		{"application/*", mediaJSON},
		{"text/*", mediaHTML},
		{"text/html", mediaHTML},
		{"Text/HTML;charset=UTF-8", mediaHTML},
		{"application/pdf", mediaPDF},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", mediaHTML},
		{"application/json;q=0.2, text/html;q=0.5", mediaHTML},
		{"application/json;q=0.5, application/pdf", mediaPDF},
		{"application/json;q=0, */*", mediaHTML},      // JSON refused, the next preference
		{"*/*;q=0.1, application/pdf;q=0", mediaJSON}, // PDF refused, */* still admits JSON
		{"text/html;q=0.5, text/*;q=0.9", mediaHTML},  // the specific range sets HTML's q
		{"application/*;q=0.3, application/pdf;q=0.4", mediaPDF},
		{"image/png", ""},
		{"application/json;q=0", ""},
		{"text/html;q=0, application/json;q=0, application/pdf;q=0", ""},
		{"application/json;q=2", ""},   // an invalid q drops the range
		{"application/json;q=abc", ""}, // likewise
		{"json", ""},
		{"*/json", ""},
		{",,,", ""},
	} {
		got, ok := negotiate(tc.accept, offers)
		if !ok {
			got = ""
		}
		if got != tc.want {
			t.Errorf("negotiate(%q) = %q, want %q", tc.accept, got, tc.want)
		}
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"", "*/*", "text/html;q=0.5, application/*;q=0.9", "a/b;q=;;,", "application/json;q=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		got, ok := negotiate(accept, invoiceMediaTypes)
		if ok != (got != "") {
			t.Fatalf("negotiate(%q) = %q, %v", accept, got, ok)
		}
		if ok {
			found := false
			for _, o := range invoiceMediaTypes {
				found = found || o == got
			}
			if !found {
				t.Fatalf("negotiate(%q) = %q, not an offer", accept, got)
			}
		}
	})
}
