package country

import "testing"

func TestValidAndName(t *testing.T) {
	tests := []struct {
		code string
		ok   bool
		name string
	}{
		{"NO", true, "Norway"},
		{"SE", true, "Sweden"},
		{"DK", true, "Denmark"},
		{"FI", true, "Finland"},
		{"IS", true, "Iceland"},
		{"AX", true, "Åland Islands"},
		{"FO", true, "Faroe Islands"},
		{"GL", true, "Greenland"},
		{"SJ", true, "Svalbard and Jan Mayen"},
		{"DE", true, "Germany"},
		{"GB", true, "United Kingdom of Great Britain and Northern Ireland"},
		{"US", true, "United States of America"},
		{"CI", true, "Côte d'Ivoire"},
		{"SS", true, "South Sudan"},
		// Exact upper-case only.
		{"no", false, ""},
		{"No", false, ""},
		{"NO ", false, ""},
		{"NOR", false, ""},
		{"", false, ""},
		// Reserved but not assigned country codes.
		{"UK", false, ""},
		{"EU", false, ""},
		{"XK", false, ""},
		{"EL", false, ""},
		// Deleted codes.
		{"AN", false, ""},
		{"YU", false, ""},
		{"CS", false, ""},
	}
	for _, tt := range tests {
		if got := Valid(tt.code); got != tt.ok {
			t.Errorf("Valid(%q) = %v, want %v", tt.code, got, tt.ok)
		}
		if got := names[tt.code]; got != tt.name {
			t.Errorf("name of %q = %q, want %q", tt.code, got, tt.name)
		}
	}
}

func TestTableComplete(t *testing.T) {
	if len(names) != 249 {
		t.Errorf("table has %d codes, want the 249 assigned ISO 3166-1 alpha-2 codes", len(names))
	}
	for code, name := range names {
		if len(code) != 2 || code[0] < 'A' || code[0] > 'Z' || code[1] < 'A' || code[1] > 'Z' {
			t.Errorf("malformed code %q", code)
		}
		if name == "" {
			t.Errorf("%s has no name", code)
		}
	}
}

func TestNameIn(t *testing.T) {
	for _, tc := range []struct{ code, lang, want string }{
		{"NO", Norwegian, "Norge"},
		{"SE", Norwegian, "Sverige"},
		{"DK", Norwegian, "Danmark"},
		{"FI", Norwegian, "Finland"},
		{"DE", Norwegian, "Tyskland"},
		{"GB", Norwegian, "Storbritannia"},
		{"GR", Norwegian, "Hellas"},
		{"AT", Norwegian, "Østerrike"},
		{"NL", Norwegian, "Nederland"},
		{"SJ", Norwegian, "Svalbard og Jan Mayen"},
		{"NO", English, "Norway"},
		{"GB", English, "United Kingdom of Great Britain and Northern Ireland"},
		{"NO", "sv", "Norway"}, // no Swedish names: English
		{"no", Norwegian, ""},
		{"UK", Norwegian, ""},
	} {
		if got := NameIn(tc.code, tc.lang); got != tc.want {
			t.Errorf("NameIn(%q, %q) = %q, want %q", tc.code, tc.lang, got, tc.want)
		}
	}
}

// TestNorwegianTableComplete: every assigned code has a Norwegian name and
// the Norwegian table holds no other codes.
func TestNorwegianTableComplete(t *testing.T) {
	if len(nbNames) != len(names) {
		t.Errorf("%d Norwegian names for %d codes", len(nbNames), len(names))
	}
	for code := range names {
		if nbNames[code] == "" {
			t.Errorf("%s has no Norwegian name", code)
		}
	}
}
