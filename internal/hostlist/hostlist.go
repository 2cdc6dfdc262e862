// Package hostlist expands and compresses Slurm-style host lists:
// "gpu[001-064]", "gpu[001-004,010],cpu[1-3]", "rack[1-2]-gpu[01-04]".
package hostlist

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// MaxHosts bounds what one Expand may produce, so that a typo such as
// "gpu[1-99999999]" fails instead of exhausting memory.
const MaxHosts = 1 << 20

// Error is a syntax error in a host list; Part is the offending item.
type Error struct {
	Part   string
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("hostlist: %q: %s", e.Part, e.Reason)
}

// Expand returns the host names a list stands for, in order (duplicates
// kept). Items are separated by commas or whitespace outside brackets.
// A bracket holds comma-separated numbers and lo-hi ranges; several
// brackets in one item multiply (the first varies slowest). A range
// whose low bound has a leading zero is zero-padded to that bound's
// width ("[08-10]" gives 08 09 10); "[8-10]" is not padded.
func Expand(list string) ([]string, error) {
	items, err := split(list)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, it := range items {
		names, err := expandItem(it, MaxHosts-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	return out, nil
}

// split cuts a list at commas and whitespace outside brackets.
func split(list string) ([]string, error) {
	var items []string
	depth, start := 0, 0
	flush := func(end int) {
		if s := strings.TrimSpace(list[start:end]); s != "" {
			items = append(items, s)
		}
	}
	for i, r := range list {
		switch {
		case r == '[':
			if depth > 0 {
				return nil, &Error{Part: itemAround(list, i), Reason: "brackets cannot nest"}
			}
			depth++
		case r == ']':
			if depth == 0 {
				return nil, &Error{Part: itemAround(list, i), Reason: "']' without '['"}
			}
			depth--
		case depth == 0 && (r == ',' || unicode.IsSpace(r)):
			flush(i)
			start = i + 1
		}
	}
	if depth != 0 {
		return nil, &Error{Part: strings.TrimSpace(list[start:]), Reason: "'[' is not closed"}
	}
	flush(len(list))
	return items, nil
}

// itemAround returns the list item containing byte i, for messages.
func itemAround(list string, i int) string {
	lo := strings.LastIndexAny(list[:i], ", \t\n") + 1
	hi := strings.IndexAny(list[i:], ", \t\n")
	if hi < 0 {
		hi = len(list)
	} else {
		hi += i
	}
	return list[lo:hi]
}

// expandItem expands one item such as "rack[1-2]-gpu[01-04]".
func expandItem(item string, budget int) ([]string, error) {
	names := []string{""}
	rest := item
	for rest != "" {
		i := strings.IndexByte(rest, '[')
		if i < 0 {
			for k := range names {
				names[k] += rest
			}
			break
		}
		lit := rest[:i]
		j := strings.IndexByte(rest, ']')
		set, err := expandBracket(item, rest[i+1:j])
		if err != nil {
			return nil, err
		}
		if len(names)*len(set) > budget {
			return nil, &Error{Part: item, Reason: fmt.Sprintf("expands to more than %d names", MaxHosts)}
		}
		next := make([]string, 0, len(names)*len(set))
		for _, n := range names {
			for _, s := range set {
				next = append(next, n+lit+s)
			}
		}
		names = next
		rest = rest[j+1:]
	}
	return names, nil
}

// expandBracket expands the inside of one bracket: "001-004,010".
func expandBracket(item, inner string) ([]string, error) {
	if strings.TrimSpace(inner) == "" {
		return nil, &Error{Part: item, Reason: "empty brackets"}
	}
	var out []string
	for _, r := range strings.Split(inner, ",") {
		r = strings.TrimSpace(r)
		lo, hi, isRange := strings.Cut(r, "-")
		lo, hi = strings.TrimSpace(lo), strings.TrimSpace(hi)
		if !isDigits(lo) || isRange && !isDigits(hi) {
			return nil, &Error{Part: item, Reason: fmt.Sprintf("%q is not a number or a lo-hi range of numbers", r)}
		}
		a, err1 := strconv.ParseUint(lo, 10, 63)
		if !isRange {
			if err1 != nil {
				return nil, &Error{Part: item, Reason: fmt.Sprintf("%q is too large", r)}
			}
			out = append(out, lo)
			continue
		}
		b, err2 := strconv.ParseUint(hi, 10, 63)
		if err1 != nil || err2 != nil {
			return nil, &Error{Part: item, Reason: fmt.Sprintf("%q is too large", r)}
		}
		if a > b {
			return nil, &Error{Part: item, Reason: fmt.Sprintf("range %q runs backwards", r)}
		}
		if b-a >= MaxHosts {
			return nil, &Error{Part: item, Reason: fmt.Sprintf("range %q has more than %d numbers", r, MaxHosts)}
		}
		width := 0
		if len(lo) > 1 && lo[0] == '0' {
			width = len(lo)
		}
		for n := a; n <= b; n++ {
			out = append(out, fmt.Sprintf("%0*d", width, n))
		}
	}
	return out, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

type groupKey struct {
	prefix, suffix string
	width          int // 0: unpadded numbers
}

type numbered struct {
	k groupKey
	n uint64
}

// Compress returns a short list that Expands to the distinct names given,
// sorted: names that differ only in their last number share a bracket
// ("gpu001", "gpu002", "gpu003", "gpu010" → "gpu[001-003,010]"). Zero
// padding is kept; names without a number are listed as they are.
func Compress(names []string) string {
	var plain []string
	seen := make(map[string]bool, len(names))
	var entries []numbered
	padded := make(map[groupKey]bool)
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		end := len(name)
		for end > 0 && (name[end-1] < '0' || name[end-1] > '9') {
			end--
		}
		start := end
		for start > 0 && name[start-1] >= '0' && name[start-1] <= '9' {
			start--
		}
		digits := name[start:end]
		n, err := strconv.ParseUint(digits, 10, 63)
		if digits == "" || err != nil || strings.ContainsAny(name, "[], \t\n") {
			plain = append(plain, name)
			continue
		}
		k := groupKey{prefix: name[:start], suffix: name[end:]}
		if len(digits) > 1 && digits[0] == '0' {
			k.width = len(digits)
			padded[k] = true
		}
		entries = append(entries, numbered{k, n})
	}
	// An unpadded number as wide as a padded group prints the same
	// inside it ("10" in a width-2 group): move it there.
	for i, e := range entries {
		if e.k.width != 0 {
			continue
		}
		w := len(strconv.FormatUint(e.n, 10))
		if k := (groupKey{e.k.prefix, e.k.suffix, w}); w > 1 && padded[k] {
			entries[i].k = k
		}
	}
	slices.SortFunc(entries, func(a, b numbered) int {
		return cmp.Or(cmp.Compare(a.k.prefix, b.k.prefix), cmp.Compare(a.k.suffix, b.k.suffix),
			cmp.Compare(a.k.width, b.k.width), cmp.Compare(a.n, b.n))
	})
	items := plain
	for i := 0; i < len(entries); {
		j := i
		for j < len(entries) && entries[j].k == entries[i].k {
			j++
		}
		items = append(items, group(entries[i:j]))
		i = j
	}
	slices.Sort(items)
	return strings.Join(items, ",")
}

// group prints one prefix/suffix/width group: "gpu[001-003,010]-ib", or
// the bare name when it holds one number.
func group(es []numbered) string {
	k := es[0].k
	num := func(n uint64) string { return fmt.Sprintf("%0*d", k.width, n) }
	if len(es) == 1 {
		return k.prefix + num(es[0].n) + k.suffix
	}
	var b strings.Builder
	b.WriteString(k.prefix)
	b.WriteByte('[')
	for i := 0; i < len(es); {
		j := i
		for j+1 < len(es) && es[j+1].n == es[j].n+1 {
			j++
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(num(es[i].n))
		if j > i {
			b.WriteByte('-')
			b.WriteString(num(es[j].n))
		}
		i = j + 1
	}
	b.WriteByte(']')
	b.WriteString(k.suffix)
	return b.String()
}
