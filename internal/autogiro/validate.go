package autogiro

import (
	"errors"
	"fmt"
	"strings"
)

// The identifiers an Autogiro mandate carries are checked when they are
// typed, not when Bankgirot rejects the file days later: the payee's
// bankgiro number, the payer's Swedish bank account (clearing number and
// account number, each bank with its own check digit rule) and the payer's
// personnummer or organisationsnummer.

// ErrCheckDigit: the number has the right shape but a digit is wrong.
var ErrCheckDigit = errors.New("the check digit does not match")

// cleanDigits removes the separators people type inside numbers
// (spaces, hyphens, dots, commas) and reports whether only digits remain.
func cleanDigits(s string) (string, bool) {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '.' || r == ',':
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// luhn reports whether the last digit of d is the Luhn (mod 10) check
// digit of the others.
func luhn(d string) bool {
	sum := 0
	for i := 0; i < len(d); i++ {
		n := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return sum%10 == 0
}

// mod11 reports whether d's weighted sum, weights 1, 2, 3, … from the
// right, is divisible by 11 (the banks' MOD11 rule).
func mod11(d string) bool {
	sum := 0
	for i := 0; i < len(d); i++ {
		sum += int(d[len(d)-1-i]-'0') * (i%10 + 1)
	}
	return sum%11 == 0
}

// Bankgiro validates a bankgiro number (7 or 8 digits, typed with or
// without the hyphen: 5432-1096) and returns its digits. The last digit is
// a Luhn check digit over the others.
func Bankgiro(s string) (string, error) {
	d, ok := cleanDigits(s)
	if !ok || len(d) < 7 || len(d) > 8 {
		return "", errors.New("must be a bankgiro number of 7 or 8 digits, such as 5432-1096")
	}
	if !luhn(d) {
		return "", ErrCheckDigit
	}
	return d, nil
}

// FormatBankgiro writes a bankgiro number as people read it: 5432-1096.
func FormatBankgiro(d string) string {
	if len(d) < 5 {
		return d
	}
	return d[:len(d)-4] + "-" + d[len(d)-4:]
}

// CustomerNumber validates the payee's customer number at Bankgirot
// (kundnummer): 1 to 6 digits.
func CustomerNumber(s string) (string, error) {
	d, ok := cleanDigits(s)
	if !ok || len(d) > 6 || strings.Trim(d, "0") == "" {
		return "", errors.New("must be Bankgirot's customer number: 1 to 6 digits, not all zeros")
	}
	return d, nil
}

// PayerID validates a payer's personnummer or organisationsnummer and
// returns it in the 12-digit form an Autogiro file carries: a personal
// number with its century (YYYYMMDDNNNN), an organisation number as 00 and
// its 10 digits. A 10-digit personal number (YYMMDD-NNNN) is not accepted
// because its century cannot be known for sure; organisation numbers are
// told from personal numbers by their third digit (month ≥ 20).
func PayerID(s string) (string, error) {
	d, ok := cleanDigits(s)
	if !ok {
		return "", errors.New("must be a personnummer (YYYYMMDD-NNNN) or an organisationsnummer (NNNNNN-NNNN)")
	}
	switch {
	case len(d) == 12 && d[:2] == "00" || len(d) == 10 && d[2] >= '2':
		org := d[len(d)-10:]
		if org[2] < '2' {
			return "", errors.New("is not an organisationsnummer: its third digit is 2 or more")
		}
		if !luhn(org) {
			return "", ErrCheckDigit
		}
		return "00" + org, nil
	case len(d) == 12:
		if !validBirthDate(d[:8]) {
			return "", errors.New("is not a personnummer: YYYYMMDD is not a date (a samordningsnummer adds 60 to the day)")
		}
		if !luhn(d[2:]) {
			return "", ErrCheckDigit
		}
		return d, nil
	case len(d) == 10:
		return "", errors.New("a personnummer needs its century: write YYYYMMDD-NNNN")
	}
	return "", errors.New("must be a personnummer (YYYYMMDD-NNNN) or an organisationsnummer (NNNNNN-NNNN)")
}

// validBirthDate checks YYYYMMDD, allowing a samordningsnummer's day + 60.
func validBirthDate(s string) bool {
	y := atoi(s[:4])
	m := atoi(s[4:6])
	d := atoi(s[6:8])
	if d > 60 {
		d -= 60
	}
	if y < 1800 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && (y%4 == 0 && y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// accountRule is how one clearing number range builds and checks its
// account numbers, after Bankgirot's table of the banks' account numbers
// ("Bankernas kontonummeruppbyggnad").
type accountRule struct {
	from, to int
	bank     string
	// typ 1: the account is 7 digits, checked with the clearing number
	// (comment 1: MOD11 over the last 3 clearing digits and the account;
	// comment 2: MOD11 over all 4 clearing digits and the account).
	// typ 2: the account alone is checked (comment 1: 10 digits, Luhn;
	// comment 2: 9 digits, MOD11; comment 3: up to 10 digits, Luhn).
	typ, comment int
}

var accountRules = []accountRule{
	{1100, 1199, "Nordea", 1, 1},
	{1200, 1399, "Danske Bank", 1, 1},
	{1400, 2099, "Nordea", 1, 1},
	{2300, 2399, "Ålandsbanken", 1, 2},
	{2400, 2499, "Danske Bank", 1, 2},
	{3000, 3299, "Nordea", 1, 1},
	{3300, 3300, "Nordea (personkonto)", 2, 1},
	{3301, 3399, "Nordea", 1, 1},
	{3400, 3409, "Länsförsäkringar Bank", 1, 1},
	{3410, 3781, "Nordea", 1, 1},
	{3782, 3782, "Nordea (personkonto)", 2, 1},
	{3783, 3999, "Nordea", 1, 1},
	{5000, 5999, "SEB", 1, 1},
	{6000, 6999, "Handelsbanken", 2, 2},
	{7000, 7999, "Swedbank", 1, 1},
	{8000, 8999, "Swedbank", 2, 3},
	{9020, 9029, "Länsförsäkringar Bank", 1, 2},
	{9040, 9049, "Citibank", 1, 2},
	{9060, 9069, "Länsförsäkringar Bank", 1, 1},
	{9100, 9109, "Nordnet Bank", 1, 2},
	{9120, 9124, "SEB", 1, 1},
	{9130, 9149, "SEB", 1, 1},
	{9150, 9169, "Skandiabanken", 1, 2},
	{9170, 9179, "Ikano Bank", 1, 1},
	{9180, 9189, "Danske Bank", 2, 1},
	{9190, 9199, "DNB Bank", 1, 2},
	{9230, 9239, "Marginalen Bank", 1, 1},
	{9250, 9259, "SBAB", 1, 1},
	{9270, 9279, "ICA Banken", 1, 1},
	{9280, 9289, "Resurs Bank", 1, 1},
	{9300, 9349, "Sparbanken Öresund", 2, 1},
	{9390, 9399, "Landshypotek", 1, 2},
	{9400, 9449, "Forex Bank", 1, 1},
	{9460, 9469, "Santander Consumer Bank", 1, 1},
	{9470, 9479, "BNP Paribas", 1, 2},
	{9500, 9549, "Nordea (Plusgirot)", 2, 3},
	{9550, 9569, "Avanza Bank", 1, 2},
	{9570, 9579, "Sparbanken Syd", 2, 1},
	{9630, 9639, "Lån & Spar Bank", 1, 1},
	{9640, 9649, "Nordax Bank", 1, 2},
	{9660, 9669, "Svea Bank", 1, 2},
	{9670, 9679, "JAK Medlemsbank", 1, 2},
	{9680, 9689, "Bluestep Finans", 1, 1},
	{9700, 9709, "Ekobanken", 1, 2},
	{9880, 9889, "Riksgälden", 1, 2},
	{9890, 9899, "Riksgälden", 2, 1},
	{9960, 9969, "Nordea (Plusgirot)", 2, 3},
}

func ruleFor(clearing int) (accountRule, bool) {
	for _, r := range accountRules {
		if clearing >= r.from && clearing <= r.to {
			return r, true
		}
	}
	return accountRule{}, false
}

// BankAccount is a Swedish bank account as Autogiro carries it: a 4-digit
// clearing number (a Swedbank 8xxx-x clearing number keeps its fifth,
// check, digit here and drops it in files) and the account number.
type BankAccount struct {
	Clearing string `json:"clearingNumber"`
	Number   string `json:"accountNumber"`
}

// String writes the account as clearing-account.
func (a BankAccount) String() string { return a.Clearing + "-" + a.Number }

// ParseBankAccount validates a clearing number and an account number typed
// separately, with the check digit rule of the clearing number's bank, and
// returns them in canonical form (digits; leading zeros of the account
// removed, except the fixed-length ones kept whole). The error names
// which of the two is wrong.
func ParseBankAccount(clearing, account string) (BankAccount, error) {
	c, ok := cleanDigits(clearing)
	if !ok || len(c) < 4 || len(c) > 5 {
		return BankAccount{}, &AccountError{Field: "clearingNumber", Reason: "must be a 4-digit clearing number (Swedbank: 5 digits, 8xxx-x)"}
	}
	rule, ok := ruleFor(atoi(c[:4]))
	if !ok {
		return BankAccount{}, &AccountError{Field: "clearingNumber", Reason: fmt.Sprintf("%s is not the clearing number of a bank in Autogiro", c)}
	}
	if len(c) == 5 {
		if rule.typ != 2 || rule.comment != 3 || rule.from != 8000 {
			return BankAccount{}, &AccountError{Field: "clearingNumber", Reason: "only Swedbank's 8xxx-x clearing numbers have 5 digits"}
		}
		if !luhn(c) {
			return BankAccount{}, &AccountError{Field: "clearingNumber", Reason: ErrCheckDigit.Error()}
		}
	}
	a, ok := cleanDigits(account)
	if !ok {
		return BankAccount{}, &AccountError{Field: "accountNumber", Reason: "must be digits"}
	}
	a = strings.TrimLeft(a, "0")
	bad := func(want string) (BankAccount, error) {
		return BankAccount{}, &AccountError{Field: "accountNumber", Reason: fmt.Sprintf("a %s account number (clearing %s) is %s", rule.bank, c, want)}
	}
	switch {
	case rule.typ == 1:
		if len(a) > 7 || a == "" {
			return bad("7 digits")
		}
		a = fmt.Sprintf("%07s", a)
		d := c[1:4] + a
		if rule.comment == 2 {
			d = c[:4] + a
		}
		if !mod11(d) {
			return BankAccount{}, &AccountError{Field: "accountNumber", Reason: ErrCheckDigit.Error()}
		}
	case rule.comment == 1:
		if len(a) > 10 || a == "" {
			return bad("10 digits")
		}
		a = fmt.Sprintf("%010s", a)
		if !luhn(a) {
			return BankAccount{}, &AccountError{Field: "accountNumber", Reason: ErrCheckDigit.Error()}
		}
	case rule.comment == 2:
		if len(a) > 9 || a == "" {
			return bad("up to 9 digits")
		}
		a = fmt.Sprintf("%09s", a)
		if !mod11(a) {
			return BankAccount{}, &AccountError{Field: "accountNumber", Reason: ErrCheckDigit.Error()}
		}
	default:
		if len(a) > 10 || len(a) < 2 {
			return bad("up to 10 digits")
		}
		if !luhn(a) {
			return BankAccount{}, &AccountError{Field: "accountNumber", Reason: ErrCheckDigit.Error()}
		}
	}
	return BankAccount{Clearing: c, Number: a}, nil
}

// AccountError says which part of a bank account is wrong.
type AccountError struct {
	Field  string // clearingNumber or accountNumber
	Reason string
}

func (e *AccountError) Error() string { return e.Field + ": " + e.Reason }
