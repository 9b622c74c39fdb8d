package autogiro

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
)

// FuzzReader: every report parser, through the Reader that dispatches to
// them, never panics, and every refusal is a *ParseError naming a line of
// the input.
func FuzzReader(f *testing.F) {
	for _, name := range []string{"testdata/mandate-advice.txt", "testdata/submission.txt", "testdata/golden-submission.txt", "testdata/golden-export.txt"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(trimmed(b, "\n"))
	}
	for _, s := range []string{paymentSpec, rejected, cancellations, dateChanges, emandates} {
		f.Add([]byte(s))
		f.Add(trimmed([]byte(s), "\n"))
	}
	f.Add([]byte("0120261125AUTOGIRO9900\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(bytes.NewReader(b))
		lines := bytes.Count(b, []byte("\n")) + 1
		for n := 0; ; n++ {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a ParseError", err)
				}
				if pe.Line < 1 || pe.Line > lines+1 {
					t.Fatalf("error names line %d of %d", pe.Line, lines)
				}
				return
			}
			if rec.LineNumber() < 1 || rec.LineNumber() > lines {
				t.Fatalf("record on line %d of %d", rec.LineNumber(), lines)
			}
			if n > lines {
				t.Fatal("more records than lines")
			}
		}
	})
}
