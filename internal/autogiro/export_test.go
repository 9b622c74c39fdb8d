package autogiro

// SetBatchRecords sets how many records an import matches at once and
// returns the function that restores it: tests run small batches so that
// a few records span several.
func SetBatchRecords(n int) (restore func()) {
	old := batchRecords.Swap(int64(n))
	return func() { batchRecords.Store(old) }
}
