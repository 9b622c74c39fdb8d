package egress

import "net/netip"

// IsPublic reports whether a is a public unicast address, for the address
// classes' table test in egress_test.
func IsPublic(a netip.Addr) bool { return classify(a) == public }
