// Package words writes counts in English: "1 port", "3 ports", "2
// switches". One rule for every package that prints a count (report,
// checks, transport, the commands), so none says "1 destinations".
package words

import (
	"cmp"
	"strconv"
	"strings"
)

// Count is n and the noun, plural unless n is 1: "1 check", "3 checks",
// "2 switches".
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + Noun(n, noun)
}

// Noun is the noun alone, plural unless n is 1 (for "3 of 12 ports").
func Noun(n int, noun string) string {
	if n == 1 {
		return noun
	}
	if strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "sh") || strings.HasSuffix(noun, "x") || strings.HasSuffix(noun, "s") {
		return noun + "es" // switches, boxes
	}
	if strings.HasSuffix(noun, "f") {
		return strings.TrimSuffix(noun, "f") + "ves" // leaves
	}
	return noun + "s"
}

// Verb is the present-tense verb agreeing with a count of n: "1 port
// runs", "2 ports run" (verb given in the plural form; "are" for "is").
func Verb(n int, plural string) string {
	if n != 1 {
		return plural
	}
	switch plural {
	case "are":
		return "is"
	case "have":
		return "has"
	case "were":
		return "was"
	}
	if strings.HasSuffix(plural, "ch") || strings.HasSuffix(plural, "sh") || strings.HasSuffix(plural, "s") || strings.HasSuffix(plural, "x") {
		return plural + "es"
	}
	return plural + "s"
}

// Natural compares names with runs of digits as numbers (leaf2 < leaf10),
// the order an operator lists switches and hosts in; names differing only
// in leading zeros compare equal (leaf02, leaf2).
func Natural(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, _ := strconv.ParseUint(a[:min(da, 18)], 10, 64)
			nb, _ := strconv.ParseUint(b[:min(db, 18)], 10, 64)
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digits(s string) int {
	return len(s) - len(strings.TrimLeft(s, "0123456789"))
}
