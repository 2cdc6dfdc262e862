package words

import "time"

// Duration is a span for a reader, to the millisecond: "312ms", "4.512s".
// Below one millisecond it is "<1ms": a phase that ran that fast printed
// "0s", which beside "checks 2ms" read as "not done" (trial N6).
func Duration(d time.Duration) string {
	if d < time.Millisecond {
		return "<1ms"
	}
	return d.Round(time.Millisecond).String()
}

// Span is a span for a sentence ("grew by 500 since the sweep 3s
// before"): to the second, but as Duration below one second, where whole
// seconds would say "0s" (a gate run right after its sweep, trial C12).
func Span(d time.Duration) string {
	if d < time.Second {
		return Duration(d)
	}
	return d.Round(time.Second).String()
}
