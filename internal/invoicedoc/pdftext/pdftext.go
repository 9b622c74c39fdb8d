// Package pdftext extracts the text of the PDFs invoicedoc writes, for
// tests: it inflates every stream, reads the ToUnicode maps (glyph → code
// point) and decodes the glyph runs of the TJ operators, one run per line.
// It reads only what gopdf writes (Identity-H fonts with bfrange maps),
// not PDFs in general.
package pdftext

import (
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

var (
	streamRe = regexp.MustCompile(`(?s)stream\r?\n(.*?)\r?\nendstream`)
	rangeRe  = regexp.MustCompile(`<([0-9A-Fa-f]{4})><([0-9A-Fa-f]{4})><([0-9A-Fa-f]{4})>`)
	tjRe     = regexp.MustCompile(`(?s)\[(.*?)\]\s*TJ`)
	hexRe    = regexp.MustCompile(`<([0-9A-Fa-f]*)>`)
)

// Text returns the text runs of pdf, one per line.
func Text(pdf []byte) (string, error) {
	var streams [][]byte
	for _, m := range streamRe.FindAllSubmatch(pdf, -1) {
		data := m[1]
		if r, err := zlib.NewReader(bytes.NewReader(data)); err == nil {
			if inflated, err := io.ReadAll(r); err == nil {
				data = inflated
			}
		}
		streams = append(streams, data)
	}
	// One map for all fonts: the Go fonts share their glyph order, and a
	// disagreement is reported rather than guessed.
	glyphs := map[uint16]rune{}
	for _, s := range streams {
		if !bytes.Contains(s, []byte("beginbfrange")) {
			continue
		}
		for _, m := range rangeRe.FindAllSubmatch(s, -1) {
			lo, _ := strconv.ParseUint(string(m[1]), 16, 16)
			hi, _ := strconv.ParseUint(string(m[2]), 16, 16)
			u, _ := strconv.ParseUint(string(m[3]), 16, 32)
			for g := lo; g <= hi; g++ {
				r := rune(u + g - lo)
				if old, ok := glyphs[uint16(g)]; ok && old != r {
					return "", fmt.Errorf("pdftext: glyph %d maps to %q and %q", g, old, r)
				}
				glyphs[uint16(g)] = r
			}
		}
	}
	if len(glyphs) == 0 {
		return "", errors.New("pdftext: no ToUnicode map")
	}
	var out strings.Builder
	for _, s := range streams {
		for _, tj := range tjRe.FindAllSubmatch(s, -1) {
			for _, h := range hexRe.FindAllSubmatch(tj[1], -1) {
				raw, err := hex.DecodeString(string(h[1]))
				if err != nil {
					return "", fmt.Errorf("pdftext: glyph string %q: %w", h[1], err)
				}
				for i := 0; i+1 < len(raw); i += 2 {
					g := uint16(raw[i])<<8 | uint16(raw[i+1])
					r, ok := glyphs[g]
					if !ok {
						return "", fmt.Errorf("pdftext: glyph %d has no code point", g)
					}
					out.WriteRune(r)
				}
			}
			out.WriteByte('\n')
		}
	}
	return out.String(), nil
}
