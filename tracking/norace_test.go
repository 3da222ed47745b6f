//go:build !race

package tracking_test

const raceEnabled = false
