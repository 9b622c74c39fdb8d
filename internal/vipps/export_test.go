package vipps

import "time"

// SetClientClock replaces c's clock (token expiry) for a test.
func SetClientClock(c *Client, now func() time.Time) {
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
}
