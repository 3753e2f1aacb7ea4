//go:build race

package regbackend

// raceEnabled: the race detector allocates on its own, so the
// allocation budgets are not checked under it.
const raceEnabled = true
