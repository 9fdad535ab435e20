package periods

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gnomon-sched/gnomon/internal/jsonenc"
)

// jval is a JSON value read with the offset it starts at, so that every
// problem found in it can name its line. Objects keep their members in
// order; a repeated key is an error of the reader.
type jval struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	off  int
	str  string // a string's value, a number's text
	// lossy says what is wrong with a string's value that the decoder
	// reads without a word (a NUL, half a surrogate pair), or "".
	lossy string
	b     bool
	obj   []jmember
	arr   []*jval
}

type jmember struct {
	key string
	off int
	val *jval
}

func (v *jval) kindName() string {
	switch v.kind {
	case 'o':
		return "an object"
	case 'a':
		return "an array"
	case 's':
		return "a string"
	case 'n':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "null"
}

// maxDepth bounds the nesting of a tree file; the shape needs four.
const maxDepth = 32

// jsonError is a syntax error at an offset.
type jsonError struct {
	off int
	msg string
}

func (e *jsonError) Error() string { return e.msg }

type jreader struct {
	data []byte
	dec  *json.Decoder
}

// readJSON reads one JSON value, the whole of data.
func readJSON(data []byte) (*jval, error) {
	r := &jreader{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	r.dec.UseNumber()
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	off := r.start()
	if _, err := r.dec.Token(); err != io.EOF {
		return nil, &jsonError{off: off, msg: "unexpected data after the top-level value"}
	}
	return v, nil
}

// start returns the offset of the next token: the decoder's position past
// blanks and separators.
func (r *jreader) start() int {
	off := int(r.dec.InputOffset())
	for off < len(r.data) {
		switch r.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

func (r *jreader) token() (json.Token, int, error) {
	off := r.start()
	t, err := r.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, int(se.Offset), &jsonError{off: int(se.Offset), msg: "invalid JSON: " + se.Error()}
		case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, len(r.data), &jsonError{off: len(r.data), msg: "invalid JSON: unexpected end of input"}
		}
		return nil, off, &jsonError{off: off, msg: "invalid JSON: " + err.Error()}
	}
	return t, off, nil
}

func (r *jreader) value(depth int) (*jval, error) {
	t, off, err := r.token()
	if err != nil {
		return nil, err
	}
	return r.finish(t, off, depth)
}

func (r *jreader) finish(t json.Token, off, depth int) (*jval, error) {
	switch t := t.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return nil, &jsonError{off: off, msg: fmt.Sprintf("JSON nested deeper than %d levels", maxDepth)}
		}
		switch t {
		case '{':
			v := &jval{kind: 'o', off: off}
			seen := map[string]bool{}
			for {
				t, koff, err := r.token()
				if err != nil {
					return nil, err
				}
				if t == json.Delim('}') {
					return v, nil
				}
				key, _ := t.(string) // the decoder allows only strings here
				if seen[key] {
					return nil, &jsonError{off: koff, msg: fmt.Sprintf("duplicate key %q", key)}
				}
				seen[key] = true
				val, err := r.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.obj = append(v.obj, jmember{key: key, off: koff, val: val})
			}
		case '[':
			v := &jval{kind: 'a', off: off}
			for {
				t, eoff, err := r.token()
				if err != nil {
					return nil, err
				}
				if t == json.Delim(']') {
					return v, nil
				}
				e, err := r.finish(t, eoff, depth+1)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, e)
			}
		}
		return nil, &jsonError{off: off, msg: fmt.Sprintf("invalid JSON: unexpected %q", t)}
	case string:
		return &jval{kind: 's', off: off, str: t, lossy: jsonenc.CheckString(r.data[off:r.dec.InputOffset()])}, nil
	case json.Number:
		return &jval{kind: 'n', off: off, str: string(t)}, nil
	case bool:
		return &jval{kind: 'b', off: off, b: t}, nil
	case nil:
		return &jval{kind: 'z', off: off}, nil
	}
	return nil, &jsonError{off: off, msg: fmt.Sprintf("invalid JSON: unexpected %v", t)}
}
