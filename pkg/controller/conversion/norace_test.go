//go:build !race

package conversion_test

// raceDetector is true in a build with -race, whose instrumentation
// allocates beside the code measured.
const raceDetector = false
