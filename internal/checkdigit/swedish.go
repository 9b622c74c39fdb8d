package checkdigit

// SwedishOrgNumber validates a Swedish organisationsnummer (Bolagsverket):
// 10 digits whose last is a Luhn (MOD10) check digit over the first 9, and
// whose third digit is at least 2 (legal entities; personal identity
// numbers have a month there). Peppol identifies Swedish companies under
// ICD 0007 with it.
func SwedishOrgNumber(s string) (string, error) {
	d, ok := digits(s)
	if !ok || len(d) != 10 {
		return "", &FormatError{Want: "10 digits"}
	}
	if d[2] < '2' {
		return "", &FormatError{Want: "10 digits with a third digit of 2 or more (a legal entity)"}
	}
	sum := 0
	for i := 0; i < 10; i++ {
		v := int(d[i] - '0')
		if i%2 == 0 { // from the left: weights 2 1 2 1 … on the first nine
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	if sum%10 != 0 {
		return "", ErrCheckDigit
	}
	return d, nil
}
