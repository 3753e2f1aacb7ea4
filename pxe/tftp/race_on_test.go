//go:build race

package tftp

// raceEnabled: the race detector allocates on its own, so the
// allocation budgets are not checked under it.
const raceEnabled = true
