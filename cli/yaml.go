package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// writeYAML prints v as YAML: the fields of its JSON encoding, in the same
// order and with the same names, so that -o yaml and -o json print the
// same answer. It is a small emitter of the YAML that JSON maps onto
// (block mappings and sequences, flow [] and {} when empty); a string is
// written plain when YAML reads it back as that same string, else
// double-quoted with JSON's escapes, which YAML's double-quoted style
// shares.
func writeYAML(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	n, err := decodeOrdered(json.NewDecoder(bytes.NewReader(b)))
	if err != nil {
		return err
	}
	var out strings.Builder
	emitYAML(&out, n, 0)
	_, err = io.WriteString(w, out.String())
	return err
}

// yamlNode is a JSON value with its object keys in order: an object
// (keys, vals), an array (vals), or a scalar written as YAML already.
type yamlNode struct {
	kind   byte // '{', '[' or 's'
	scalar string
	keys   []string
	vals   []*yamlNode
}

// decodeOrdered reads one JSON value from d.
func decodeOrdered(d *json.Decoder) (*yamlNode, error) {
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &yamlNode{kind: byte(t)}
		for d.More() {
			if t == '{' {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := decodeOrdered(d)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := d.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &yamlNode{kind: 's', scalar: yamlString(t)}, nil
	case json.Number:
		return &yamlNode{kind: 's', scalar: t.String()}, nil
	case bool:
		return &yamlNode{kind: 's', scalar: fmt.Sprint(t)}, nil
	case nil:
		return &yamlNode{kind: 's', scalar: "null"}, nil
	}
	return nil, fmt.Errorf("yaml: unexpected JSON token %v", tok)
}

// emitYAML writes n at an indentation of indent spaces; a collection
// starts on a line of its own.
func emitYAML(b *strings.Builder, n *yamlNode, indent int) {
	pad := strings.Repeat(" ", indent)
	switch {
	case n.kind == 's':
		b.WriteString(pad + n.scalar + "\n")
	case len(n.vals) == 0 && n.kind == '{':
		b.WriteString(pad + "{}\n")
	case len(n.vals) == 0:
		b.WriteString(pad + "[]\n")
	case n.kind == '{':
		for i, k := range n.keys {
			b.WriteString(pad + yamlString(k) + ":")
			emitChild(b, n.vals[i], indent+2, true)
		}
	default:
		for _, v := range n.vals {
			b.WriteString(pad + "-")
			emitChild(b, v, indent+2, false)
		}
	}
}

// emitChild writes a value after "key:" or "-": a scalar or an empty
// collection on the same line; a mapping under a key, or any collection
// in a sequence, on the next lines (a sequence's mapping begins on the
// dash's line).
func emitChild(b *strings.Builder, v *yamlNode, indent int, inMapping bool) {
	if v.kind == 's' || len(v.vals) == 0 {
		b.WriteString(" ")
		emitYAML(b, v, 0)
		return
	}
	if !inMapping {
		// "- key: value" with the other keys under it, or "- - item".
		var sub strings.Builder
		emitYAML(&sub, v, indent)
		b.WriteString(" " + strings.TrimPrefix(sub.String(), strings.Repeat(" ", indent)))
		return
	}
	b.WriteString("\n")
	if v.kind == '[' {
		indent -= 2 // a sequence under a key sits at the key's column
	}
	emitYAML(b, v, indent)
}

// plainYAML matches the strings written without quotes: a letter, then
// letters, digits and _ . / - (no space, colon, # or other indicator).
var plainYAML = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_./-]*$`)

// yamlWords are plain words a YAML reader takes for something else than a
// string (YAML 1.1's booleans and nulls, 1.2's special floats).
var yamlWords = map[string]bool{
	"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true, "true": true, "false": true,
	"null": true, "nan": true, "inf": true,
}

// yamlString writes s as a YAML scalar: plain when it reads back as the
// same string, else double-quoted with JSON's escapes.
func yamlString(s string) string {
	if plainYAML.MatchString(s) && !yamlWords[strings.ToLower(s)] {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
