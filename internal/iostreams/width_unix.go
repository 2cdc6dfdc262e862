//go:build unix

package iostreams

import "golang.org/x/sys/unix"

// windowSize asks the terminal on fd for its width and height; 0 when fd
// is not a terminal or the terminal does not know (a fresh pty says 0x0).
func windowSize(fd uintptr) (cols, rows int) {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0
	}
	return int(ws.Col), int(ws.Row)
}
