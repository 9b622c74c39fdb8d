package dburl

import "testing"

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://kadens:s3cret@db:5432/kadens?sslmode=disable", "postgres://kadens:xxxxx@db:5432/kadens?sslmode=disable"},
		{"postgres://kadens:p@ss@db/kadens", "postgres://kadens:xxxxx@db/kadens"}, // the last @ ends the user info
		{"postgres://kadens@db/kadens", "postgres://kadens@db/kadens"},
		{"postgres://db/kadens", "postgres://db/kadens"},
		{"not a url", "not a url"},
		{"", ""},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestIsPostgres(t *testing.T) {
	for in, want := range map[string]bool{
		"postgres://db/kadens": true, "postgresql://db/kadens": true, "": false,
		"sqlite:///var/lib/kadens": false, "mysql://db/kadens": false, "Postgres://db": false,
	} {
		if got := IsPostgres(in); got != want {
			t.Errorf("IsPostgres(%q) = %t, want %t", in, got, want)
		}
	}
}
