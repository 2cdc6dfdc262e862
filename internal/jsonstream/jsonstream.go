// Package jsonstream writes one JSON object field by field, an array's
// elements one at a time, laid out byte for byte as encoding/json's
// Encoder lays out the whole object: a big document (a fabric with its
// forwarding tables, every link of a 49k-node fabric) is never whole in
// memory.
package jsonstream

import (
	"bytes"
	"encoding/json"
	"io"
)

// Options are the Encoder settings the whole document would be written
// with.
type Options struct {
	// Indent is SetIndent("", "  ").
	Indent bool
	// EscapeHTML is SetEscapeHTML(true), the Encoder's default.
	EscapeHTML bool
}

// Writer writes one object. The first error (encoding or writing) stops
// it and is returned by Close.
type Writer struct {
	w      io.Writer
	indent bool
	buf    bytes.Buffer
	elem   *json.Encoder // at the depth of an array's elements
	field  *json.Encoder // at the depth of the object's fields
	n      int           // fields written
	err    error
}

// New starts an object on w.
func New(w io.Writer, o Options) *Writer {
	jw := &Writer{w: w, indent: o.Indent}
	jw.elem = json.NewEncoder(&jw.buf)
	jw.field = json.NewEncoder(&jw.buf)
	jw.elem.SetEscapeHTML(o.EscapeHTML)
	jw.field.SetEscapeHTML(o.EscapeHTML)
	if o.Indent {
		jw.elem.SetIndent("    ", "  ")
		jw.field.SetIndent("  ", "  ")
	}
	jw.write("{")
	return jw
}

func (jw *Writer) write(s string) {
	if jw.err == nil {
		_, jw.err = io.WriteString(jw.w, s)
	}
}

// value encodes v with e and writes it without Encode's newline.
func (jw *Writer) value(e *json.Encoder, v any) {
	if jw.err != nil {
		return
	}
	jw.buf.Reset()
	if jw.err = e.Encode(v); jw.err != nil {
		return
	}
	b := jw.buf.Bytes()
	_, jw.err = jw.w.Write(b[:len(b)-1])
}

// name starts field k.
func (jw *Writer) name(k string) {
	if jw.n > 0 {
		jw.write(",")
	}
	jw.n++
	if jw.indent {
		jw.write("\n  ")
	}
	jw.value(jw.field, k)
	if jw.indent {
		jw.write(": ")
	} else {
		jw.write(":")
	}
}

// Field writes field k with value v, encoded whole.
func (jw *Writer) Field(k string, v any) {
	jw.name(k)
	jw.value(jw.field, v)
}

// Array writes field k as an array of n elements, element i made by
// elem(i) when it is written.
func (jw *Writer) Array(k string, n int, elem func(i int) any) {
	jw.name(k)
	jw.write("[")
	for i := 0; i < n && jw.err == nil; i++ {
		if i > 0 {
			jw.write(",")
		}
		if jw.indent {
			jw.write("\n    ")
		}
		jw.value(jw.elem, elem(i))
	}
	if n > 0 && jw.indent {
		jw.write("\n  ")
	}
	jw.write("]")
}

// Close ends the object and the line, as Encode does, and returns the
// first error.
func (jw *Writer) Close() error {
	if jw.indent && jw.n > 0 {
		jw.write("\n")
	}
	jw.write("}\n")
	return jw.err
}
