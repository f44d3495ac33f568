//go:build race

package gitstate_test

const raceEnabled = true
