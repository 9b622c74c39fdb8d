package idp

import (
	"bufio"
	"context"
	"html"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/smtpmail"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
	"github.com/kadens/kadens/internal/tenancy"
)

// smtpSink is a local SMTP server that speaks just enough of RFC 5321 for
// net/smtp.SendMail and hands each message's data to a channel.
func smtpSink(t testing.TB) (addr string, mails <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan string, 10)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				r := bufio.NewReader(c)
				say := func(s string) { _, _ = c.Write([]byte(s + "\r\n")) }
				say("220 sink ESMTP")
				var data strings.Builder
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					cmd := strings.ToUpper(strings.TrimSpace(line))
					switch {
					case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
						say("250 sink")
					case strings.HasPrefix(cmd, "DATA"):
						say("354 go on")
						for {
							l, err := r.ReadString('\n')
							if err != nil {
								return
							}
							if l == ".\r\n" {
								break
							}
							data.WriteString(l)
						}
						select {
						case ch <- data.String():
						default: // nobody reads them (the fuzz targets): dropped
						}
						say("250 queued")
					case strings.HasPrefix(cmd, "QUIT"):
						say("221 bye")
						return
					default: // MAIL, RCPT, RSET, NOOP
						say("250 ok")
					}
				}
			}(conn)
		}
	}()
	return ln.Addr().String(), ch
}

var linkRE = regexp.MustCompile(`http://\S+/reset\?\S+`)

// Password reset: the form on the login page mails a link (through a real
// SMTP exchange) to an existing user only, answering the same either way;
// the link sets a new password once; the new password logs in.
func TestPasswordReset(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		addr, mails := smtpSink(t)
		f := newLoginFixture(t, s)
		m, err := smtpmail.Parse("smtp://"+addr+"?from=login@avisa.example", egress.Policy{Private: true})
		if err != nil {
			t.Fatal(err)
		}
		f.Server.mail = m

		request := func(email string) page {
			c := browser(t)
			p := fetch(t, c, "GET", f.authorizeURL(nil), nil)
			lp := fetch(t, c, "GET", p.location, nil)
			if !strings.Contains(lp.body, `href="reset?id=`) {
				t.Fatalf("login page without the reset link: %s", lp.body)
			}
			id := html.UnescapeString(idRE.FindStringSubmatch(lp.body)[1])
			rp := fetch(t, c, "GET", f.url+"/reset?id="+url.QueryEscape(id), nil)
			csrf := csrfRE.FindStringSubmatch(rp.body)
			if rp.status != http.StatusOK || csrf == nil {
				t.Fatalf("reset page: %d %s", rp.status, rp.body)
			}
			return fetch(t, c, "POST", f.url+"/reset", url.Values{"id": {id}, "csrf": {html.UnescapeString(csrf[1])}, "email": {email}})
		}
		unknown := request("nobody@example.com")
		known := request(strings.ToUpper(f.email))
		if unknown.status != 200 || known.status != 200 || !strings.Contains(known.body, `data-reset="sent"`) ||
			!strings.Contains(unknown.body, `data-reset="sent"`) {
			t.Fatalf("reset request: %d / %d %s", unknown.status, known.status, known.body)
		}
		var mail string
		select {
		case mail = <-mails:
		case <-time.After(10 * time.Second):
			t.Fatal("no mail")
		}
		select {
		case extra := <-mails:
			t.Fatalf("a mail for an unknown address: %s", extra)
		case <-time.After(200 * time.Millisecond):
		}
		if !strings.Contains(mail, "To: "+f.email) || !strings.Contains(mail, "Subject: "+texts["nb"].ResetSubject) {
			t.Fatalf("mail: %s", mail)
		}
		link := linkRE.FindString(mail)
		u, err := url.Parse(link)
		if err != nil || link == "" {
			t.Fatalf("no link in %s", mail)
		}
		tok := u.Query().Get("token")
		if p := fetch(t, browser(t), "GET", link, nil); p.status != 200 || !strings.Contains(p.body, `name="password"`) {
			t.Fatalf("link page: %d %s", p.status, p.body)
		}
		if p := fetch(t, browser(t), "POST", f.url+"/reset", url.Values{"token": {tok}, "password": {"short"}}); p.status != 400 {
			t.Errorf("short password: %d", p.status)
		}
		newPW := "a brand new passphrase"
		if p := fetch(t, browser(t), "POST", f.url+"/reset", url.Values{"token": {tok}, "password": {newPW}}); p.status != 200 ||
			!strings.Contains(p.body, `data-reset="done"`) {
			t.Fatalf("set password: %d %s", p.status, p.body)
		}
		if p := fetch(t, browser(t), "POST", f.url+"/reset", url.Values{"token": {tok}, "password": {"another passphrase"}}); p.status != 400 {
			t.Errorf("the link used twice: %d", p.status)
		}
		if p := f.login(t, browser(t), f.authorizeURL(nil), f.email, newPW); p.status != http.StatusFound || !strings.HasPrefix(p.location, testRedirect) {
			t.Errorf("login with the new password: %d %s", p.status, p.body)
		}

		// An expired link.
		tok2 := randomToken()
		ctx := tenancy.With(context.Background(), f.tenant)
		past := time.Now().Add(-2 * ResetTTL)
		if err := CreatePasswordReset(ctx, s, sha(tok2), f.tenant, f.userID, past, past.Add(ResetTTL)); err != nil {
			t.Fatal(err)
		}
		if p := fetch(t, browser(t), "POST", f.url+"/reset", url.Values{"token": {tok2}, "password": {"yet another one"}}); p.status != 400 {
			t.Errorf("expired link: %d", p.status)
		}
	})
}
