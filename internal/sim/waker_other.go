//go:build !linux

package sim

func newWaker() waker { return newChanWaker() }
