package staff

// SetAdminChecked sets the hook UpdateUser runs between its last-admin
// check and its write, and returns a function that removes it.
func SetAdminChecked(f func()) (undo func()) {
	adminChecked = f
	return func() { adminChecked = nil }
}
