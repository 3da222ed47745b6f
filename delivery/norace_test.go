//go:build !race

package delivery_test

const raceEnabled = false
