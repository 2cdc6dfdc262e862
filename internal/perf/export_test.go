package perf

import "github.com/ibdoctor/ibdoctor/checks"

type checksReading = checks.PortReading
