// Package smtpmail sends the service's e-mail (password reset links) over
// SMTP, through the egress policy's dialer: the --smtp-url setting's form
// and check, and one message's exchange. It stands apart from the identity
// provider that sends with it so that the settings (internal/config) can
// check the URL without linking the provider.
package smtpmail

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/smtp"
	"net/url"
	"strings"
	"time"

	"github.com/kadens/kadens/internal/egress"
)

// Mailer sends one message at a time; SMTP in production, replaced
// nowhere: tests run a local SMTP sink.
type Mailer struct {
	addr, host, from string
	auth             smtp.Auth
	egress           egress.Policy
}

// Parse reads smtp://[user:pass@]host:port?from=address; connections
// to the server pass the egress policy p.
func Parse(raw string, p egress.Policy) (*Mailer, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "smtp" || u.Host == "" {
		return nil, fmt.Errorf("smtp url %q: want smtp://[user:password@]host:port?from=address", raw)
	}
	from := u.Query().Get("from")
	if from == "" || !strings.Contains(from, "@") {
		return nil, fmt.Errorf("smtp url: the from=address parameter is required")
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, "25"
	}
	m := &Mailer{addr: net.JoinHostPort(host, port), host: host, from: from, egress: p}
	if u.User != nil {
		pw, _ := u.User.Password()
		// PlainAuth refuses to send the password without TLS except to
		// localhost, which is what we want.
		m.auth = smtp.PlainAuth("", u.User.Username(), pw, host)
	}
	return m, nil
}

// mailTimeout bounds one message's whole SMTP exchange.
const mailTimeout = 30 * time.Second

// Send delivers one message the way smtp.SendMail does (STARTTLS when
// offered, then AUTH if configured), over a connection the egress
// policy's dialer opened: smtp.SendMail dials by itself, past the policy.
func (m *Mailer) Send(ctx context.Context, to, subject, body string) error {
	msg := "From: " + m.from + "\r\nTo: " + to + "\r\nSubject: " + subject +
		"\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n" +
		strings.ReplaceAll(body, "\n", "\r\n") + "\r\n"
	ctx, cancel := context.WithTimeout(ctx, mailTimeout)
	defer cancel()
	conn, err := m.egress.Dialer(10*time.Second).DialContext(ctx, "tcp", m.addr)
	if err != nil {
		return fmt.Errorf("smtp: connect to %s: %w", m.addr, err)
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	c, err := smtp.NewClient(conn, m.host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("smtp: %s: %w", m.addr, err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: m.host}); err != nil {
			return fmt.Errorf("smtp: %s: STARTTLS: %w", m.addr, err)
		}
	}
	if m.auth != nil {
		if ok, _ := c.Extension("AUTH"); !ok {
			return fmt.Errorf("smtp: %s does not offer AUTH", m.addr)
		}
		if err := c.Auth(m.auth); err != nil {
			return fmt.Errorf("smtp: %s: AUTH: %w", m.addr, err)
		}
	}
	// Mail and Rcpt refuse addresses with line breaks (header injection).
	if err := c.Mail(m.from); err != nil {
		return fmt.Errorf("smtp: %s: MAIL: %w", m.addr, err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("smtp: %s: RCPT: %w", m.addr, err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtp: %s: DATA: %w", m.addr, err)
	}
	if _, err := w.Write([]byte(msg)); err != nil {
		return fmt.Errorf("smtp: %s: message: %w", m.addr, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp: %s: message: %w", m.addr, err)
	}
	return c.Quit()
}

// Check reports what is wrong with a --smtp-url value: its form,
// and a server address (or localhost) the egress policy p refuses. A host
// name is not resolved here; the dialer checks what it resolves to.
func Check(raw string, p egress.Policy) error {
	m, err := Parse(raw, p)
	if err != nil {
		return err
	}
	if err := p.CheckLiteral(m.host); err != nil {
		return fmt.Errorf("the SMTP server %s %w", m.host, err)
	}
	return nil
}
