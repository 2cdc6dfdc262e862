package mad

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// NodeDescriptionSize is the length of NodeDescription's text field.
const NodeDescriptionSize = 64

// NodeDescription is the NodeDescription SMP attribute (0x0010): up to 64
// bytes of text, NUL-padded, not NUL-terminated when all 64 are used.
//
// Decoding keeps the bytes before the first NUL. Devices are not careful
// about encodings, so invalid UTF-8 is not an error on decode: every byte
// that is not part of a valid UTF-8 sequence becomes '?', which keeps the
// text within 64 bytes and makes decode→encode→decode stable.
//
// Encoding refuses text that is not valid UTF-8 or that contains a NUL
// (it would cut the text short on the wire), and truncates text longer than
// 64 bytes at the last whole rune that fits.
type NodeDescription struct {
	Text string
}

// AttributeID implements Attribute.
func (*NodeDescription) AttributeID() AttrID { return AttrNodeDescription }

// MarshalAttr implements Attribute.
func (d *NodeDescription) MarshalAttr(b []byte) error {
	if err := need("NodeDescription", b, NodeDescriptionSize); err != nil {
		return err
	}
	if !utf8.ValidString(d.Text) {
		return &FieldError{Field: "NodeDescription.Text", Msg: "is not valid UTF-8"}
	}
	if strings.IndexByte(d.Text, 0) >= 0 {
		return &FieldError{Field: "NodeDescription.Text", Msg: "contains a NUL byte"}
	}
	t := truncateRunes(d.Text, NodeDescriptionSize)
	n := copy(b[:NodeDescriptionSize], t)
	clear(b[n:NodeDescriptionSize])
	return nil
}

// UnmarshalAttr implements Attribute.
func (d *NodeDescription) UnmarshalAttr(b []byte) error {
	if err := need("NodeDescription", b, NodeDescriptionSize); err != nil {
		return err
	}
	raw := b[:NodeDescriptionSize]
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		raw = raw[:i]
	}
	if utf8.Valid(raw) {
		d.Text = string(raw)
		return nil
	}
	var sb strings.Builder
	for len(raw) > 0 {
		r, size := utf8.DecodeRune(raw)
		if r == utf8.RuneError && size == 1 {
			sb.WriteByte('?')
		} else {
			sb.Write(raw[:size])
		}
		raw = raw[size:]
	}
	d.Text = sb.String()
	return nil
}

// truncateRunes cuts s to at most n bytes without splitting a rune.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
