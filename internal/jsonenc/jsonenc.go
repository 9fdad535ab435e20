// Package jsonenc writes the JSON of the few values that gnomon encodes on
// the path of every event, without reflection, and checks the JSON strings
// gnomon reads for what encoding/json would accept without a word.
package jsonenc

import "encoding/json"

// plain reports whether s encodes in JSON as itself between quotes:
// printable ASCII without the characters json.Marshal escapes.
func plain(s string) bool {
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
	if plain(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// AppendArray appends items as a JSON array, each element written by one;
// a nil slice is null, as json.Marshal writes it.
func AppendArray[T any](b []byte, items []T, one func([]byte, T) []byte) []byte {
	if items == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = one(b, it)
	}
	return append(b, ']')
}
