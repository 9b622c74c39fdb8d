package provider_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/provider"
	"github.com/kadens/kadens/internal/provider/ehf"
	"github.com/kadens/kadens/internal/provider/external"
	"github.com/kadens/kadens/internal/provider/invoice"
	"github.com/kadens/kadens/internal/provider/oio"
	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/validation"
)

// TestCheckers is the rule table of the four providers: what each accepts,
// in which canonical form, and the fields and words of what it refuses.
func TestCheckers(t *testing.T) {
	cases := []struct {
		name string
		p    provider.Provider
		in   provider.Agreement
		want provider.Agreement
		errs []string // "field: part of the message"
	}{
		{"Invoice defaults the method", invoice.Provider, provider.Agreement{}, provider.Agreement{PaymentMethod: "BankTransfer"}, nil},
		{"Invoice method any case", invoice.Provider, provider.Agreement{PaymentMethod: "banktransfer"}, provider.Agreement{PaymentMethod: "BankTransfer"}, nil},
		{"Invoice refuses a reference", invoice.Provider, provider.Agreement{Reference: "123"}, provider.Agreement{Reference: "123", PaymentMethod: "BankTransfer"},
			[]string{"providerAgreementReference: must be empty for Invoice agreements"}},
		{"Invoice refuses another method", invoice.Provider, provider.Agreement{PaymentMethod: "Card"}, provider.Agreement{PaymentMethod: "BankTransfer"},
			[]string{"paymentMethod: must be BankTransfer for Invoice agreements"}},
		{"EHF org number", ehf.Provider, provider.Agreement{Reference: "923 609 016"}, provider.Agreement{Reference: "923609016", PaymentMethod: "eInvoice"}, nil},
		{"EHF check digit", ehf.Provider, provider.Agreement{Reference: "923609017"}, provider.Agreement{PaymentMethod: "eInvoice"},
			[]string{"providerAgreementReference: \"923609017\" is not a Norwegian organization number: the check digit does not match"}},
		{"EHF format", ehf.Provider, provider.Agreement{Reference: "12345"}, provider.Agreement{PaymentMethod: "eInvoice"},
			[]string{"providerAgreementReference: \"12345\" must be the recipient's Norwegian organization number (9 digits)"}},
		{"EHF required, method wrong: both at once", ehf.Provider, provider.Agreement{PaymentMethod: "Paper"}, provider.Agreement{PaymentMethod: "eInvoice"},
			[]string{"providerAgreementReference: is required", "paymentMethod: must be eInvoice for EHF agreements"}},
		{"OIO CVR", oio.Provider, provider.Agreement{Reference: "13585628"}, provider.Agreement{Reference: "13585628", PaymentMethod: "eInvoice"}, nil},
		{"OIO GLN", oio.Provider, provider.Agreement{Reference: "5790000435975"}, provider.Agreement{Reference: "5790000435975", PaymentMethod: "eInvoice"}, nil},
		{"OIO CVR check digit", oio.Provider, provider.Agreement{Reference: "13585627"}, provider.Agreement{PaymentMethod: "eInvoice"},
			[]string{"providerAgreementReference: \"13585627\" is not a Danish CVR number"}},
		{"OIO GLN check digit", oio.Provider, provider.Agreement{Reference: "5790000435976"}, provider.Agreement{PaymentMethod: "eInvoice"},
			[]string{"providerAgreementReference: \"5790000435976\" is not a GLN"}},
		{"External label defaults", external.Provider, provider.Agreement{Reference: "crm-7"}, provider.Agreement{Reference: "crm-7", PaymentMethod: "External"}, nil},
		{"External keeps its label", external.Provider, provider.Agreement{Reference: "crm-7", PaymentMethod: "Vipps"}, provider.Agreement{Reference: "crm-7", PaymentMethod: "Vipps"}, nil},
		{"External needs a reference", external.Provider, provider.Agreement{}, provider.Agreement{PaymentMethod: "External"},
			[]string{"providerAgreementReference: is required: the integrator's reference"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := c.in
			err := c.p.Check(context.Background(), &a)
			var verrs validation.Errors
			if err != nil && !errors.As(err, &verrs) {
				t.Fatalf("not a validation error: %v", err)
			}
			if len(verrs) != len(c.errs) {
				t.Fatalf("errors %v, want %v", verrs, c.errs)
			}
			for i, want := range c.errs {
				field, msg, _ := strings.Cut(want, ": ")
				if verrs[i].Field != field || !strings.Contains(verrs[i].Message, msg) {
					t.Errorf("error %d: %s: %s, want %s", i, verrs[i].Field, verrs[i].Message, want)
				}
			}
			if a.PaymentMethod != c.want.PaymentMethod || (len(c.errs) == 0 && a != c.want) {
				t.Errorf("agreement %+v, want %+v", a, c.want)
			}
		})
	}
}

// TestTypesAreTheStoredOnes: a provider's Type is what the store keeps and
// the contract names.
func TestTypesAreTheStoredOnes(t *testing.T) {
	for got, want := range map[string]string{invoice.Type: store.ProviderInvoice, ehf.Type: store.ProviderEHF, oio.Type: store.ProviderOIO,
		external.Type: store.ProviderExternal, invoice.MethodBankTransfer: store.MethodBankTransfer, provider.MethodEInvoice: store.MethodEInvoice} {
		if got != want {
			t.Errorf("%s, stored as %s", got, want)
		}
	}
}

func TestRegistry(t *testing.T) {
	r := provider.NewRegistry(invoice.Provider, ehf.Provider, oio.Provider, external.Provider)
	if got := strings.Join(r.Types(), ","); got != "Invoice,EHF,OIO,External" {
		t.Errorf("types %s", got)
	}
	for _, v := range []string{"EHF", "ehf", "eHf"} {
		if p, ok := r.Lookup(v); !ok || p.Type != "EHF" {
			t.Errorf("Lookup(%q) = %q, %t", v, p.Type, ok)
		}
	}
	if _, ok := r.Lookup("Autogiro"); ok {
		t.Error("Autogiro found before it is registered")
	}
	if kinds := r.Events(); kinds != nil {
		t.Errorf("today's checkers have no hooks, yet events %v", kinds)
	}
	withHook := ehf.Provider
	withHook.Deliver = func(context.Context, provider.Document) error { return nil }
	if got := provider.NewRegistry(invoice.Provider, withHook).Events(); !slices.Equal(got, []string{"InvoiceIssued", "CreditNoteIssued"}) {
		t.Errorf("a delivery hook needs the invoice events, got %v", got)
	}
	withLifecycle := external.Provider
	withLifecycle.AgreementDeleted = func(context.Context, provider.AgreementRef) error { return nil }
	if got := provider.NewRegistry(withLifecycle).Events(); !slices.Equal(got, []string{"PaymentAgreementCreated", "PaymentAgreementDeleted"}) {
		t.Errorf("a lifecycle hook needs the agreement events only, got %v", got)
	}
	if got := provider.NewRegistry(withHook, withLifecycle).Events(); len(got) != 4 {
		t.Errorf("both kinds of hook: %v", got)
	}
	polling := external.Provider
	polling.Poll = &provider.Poll{Every: time.Minute, Run: func(context.Context) error { return nil }}
	idle := ehf.Provider
	idle.Poll = &provider.Poll{Run: func(context.Context) error { return nil }} // no interval: off
	if got := provider.NewRegistry(polling, idle).Polls(); len(got) != 1 || got["External"].Every != time.Minute {
		t.Errorf("polls %v, want External's only", got)
	}
	if p, _ := r.Lookup("external"); !p.UniqueReference {
		t.Error("External references are unique")
	}
	for name, ps := range map[string][]provider.Provider{
		"twice":      {ehf.Provider, ehf.Provider},
		"no checker": {{Type: "Autogiro"}},
		"no type":    {{Check: ehf.Check}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered without a panic", name)
				}
			}()
			provider.NewRegistry(ps...)
		}()
	}
}
