package fabric

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// NodeNameMap maps node GUIDs to operator names, as infiniband-diags'
// --node-name-map file does.
type NodeNameMap map[uint64]string

// ParseNodeNameMap reads a node-name map: one `0xGUID "name"` per line;
// '#' starts a comment; blank lines are skipped. The GUID may be written
// in any C number form (0x hex, decimal, leading-0 octal). The name is the
// text up to the next double quote or '#' (quotes optional; an unquoted
// name is trimmed). As in infiniband-diags the first entry for a GUID
// wins. A line without a GUID is an error naming the line.
func ParseNodeNameMap(r io.Reader) (NodeNameMap, error) {
	m := make(NodeNameMap)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' {
			continue
		}
		end := strings.IndexFunc(t, func(r rune) bool { return r == ' ' || r == '\t' || r == '#' })
		if end < 0 {
			end = len(t)
		}
		guid, err := strconv.ParseUint(t[:end], 0, 64)
		if err != nil {
			return nil, &lineError{format: "node-name map", line: line, text: sc.Text(), err: fmt.Errorf("%q is not a GUID (want 0x followed by hex digits)", t[:end])}
		}
		rest := strings.TrimLeft(t[end:], " \t")
		quotedName := strings.HasPrefix(rest, `"`)
		rest = strings.TrimPrefix(rest, `"`)
		if i := strings.IndexAny(rest, "\"#"); i >= 0 {
			rest = rest[:i]
		}
		if !quotedName {
			rest = strings.TrimSpace(rest)
		}
		if rest == "" {
			continue // infiniband-diags keeps no name for such a line
		}
		if _, dup := m[guid]; !dup {
			m[guid] = rest
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fabric: reading node-name map: %w", err)
	}
	return m, nil
}

// Name returns n's mapped name, or its description when it has none.
func (m NodeNameMap) Name(n *Node) string {
	if name, ok := m[n.GUID]; ok {
		return name
	}
	return n.Description
}
