package jsonenc

import "fmt"

// CheckString returns what is wrong with the string a JSON string token
// stands for that encoding/json would decode without a word, or "": a NUL
// (\u0000), which no name, command or resource id may hold, or an escaped
// half of a surrogate pair without its other half (\ud800), which it reads
// as U+FFFD. tok must be a valid JSON string token, quotes included; a
// token without a backslash has neither, and is not read further.
func CheckString(tok []byte) string {
	if !hasBackslash(tok) {
		return ""
	}
	for i := 1; i < len(tok)-1; i++ {
		if tok[i] != '\\' {
			continue
		}
		i++
		if tok[i] != 'u' {
			continue
		}
		v := hex4(tok[i+1:])
		i += 4
		switch {
		case v == 0:
			return `holds a NUL character (\u0000)`
		case v >= 0xd800 && v < 0xdc00:
			if i+6 < len(tok)-1 && tok[i+1] == '\\' && tok[i+2] == 'u' {
				if w := hex4(tok[i+3:]); w >= 0xdc00 && w < 0xe000 {
					i += 6
					continue
				}
			}
			return fmt.Sprintf(`holds \u%04x, half of a surrogate pair without its other half: not a character`, v)
		case v >= 0xdc00 && v < 0xe000:
			return fmt.Sprintf(`holds \u%04x, half of a surrogate pair without its other half: not a character`, v)
		}
	}
	return ""
}

func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// hex4 reads the four hexadecimal digits b starts with.
func hex4(b []byte) rune {
	var v rune
	for _, c := range b[:4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			v |= rune(c - 'a' + 10)
		default:
			v |= rune(c - 'A' + 10)
		}
	}
	return v
}
