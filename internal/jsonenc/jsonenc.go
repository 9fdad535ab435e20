// Package jsonenc writes the JSON of the few values that gnomon encodes on
// the path of every event, without reflection.
package jsonenc

import "encoding/json"

// Plain reports whether s encodes in JSON as itself between quotes:
// printable ASCII without the characters json.Marshal escapes.
func Plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// AppendString appends s as a JSON string, as json.Marshal writes it.
func AppendString(b []byte, s string) []byte {
	if Plain(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}
