package badinput

// Value is one bad value of an input and the words every entry point's
// refusal must contain.
type Value struct {
	// Name says what is wrong with the value, as a test name.
	Name string
	// Value is the bad value as an operator would give it.
	Value string
	// Want is a part of the message every entry point gives for it.
	Want string
}

// MACs are MAC addresses that cannot be a machine's identity: not six hex
// pairs, broadcast, multicast or all zero.
func MACs() []Value {
	return []Value{
		{"the broadcast address", "ff:ff:ff:ff:ff:ff", "broadcast"},
		{"the all-zero address", "00:00:00:00:00:00", "all zero"},
		{"a multicast address", "01:00:5e:00:00:01", "multicast"},
		{"a multicast address in upper case with dashes", "33-33-00-00-00-01", "multicast"},
		{"five pairs", "aa:bb:cc:dd:ee", "six hex pairs"},
		{"a non-hex digit", "aa:bb:cc:dd:ee:gg", "six hex pairs"},
	}
}

// TTLs are window TTLs outside the bounds, as given on a command line or
// in a request: each refusal states the bounds.
func TTLs() []Value {
	const rule = "from 1s to 168h (a week)"
	return []Value{
		{"zero", "0s", rule},
		{"zero seconds", "0", rule},
		{"negative", "-1h", rule},
		{"under a second", "500ms", rule},
		{"ten years", "87600h", rule},
		{"a week and an hour", "169h", rule},
	}
}
