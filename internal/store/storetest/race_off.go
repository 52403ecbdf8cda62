//go:build !race

package storetest

// raceDetector says whether this test binary was built with -race (see
// RunWithOptions).
const raceDetector = false
