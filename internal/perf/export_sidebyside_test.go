package perf

// PerfqueryValues parses perfquery's "Name:....value" lines (ibsim_test.go)
// for the external side-by-side tests, which drive the counters command
// and so cannot live in package perf (internal/cli imports it).
var PerfqueryValues = perfqueryValues
