package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/staff"
	"github.com/kadens/kadens/internal/validation"
)

// stdin is where --password-stdin reads; a test replaces it.
var stdin io.Reader = os.Stdin

// userCreate is `kadens user create`: a staff user of the console. A
// tenant's first admin is made here, as the console needs one to log in. Without --password-stdin it prints a set-password link, so the
// password is never on a command line or in a shell history.
func userCreate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("user create", stderr, getenv)
	tenant := fs.String("tenant", "", "tenant name or id")
	email := fs.String("email", "", "the user's e-mail address (the login)")
	role := fs.String("role", "", "admin, support or finance")
	name := fs.String("name", "", "the user's name, as the console shows it")
	pwStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input instead of printing a set-password link")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	if *tenant == "" || *email == "" || *role == "" {
		return usagef("--tenant, --email and --role are required")
	}
	r, err := staff.ParseRole(*role)
	if err != nil {
		return usagef("--role %q: want admin, support or finance", *role)
	}
	pw := ""
	if *pwStdin {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read the password from standard input: %w", err)
		}
		if pw = strings.TrimRight(line, "\r\n"); pw == "" {
			return usagef("--password-stdin: standard input holds no password")
		}
	}
	st, t, err := openTenant(ctx, cfg, stderr, *tenant)
	if err != nil {
		return err
	}
	defer st.Close()
	dir := staff.New(st, staff.Options{})
	u, err := dir.CreateUser(ctx, t.ID, staff.NewUser{Email: *email, Name: *name, Role: r, Password: pw})
	var verrs validation.Errors
	switch {
	case errors.Is(err, staff.ErrEmailTaken):
		return fmt.Errorf("tenant %s has a staff user with the e-mail %s already", t.Name, *email)
	case errors.As(err, &verrs):
		return usageError{verrs}
	case err != nil:
		return err
	}
	out := map[string]any{"id": u.ID, "tenant": t.Name, "email": u.Email, "name": u.Name, "role": u.Role}
	var link string
	var expires time.Time
	if pw == "" {
		token, exp, err := dir.SetPasswordLink(ctx, t.ID, u.ID)
		if err != nil {
			return fmt.Errorf("user %s was created, but its set-password link was not: %w (run the command again after removing it, or ask an admin to send one)", u.ID, err)
		}
		link, expires = cfg.ConsoleURL+"/console/setpassword?token="+url.QueryEscape(token), exp
		out["setPasswordLink"], out["linkExpires"] = link, exp.UTC().Format(time.RFC3339)
	}
	if *asJSON {
		return printJSON(stdout, out)
	}
	fmt.Fprintf(stdout, "staff user %s (%s, %s) created in tenant %s\n", u.ID, u.Email, u.Role, t.Name)
	if link != "" {
		fmt.Fprintf(stdout, "set-password link (single use; shown once, only a hash is stored):\n  %s\nexpires %s\n",
			link, expires.UTC().Format(time.RFC3339))
	}
	return nil
}

// userList is `kadens user list`: a tenant's staff users by e-mail.
func userList(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("user list", stderr, getenv)
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
	// Reading needs no hashing: the dummy hash New makes is the only cost.
	list, err := staff.New(st, staff.Options{}).Users(ctx, t.ID)
	if err != nil {
		return err
	}
	if *asJSON {
		type row struct {
			ID          string     `json:"id"`
			Email       string     `json:"email"`
			Name        string     `json:"name"`
			Role        staff.Role `json:"role"`
			Disabled    bool       `json:"disabled"`
			HasPassword bool       `json:"hasPassword"`
			TOTPEnabled bool       `json:"totpEnabled"`
		}
		rows := make([]row, len(list))
		for i, u := range list {
			rows[i] = row{u.ID, u.Email, u.Name, u.Role, u.Disabled, u.HasPassword, u.TOTPEnabled}
		}
		return printJSON(stdout, rows)
	}
	for _, u := range list {
		var notes []string
		if u.Disabled {
			notes = append(notes, "disabled")
		}
		if !u.HasPassword {
			notes = append(notes, "no password yet")
		}
		if u.TOTPEnabled {
			notes = append(notes, "TOTP")
		}
		fmt.Fprintf(stdout, "%s  %-8s %s", u.ID, u.Role, u.Email)
		if u.Name != "" {
			fmt.Fprintf(stdout, " (%s)", u.Name)
		}
		if len(notes) > 0 {
			fmt.Fprintf(stdout, "  [%s]", strings.Join(notes, ", "))
		}
		fmt.Fprintln(stdout)
	}
	return nil
}
