//go:build race

package jsondoc

// raceEnabled: sync.Pool drops items at random under the race detector, so
// allocation budgets cannot be checked there.
const raceEnabled = true
