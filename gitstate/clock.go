package gitstate

// Clock is a Lamport time. Every state commit carries one (TrailerClock), one
// more than the largest of its parents', and every mutable record stores the
// clock of the commit that last changed it. Sync compares these to merge two
// histories field by field without trusting wall clocks.
type Clock uint64

// Witness returns the clock that follows both c and other: a commit that has
// seen both histories must be later than either.
func (c Clock) Witness(other Clock) Clock {
	if other > c {
		return other
	}
	return c
}

// Next is the clock of a commit that follows c. It saturates instead of
// wrapping to 0, so a peer that sends a huge clock cannot make every later
// change look older than its own.
func (c Clock) Next() Clock {
	if c == ^Clock(0) {
		return c
	}
	return c + 1
}
