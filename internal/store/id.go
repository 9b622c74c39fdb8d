package store

import (
	"fmt"

	"github.com/google/uuid"
)

// NewID returns a new UUIDv7: time-ordered, so new rows append to the end
// of primary-key indexes and ids double as a stable paging order.
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		// NewV7 fails only if the system random source fails, which leaves
		// nothing sensible to do.
		panic(fmt.Sprintf("store: generate id: %v", err))
	}
	return id.String()
}

// ValidID reports whether s is a uuid in canonical textual form.
func ValidID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}
