package ocrgiro

// Start is a transmission start (record 10).
type Start struct {
	Sender    string // 8 digits: our customer-unit id, or NetsID from Nets
	Number    string // 7 digits, unique per sender
	Recipient string // 8 digits: NetsID, or our customer-unit id from Nets
}

// AssignmentStart opens an assignment (record 20): one service and type
// for one payee account.
type AssignmentStart struct {
	Service     int    // ServiceAvtaleGiro or ServiceOCR
	Type        int    // AssignmentClaims, AssignmentCancellations, AssignmentMandates
	AgreementID string // 9 digits; zeros for AvtaleGiro, Nets' agreement id for OCR giro
	Number      string // 7 digits, unique per payee agreement for 12 months + 1 day
	Account     string // the payee's 11-digit account
}

// Claim is one claim (types TypeNoNotice, TypeBankNotice) or cancellation
// (TypeCancellation): records 30, 31 and, for TypeBankNotice, its 49s.
type Claim struct {
	Type        int
	Number      int // transaction number: > 0, ascending in the assignment
	Due         Date
	Amount      int64 // øre
	KID         string
	ShortName   string // payer short name, up to 10 characters
	ExternalRef string // shown to the payer, up to 25 characters
	Notice      []NoticeLine
}

// NoticeLine is one printed line (1–42) of a bank notice, up to 80
// characters; it is written as one record per non-blank half.
type NoticeLine struct {
	Line int
	Text string
}

// Mandate is one mandate record from Nets (record 70).
type Mandate struct {
	Serial       int
	Registration int // MandateActive, MandateNew, MandateDeleted
	KID          string
	Notice       bool // the payer wants a written notice from the bank
}

// Payment is one OCR giro payment from Nets (records 30, 31 and, for
// types 20 and 21, 32). Fields Nets fills for its own bookkeeping are kept
// as written so a file re-serializes byte for byte.
type Payment struct {
	Type              int
	Number            int
	NetsDate          Date
	Centre            string // 2 digits
	DayCode           string // 2 digits
	PartialSettlement string // 1 digit
	Serial            string // 5 digits
	Sign              byte   // '0' or '-'
	Amount            int64  // øre
	KID               string
	FormNumber        string // 10 digits
	ArchiveRef        string // 9 digits: agreement id or archive reference
	Filler31          string // positions 35–41 of record 31, as written
	BankDate          Date
	PayerAccount      string // 11 digits, zeros when unknown
	FreeText          string // record 32 (types 20 and 21)
}

// AssignmentEnd closes an assignment (record 88). Transactions, Records and
// Sum are what the assignment holds; the dates are the earliest and latest
// due date of claims, or Nets' three dates of an OCR assignment.
type AssignmentEnd struct {
	Transactions int
	Records      int
	Sum          int64
	Date1        Date
	Date2        Date
	Date3        Date
}

// End is a transmission end (record 89).
type End struct {
	Transactions int
	Records      int
	Sum          int64
	Date         Date // to Nets: the earliest due date in the file
}
