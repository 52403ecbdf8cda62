//go:build !race

package storetest

// raceDetector: this test binary was built with -race (see RunWithOptions).
const raceDetector = false
