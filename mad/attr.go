package mad

import "fmt"

// checkBits returns a *FieldError when v does not fit in n bits: the
// encoders refuse values they would otherwise silently truncate.
func checkBits(field string, v uint64, n int) error {
	if n < 64 && v>>uint(n) != 0 {
		return &FieldError{Field: field, Msg: fmt.Sprintf("value %d does not fit in %d bits (max %d)", v, n, uint64(1)<<uint(n)-1)}
	}
	return nil
}

// bitsCheck is one field/width pair for checkAll.
type bitsCheck struct {
	field string
	v     uint64
	n     int
}

func checkAll(cs ...bitsCheck) error {
	for _, c := range cs {
		if err := checkBits(c.field, c.v, c.n); err != nil {
			return err
		}
	}
	return nil
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
