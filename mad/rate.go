package mad

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// Width is a link width as PortInfo encodes it: a bit per width (1 = 1X,
// 2 = 4X, 4 = 8X, 8 = 12X, 16 = 2X). LinkWidthActive holds one bit;
// Supported and Enabled are masks.
type Width uint8

// Link widths.
const (
	Width1X  Width = 1
	Width4X  Width = 2
	Width8X  Width = 4
	Width12X Width = 8
	Width2X  Width = 16
)

var widthOrder = []Width{Width1X, Width2X, Width4X, Width8X, Width12X}

// Lanes returns the lane count of a single width, 0 for none or a mask.
func (w Width) Lanes() int {
	switch w {
	case Width1X:
		return 1
	case Width2X:
		return 2
	case Width4X:
		return 4
	case Width8X:
		return 8
	case Width12X:
		return 12
	}
	return 0
}

// Max returns the widest width in a mask (0 if none).
func (w Width) Max() Width {
	for i := len(widthOrder) - 1; i >= 0; i-- {
		if w&widthOrder[i] != 0 {
			return widthOrder[i]
		}
	}
	return 0
}

// Has reports whether mask w includes width x.
func (w Width) Has(x Width) bool { return w&x != 0 }

// String prints "4X" for one width, "1X,4X" for a mask, "none" for 0.
func (w Width) String() string {
	if w == 0 {
		return "none"
	}
	var parts []string
	for _, x := range widthOrder {
		if w&x != 0 {
			parts = append(parts, fmt.Sprintf("%dX", x.Lanes()))
		}
	}
	if rest := w &^ (Width1X | Width2X | Width4X | Width8X | Width12X); rest != 0 {
		parts = append(parts, fmt.Sprintf("0x%02x", uint8(rest)))
	}
	return strings.Join(parts, ",")
}

// Speed is a lane speed generation, one bit per generation, merging
// PortInfo's LinkSpeed (SDR/DDR/QDR), LinkSpeedExt (FDR..NDR) and
// LinkSpeedExt2 (XDR) fields and Mellanox's FDR10 into one mask.
type Speed uint16

// Lane speeds.
const (
	SpeedSDR Speed = 1 << iota
	SpeedDDR
	SpeedQDR
	SpeedFDR10
	SpeedFDR
	SpeedEDR
	SpeedHDR
	SpeedNDR
	SpeedXDR
)

var speedNames = [...]string{"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR"}

// signalling rate per lane in Gb/s (what libibmad prints) and data rate per
// lane after encoding overhead (what sysfs rate and bandwidth use). FDR is
// written as its 64b/66b quotient: a rounded 13.64 made 4X FDR 54.56 Gb/s.
var speedSignal = [...]float64{2.5, 5, 10, 10.3125, 14.0625, 25.78125, 53.125, 106.25, 212.5}
var speedData = [...]float64{2, 4, 8, 10, 14.0625 * 64 / 66, 25, 50, 100, 200}

func (s Speed) index() int {
	if s == 0 || s&(s-1) != 0 {
		return -1
	}
	i := bits.TrailingZeros16(uint16(s))
	if i >= len(speedNames) {
		return -1
	}
	return i
}

// Max returns the fastest speed in a mask (0 if none).
func (s Speed) Max() Speed {
	if s == 0 {
		return 0
	}
	return Speed(1) << (15 - bits.LeadingZeros16(uint16(s)))
}

// Has reports whether mask s includes speed x.
func (s Speed) Has(x Speed) bool { return s&x != 0 }

// SignalGbps is the per-lane signalling rate of a single speed ("106.25 Gb/s"
// for NDR); 0 for a mask or none.
func (s Speed) SignalGbps() float64 {
	if i := s.index(); i >= 0 {
		return speedSignal[i]
	}
	return 0
}

// DataGbps is the per-lane data rate of a single speed (100 for NDR).
func (s Speed) DataGbps() float64 {
	if i := s.index(); i >= 0 {
		return speedData[i]
	}
	return 0
}

// String prints "NDR" for one speed, "EDR,HDR,NDR" for a mask, "none" for 0.
func (s Speed) String() string {
	if s == 0 {
		return "none"
	}
	var parts []string
	for i, n := range speedNames {
		if s&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if rest := s >> len(speedNames); rest != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", uint16(rest)<<len(speedNames)))
	}
	return strings.Join(parts, ",")
}

// ParseSpeed parses a speed name such as "NDR" (case-insensitive).
func ParseSpeed(s string) (Speed, error) {
	sp, err := parseSpeed(s)
	if err != nil {
		return 0, fmt.Errorf("mad: %w", err)
	}
	return sp, nil
}

// parseSpeed is ParseSpeed without the package's prefix, for ParseRate,
// whose error has its own.
func parseSpeed(s string) (Speed, error) {
	for i, n := range speedNames {
		if strings.EqualFold(s, n) {
			return Speed(1) << i, nil
		}
	}
	return 0, fmt.Errorf("unknown link speed %q (want one of %s)", s, strings.Join(speedNames[:], ", "))
}

// Rate is an active link rate: one width and one speed.
type Rate struct {
	Width Width
	Speed Speed
}

// Gbps is the data rate of the link in Gb/s (4X NDR = 400).
func (r Rate) Gbps() float64 { return float64(r.Width.Lanes()) * r.Speed.DataGbps() }

// BytesPerSecond is the data rate in bytes per second.
func (r Rate) BytesPerSecond() float64 { return r.Gbps() * 1e9 / 8 }

// String prints the rate the way operators say it: "4X NDR".
func (r Rate) String() string {
	if i, j := slices.Index(widthOrder, r.Width), r.Speed.index(); i >= 0 && j >= 0 && j < len(speedNames) {
		return rateNames[i][j]
	}
	return r.Width.String() + " " + r.Speed.String()
}

// rateNames names each rate of one width and one speed once: a live view
// (top) names every watched port's rate at each refresh, and each name
// made anew was a string a port held (49,152 ports on FatTree8k).
var rateNames = func() (t [5][len(speedNames)]string) {
	for i, w := range widthOrder {
		for j := range speedNames {
			t[i][j] = w.String() + " " + Speed(1<<j).String()
		}
	}
	return t
}()

// Less reports whether r carries less data than o.
func (r Rate) Less(o Rate) bool { return r.Gbps() < o.Gbps() }

// ParseRate parses "4xNDR", "4X NDR", "4x-ndr" or "NDR" (width 4X).
func ParseRate(s string) (Rate, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.NewReplacer(" ", "", "-", "", "_", "").Replace(t)
	w := Width4X
	if i := strings.IndexByte(t, 'X'); i > 0 {
		var lanes int
		if _, err := fmt.Sscanf(t[:i], "%d", &lanes); err != nil {
			return Rate{}, fmt.Errorf("mad: rate %q: bad width", s)
		}
		switch lanes {
		case 1:
			w = Width1X
		case 2:
			w = Width2X
		case 4:
			w = Width4X
		case 8:
			w = Width8X
		case 12:
			w = Width12X
		default:
			return Rate{}, fmt.Errorf("mad: rate %q: width %dX does not exist (1X, 2X, 4X, 8X, 12X)", s, lanes)
		}
		t = t[i+1:]
	}
	sp, err := parseSpeed(t)
	if err != nil {
		return Rate{}, fmt.Errorf("mad: rate %q: %w", s, err)
	}
	return Rate{Width: w, Speed: sp}, nil
}
