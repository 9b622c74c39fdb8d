package main

import (
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/demo"
)

// readme returns the repository's README.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The README's configuration table lists exactly the flags `serve -h`
// lists, each with its environment variable and default.
func TestReadmeConfigurationTableMatchesFlags(t *testing.T) {
	fs, cfg := flags("serve", io.Discard, func(string) string { return "" })
	cfg.RegisterDemo()
	type row struct{ env, def string }
	flagRows := map[string]row{}
	fs.VisitAll(func(f *flag.Flag) {
		env := regexp.MustCompile(`\[(KADENS_[A-Z_]+)\]$`).FindStringSubmatch(f.Usage)
		if env == nil {
			t.Errorf("--%s: usage names no environment variable", f.Name)
			return
		}
		flagRows[f.Name] = row{env[1], f.DefValue}
	})
	tableRows := map[string]row{}
	line := regexp.MustCompile("^\\| `--([a-z-]+)`(?: \\(serve\\))? \\| `(KADENS_[A-Z_]+)` \\| ([^|]+) \\|")
	for _, l := range strings.Split(readme(t), "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			tableRows[m[1]] = row{m[2], strings.TrimSpace(m[3])}
		}
	}
	var missing, extra []string
	for name, fr := range flagRows {
		tr, ok := tableRows[name]
		if !ok {
			missing = append(missing, "--"+name)
			continue
		}
		if tr.env != fr.env {
			t.Errorf("--%s: README says %s, the flag reads %s", name, tr.env, fr.env)
		}
		// Literal defaults must agree; derived ones (<listen>, …) and
		// "unset" (–) are described in words.
		def := strings.Trim(tr.def, "`")
		switch {
		case tr.def == "–":
			if fr.def != "" {
				t.Errorf("--%s: README says no default, the flag has %q", name, fr.def)
			}
		case strings.Contains(def, "<"):
		case !sameValue(def, fr.def):
			t.Errorf("--%s: README default %s, the flag's %q", name, tr.def, fr.def)
		}
	}
	for name := range tableRows {
		if _, ok := flagRows[name]; !ok {
			extra = append(extra, "--"+name)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("README configuration table: missing %v, not flags of serve %v", missing, extra)
	}
}

// sameValue compares a README default with a flag default, durations by
// value (1h is 1h0m0s).
func sameValue(readme, flagDefault string) bool {
	if readme == flagDefault {
		return true
	}
	a, err1 := time.ParseDuration(readme)
	b, err2 := time.ParseDuration(flagDefault)
	return err1 == nil && err2 == nil && a == b
}

// The advance example's date works with GNU date (-d) and BSD/macOS date
// (-v, no -d), in the README and in what serve --demo prints.
func TestReadmeAdvanceDateIsPortable(t *testing.T) {
	m := regexp.MustCompile(`\$\((date [^)]*)\)`).FindStringSubmatch(readme(t))
	if m == nil {
		t.Fatal("README has no $(date …) in the advance example")
	}
	expr := m[1]
	printed := demo.Instructions(demo.Credentials{TenantID: "t", ClientID: "c", ClientSecret: "s", ConsoleEmail: demo.ConsoleEmail, ConsolePassword: "p"}, "http://x", "http://x/idp", "http://x")
	if !strings.Contains(printed, "$("+expr+")") {
		t.Errorf("serve --demo prints another date expression than the README's %q:\n%s", expr, printed)
	}
	gnu, err := exec.LookPath("date")
	if err != nil {
		t.Fatal(err)
	}
	// A BSD date: -v+1y works, -d is an illegal option. It is emulated
	// with GNU date, which this machine has.
	bsd := t.TempDir()
	script := "#!/bin/bash\nout=()\nfor a in \"$@\"; do\n  case \"$a\" in\n    -d) echo 'date: illegal option -- d' >&2; exit 1;;\n" +
		"    -v+1y) out+=(-d '+1 year');;\n    -v*) echo \"unsupported $a\" >&2; exit 1;;\n    *) out+=(\"$a\");;\n  esac\ndone\nexec " + gnu + " \"${out[@]}\"\n"
	if err := os.WriteFile(filepath.Join(bsd, "date"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	want := time.Now().UTC().AddDate(1, 0, 0)
	for name, path := range map[string]string{"GNU": os.Getenv("PATH"), "BSD": bsd + string(os.PathListSeparator) + os.Getenv("PATH")} {
		cmd := exec.Command("bash", "-c", "echo \"$("+expr+")\"")
		cmd.Env = []string{"PATH=" + path}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s date: %v", name, err)
		}
		got, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
		if err != nil || got.Sub(want).Abs() > time.Minute {
			t.Errorf("%s date printed %q, want about %s", name, out, want.Format(time.RFC3339))
		}
	}
}
