package ocrgiro

import (
	"errors"
	"fmt"
	"io"
)

// Transmission is a whole file in memory: for tests, the fake bank and
// small files. Large files go through Reader and Writer.
type Transmission struct {
	Start       Start
	Assignments []Assignment
	End         End
}

// Assignment is one assignment with its transactions: Claims for claims
// and cancellations, Mandates or Payments for Nets' assignments.
type Assignment struct {
	Start    AssignmentStart
	Claims   []Claim
	Mandates []Mandate
	Payments []Payment
	End      AssignmentEnd
}

// Parse reads a whole transmission.
func Parse(r io.Reader) (*Transmission, error) {
	rd := NewReader(r)
	start, err := rd.Start()
	if err != nil {
		return nil, err
	}
	t := &Transmission{Start: start}
	var cur *Assignment
	for {
		item, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		switch v := item.(type) {
		case AssignmentStart:
			t.Assignments = append(t.Assignments, Assignment{Start: v})
			cur = &t.Assignments[len(t.Assignments)-1]
		case Claim:
			cur.Claims = append(cur.Claims, v)
		case Mandate:
			cur.Mandates = append(cur.Mandates, v)
		case Payment:
			cur.Payments = append(cur.Payments, v)
		case AssignmentEnd:
			cur.End = v
		case End:
			t.End = v
		}
	}
}

// Write writes t. Counts, sums and claim dates are computed; Nets' dates
// (OCR assignment dates, the end date of a file without claims) are taken
// from t.
func Write(w io.Writer, t *Transmission) error {
	wr := NewWriter(w)
	if err := wr.Begin(t.Start); err != nil {
		return err
	}
	for i, a := range t.Assignments {
		if err := wr.BeginAssignment(a.Start); err != nil {
			return fmt.Errorf("assignment %d: %w", i+1, err)
		}
		for _, c := range a.Claims {
			if err := wr.Claim(c); err != nil {
				return err
			}
		}
		for _, m := range a.Mandates {
			if err := wr.Mandate(m); err != nil {
				return err
			}
		}
		for _, p := range a.Payments {
			if err := wr.Payment(p); err != nil {
				return err
			}
		}
		if err := wr.EndAssignment(a.End); err != nil {
			return err
		}
	}
	return wr.Close(t.End.Date)
}
