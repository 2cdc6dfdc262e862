package report

import "github.com/ibdoctor/ibdoctor/checks"

// ImpactShort is the findings table's IMPACT column ("3.1% of paths,
// all-reduce 8.0x slower"), for renderings other than the terminal's.
func ImpactShort(im checks.Impact) string { return impactShort(im) }
