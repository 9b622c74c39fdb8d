package analytics

import (
	"os"
	"strings"
	"testing"
)

// TestDocsListModel keeps docs/ANALYTICS.md's entity table true: every set
// has a row naming each of its properties and navigation properties.
func TestDocsListModel(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ANALYTICS.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| `") {
			name := strings.Trim(strings.SplitN(line, "|", 3)[1], " `")
			rows[name] = line
		}
	}
	for _, s := range NewModel().Sets {
		row, ok := rows[s.Name]
		if !ok {
			t.Errorf("docs/ANALYTICS.md has no row for %s", s.Name)
			continue
		}
		for _, p := range s.Props {
			if !strings.Contains(row, " "+p.Name+" (") {
				t.Errorf("%s.%s is not in its docs row", s.Name, p.Name)
			}
		}
		for _, n := range s.Navs {
			if !strings.Contains(row, n.Name+" → ") {
				t.Errorf("navigation %s.%s is not in its docs row", s.Name, n.Name)
			}
		}
	}
}
