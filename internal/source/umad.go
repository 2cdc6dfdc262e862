package source

import (
	"context"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/umad"
)

// openUmad opens the kernel umad device of the selected local port.
func openUmad(_ context.Context, o Options, s *Session) (transport.Conn, error) {
	c, err := umad.Open(umad.Options{CA: o.CA, Port: o.Port, SMP: o.Need.SMP, Perf: o.Need.Perf, Vendor: o.Need.Vendor})
	if err != nil {
		return nil, err
	}
	s.Name = "umad:" + c.Local().Name
	return c, nil
}
