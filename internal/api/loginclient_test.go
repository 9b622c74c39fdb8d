package api_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/kadens/kadens/internal/apitest"
)

// Login clients: create (secret shown once), list, get, delete; bad input
// is a 400 naming the field; another tenant sees none of them.
func TestLoginClients(t *testing.T) {
	t.Parallel()
	apitest.Each(t, func(t *testing.T, e *apitest.Env) {
		r := e.Do("POST", "/loginclient", map[string]any{"name": "Web", "redirectUris": []string{"https://news.example/cb"},
			"postLogoutRedirectUris": []string{"https://news.example/"}, "scopes": []string{"paywall"}})
		var created struct {
			ID, Secret   string
			RedirectURIs []string `json:"redirectUris"`
		}
		r.JSON(t, &created)
		if r.Status != http.StatusCreated || created.Secret == "" || created.ID == "" || r.Header.Get("Location") == "" ||
			!slices.Equal(created.RedirectURIs, []string{"https://news.example/cb"}) {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		got := e.Do("GET", "/loginclient/"+created.ID, nil)
		var one map[string]any
		got.JSON(t, &one)
		if got.Status != http.StatusOK || one["secret"] != nil || one["name"] != "Web" {
			t.Fatalf("get: %d %s", got.Status, got.Body)
		}
		var list []map[string]any
		if l := e.Do("GET", "/loginclient", nil); l.Status != http.StatusOK {
			t.Fatalf("list: %d %s", l.Status, l.Body)
		} else if l.JSON(t, &list); len(list) != 1 {
			t.Fatalf("list: %s", l.Body)
		}

		for name, body := range map[string]map[string]any{
			"no redirect":    {"name": "x", "redirectUris": []string{}},
			"relative":       {"name": "x", "redirectUris": []string{"/cb"}},
			"http not local": {"name": "x", "redirectUris": []string{"http://news.example/cb"}},
			"fragment":       {"name": "x", "redirectUris": []string{"https://news.example/cb#x"}},
			"api scope":      {"name": "x", "redirectUris": []string{"https://news.example/cb"}, "scopes": []string{"api"}},
			"no name":        {"redirectUris": []string{"https://news.example/cb"}},
			"bad logout":     {"name": "x", "redirectUris": []string{"https://news.example/cb"}, "postLogoutRedirectUris": []string{"nope"}},
		} {
			if r := e.Do("POST", "/loginclient", body); r.Status != http.StatusBadRequest {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}

		other := e.NewTenant("tenant-b", false)
		if r := other.Do("GET", "/loginclient/"+created.ID, nil); r.Status != http.StatusNotFound {
			t.Errorf("other tenant get: %d", r.Status)
		}
		if r := other.Do("DELETE", "/loginclient/"+created.ID, nil); r.Status != http.StatusNotFound {
			t.Errorf("other tenant delete: %d", r.Status)
		}
		if r := e.Do("DELETE", "/loginclient/"+created.ID, nil); r.Status != http.StatusNoContent {
			t.Errorf("delete: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/loginclient/"+created.ID, nil); r.Status != http.StatusNotFound {
			t.Errorf("get after delete: %d", r.Status)
		}
	})
}
