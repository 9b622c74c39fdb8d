package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/idp"
	"github.com/kadens/kadens/internal/store"
)

// listFlag is a flag that may be given several times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func loginClientCreate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("login-client create", stderr, getenv)
	tenant := fs.String("tenant", "", "tenant name or id")
	name := fs.String("name", "", "what the client is (e.g. the web site)")
	var redirects, logouts, scopes listFlag
	fs.Var(&redirects, "redirect-uri", "an address the login may return to (repeatable; compared exactly)")
	fs.Var(&logouts, "logout-uri", "an address a logout may return to (repeatable)")
	fs.Var(&scopes, "scope", "a further scope the client may ask for (repeatable)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if *tenant == "" || *name == "" || len(redirects) == 0 {
		return usagef("--tenant, --name and at least one --redirect-uri are required")
	}
	st, t, err := openTenant(ctx, cfg, stderr, *tenant)
	if err != nil {
		return err
	}
	defer st.Close()
	c, secret, err := idp.NewLoginClient(ctx, st, t.ID, idp.LoginClientSpec{Name: *name, RedirectURIs: redirects,
		PostLogoutRedirectURIs: logouts, Scopes: scopes}, time.Now())
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"clientId": c.ID, "clientSecret": secret, "issuer": cfg.IdPURL,
			"redirectUris": c.RedirectURIs, "postLogoutRedirectUris": c.PostLogoutRedirectURIs, "connection": t.Name})
	}
	fmt.Fprintf(stdout, "client id:     %s\nclient secret: %s (shown once; only a hash is stored)\nissuer:        %s\nconnection:    %s\n",
		c.ID, secret, cfg.IdPURL, t.Name)
	return nil
}

func loginClientList(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("login-client list", stderr, getenv)
	tenant := fs.String("tenant", "", "tenant name or id")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if *tenant == "" {
		return usagef("--tenant is required")
	}
	st, t, err := openTenant(ctx, cfg, stderr, *tenant)
	if err != nil {
		return err
	}
	defer st.Close()
	list, err := idp.LoginClients(ctx, st, t.ID)
	if err != nil {
		return err
	}
	if *asJSON {
		if list == nil {
			list = []idp.LoginClient{}
		}
		return printJSON(stdout, list)
	}
	for _, c := range list {
		fmt.Fprintf(stdout, "%s  %s  redirect: %s\n", c.ID, c.Name, strings.Join(c.RedirectURIs, " "))
	}
	return nil
}

func loginClientDelete(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("login-client delete", stderr, getenv)
	tenant := fs.String("tenant", "", "tenant name or id")
	id := fs.String("id", "", "the login client's id")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if *tenant == "" || *id == "" {
		return usagef("--tenant and --id are required")
	}
	st, t, err := openTenant(ctx, cfg, stderr, *tenant)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := idp.DeleteLoginClient(ctx, st, t.ID, *id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("tenant %s has no login client %s", t.Name, *id)
		}
		return err
	}
	fmt.Fprintf(stdout, "deleted login client %s\n", *id)
	return nil
}
