//go:build !race

// Package racecheck tells tests whether the race detector is on, for the
// few that exercise a race inside a dependency that the project cannot fix.
package racecheck

// Enabled reports whether the binary was built with -race.
const Enabled = false
