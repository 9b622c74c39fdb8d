package idp

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kadens/kadens/internal/egress"
	"github.com/kadens/kadens/internal/smtpmail"
)

// Password reset mail goes to the SMTP server through the egress policy:
// a server named by a name resolving to 127.0.0.1 (localhost) is refused
// at dial time and never sees a connection; allowed by the operator, the
// same address gets the mail. (Start-up refuses --smtp-url at a refused
// address or localhost: TestOperatorDestinationsFollowEgressPolicy in
// internal/config.)
func TestSMTPEgress(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	m, err := smtpmail.Parse("smtp://localhost:"+port+"?from=login@avisa.example", egress.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Send(context.Background(), "kari@example.no", "Reset", "link")
	if !errors.Is(err, egress.ErrRefused) || !strings.Contains(err.Error(), "--egress-allow-private") {
		t.Fatalf("send to an SMTP server on loopback: %v, want a refusal naming --egress-allow-private", err)
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("the SMTP server on loopback got %d connections", n)
	}

	addr, mails := smtpSink(t)
	_, port, _ = net.SplitHostPort(addr)
	m, err = smtpmail.Parse("smtp://localhost:"+port+"?from=login@avisa.example", egress.Policy{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), "kari@example.no", "Reset", "link"); err != nil {
		t.Fatalf("with private addresses allowed: %v", err)
	}
	// The sink hands the message over before it answers the DATA, which
	// send waited for: it is there now.
	select {
	case mail := <-mails:
		if !strings.Contains(mail, "To: kari@example.no") {
			t.Fatalf("mail: %s", mail)
		}
	default:
		t.Fatal("no mail with private addresses allowed")
	}
	// Header injection through an address is refused by net/smtp.
	if err := m.Send(context.Background(), "kari@example.no\r\nBcc: x@y.z", "Reset", "link"); err == nil {
		t.Fatal("a recipient with a line break was accepted")
	}
}
