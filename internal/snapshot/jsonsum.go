package snapshot

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
)

// The JSON state files (snapshot.json, census-<ns>.json,
// verdicts-<ns>.json, last-sweep.json) end with a member holding the
// CRC-32C of the file's bytes before it, so a flipped bit (disk, a cut
// copy, an editor) is refused instead of read: a flipped digit of a JSON
// number still parses. The member is the document's last, in the file
// itself, so one rename publishes the data and its sum together (a
// sidecar could be seen with the other half of a pair), and the file
// stays JSON for people and jq.
const (
	// sumKey is the member's name; the file ends with sumKey, its value
	// (8 hex digits) and `"}` and a newline.
	sumKey = `"crc32c":"`
	// sumTail is how many bytes of the file from sumKey on.
	sumTail = len(sumKey) + 8 + len("\"}\n")
)

// sealJSON ends the JSON object data (as json.Marshal writes it) with
// its checksum member.
func sealJSON(data []byte) []byte {
	if len(data) < 2 || data[len(data)-1] != '}' {
		panic("snapshot: sealJSON: not a JSON object")
	}
	body := data[:len(data)-1]
	out := make([]byte, 0, len(data)+1+sumTail)
	out = append(out, body...)
	if len(body) > 1 {
		out = append(out, ',')
	}
	sum := crc32.Checksum(out, castagnoli)
	out = append(out, sumKey...)
	out = fmt.Appendf(out, "%08x", sum)
	return append(out, "\"}\n"...)
}

// errSum is a state file that fails its checksum.
var errSum = errors.New("fails its checksum (the file changed since ibdoctor wrote it: damaged, or edited)")

// checkJSON checks the checksum member sealJSON wrote at the end of
// data. A file without it (an ibdoctor's before it) passes unchecked, as
// it was read before; one whose member is elsewhere (rewritten, by jq or
// an editor) does not. A single flipped bit cannot make a sealed file
// pass without being checked: in what the sum covers it fails the sum;
// in the member it leaves what the sum covers as written.
func checkJSON(data []byte) error {
	n := len(data)
	if n < sumTail+2 || string(data[n-sumTail:n-sumTail+len(sumKey)]) != sumKey {
		if bytes.Contains(data, []byte(`"crc32c"`)) && hasSumMember(data) {
			return fmt.Errorf("%w: its checksum member is not where ibdoctor writes it (the file was rewritten)", errSum)
		}
		return nil
	}
	covered := data[:n-sumTail]
	var sum [4]byte
	if _, err := hex.Decode(sum[:], data[n-sumTail+len(sumKey):n-3]); err != nil || string(data[n-3:]) != "\"}\n" {
		return errSum
	}
	if last := covered[len(covered)-1]; last != ',' && last != '{' {
		return errSum
	}
	if crc32.Checksum(covered, castagnoli) != uint32(sum[0])<<24|uint32(sum[1])<<16|uint32(sum[2])<<8|uint32(sum[3]) {
		return errSum
	}
	return nil
}

// hasSumMember says whether the JSON object data has a crc32c member
// (not only the word in a value).
func hasSumMember(data []byte) bool {
	var m struct {
		Sum json.RawMessage `json:"crc32c"`
	}
	return json.Unmarshal(data, &m) == nil && m.Sum != nil
}
