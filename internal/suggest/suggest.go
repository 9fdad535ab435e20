// Package suggest finds the known names closest to a misspelled one, for
// the "did you mean" of error messages: task names, event names, flags,
// context names. It is the one edit distance of the project.
package suggest

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// Distance is the edit distance between a and b in the optimal string
// alignment form of Damerau-Levenshtein: the fewest insertions, deletions,
// substitutions of one rune and transpositions of two adjacent runes that
// turn a into b, no substring edited twice. It compares runes as they are:
// case counts.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: the one before the previous (for transpositions), the
	// previous and the current.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// MaxSuggestions bounds what Closest returns.
const MaxSuggestions = 3

// limit is the largest distance at which a name is suggested for a word of
// n runes: a third of it, at least 1 and at most 3, so that a short word
// is not "corrected" into an unrelated short name.
func limit(n int) int {
	return max(1, min(3, n/3))
}

// Closest returns the names closest to word, best first, at most
// MaxSuggestions of them: those within a small distance of it (a third of
// its length, from 1 to 3 edits, case aside), then those it begins (a word
// of two runes or more). It returns nothing when word is one of names.
func Closest(word string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	lw := strings.ToLower(word)
	n := utf8.RuneCountInString(word)
	var found []cand
	for _, name := range names {
		if name == word {
			return nil
		}
		ln := strings.ToLower(name)
		// The distance is at least the difference of the lengths.
		if diff := utf8.RuneCountInString(name) - n; diff <= limit(n) && -diff <= limit(n) {
			if d := Distance(lw, ln); d <= limit(n) {
				found = append(found, cand{name, d})
				continue
			}
		}
		if n >= 2 && strings.HasPrefix(ln, lw) {
			found = append(found, cand{name, limit(n) + 1})
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].d != found[j].d {
			return found[i].d < found[j].d
		}
		return found[i].name < found[j].name
	})
	out := make([]string, 0, MaxSuggestions)
	for _, c := range found {
		if len(out) == MaxSuggestions {
			break
		}
		out = append(out, c.name)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Phrase is "did you mean A?" or "did you mean A or B?" for the names
// Closest found, each written by quote (nil: as they are); empty when
// there are none.
func Phrase(names []string, quote func(string) string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, s := range names {
		if quote != nil {
			s = quote(s)
		}
		q[i] = s
	}
	return "did you mean " + strings.Join(q, " or ") + "?"
}
