//go:build !unix

package store

import "errors"

// openWALIndexSignal is unavailable here: the store falls back to
// PRAGMA data_version (changesignal.go).
func openWALIndexSignal(string) (changeSignal, error) {
	return nil, errors.New("store: reading the WAL index is implemented for unix systems only")
}
