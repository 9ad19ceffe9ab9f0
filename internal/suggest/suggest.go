package suggest

import "strings"

// maxEdits is how far a word may be from a candidate and still read as a
// typo of it; further than that the hint would mislead more than help.
const maxEdits = 2

// Closest returns the candidate word was probably meant to be, ignoring
// case: one equal to it ignoring case, else the nearest within two edits.
// A candidate is never offered for fewer letters than the edits needed,
// since then any word is that close to it. Ties go to the earliest
// candidate, so callers that hold a map should pass its keys sorted.
func Closest(word string, candidates []string) (string, bool) {
	lower := strings.ToLower(word)
	best, bestDist := "", maxEdits+1
	for _, c := range candidates {
		if strings.EqualFold(word, c) {
			return c, true
		}
		if d := distance(lower, strings.ToLower(c)); d < bestDist && d < len(c) {
			best, bestDist = c, d
		}
	}
	return best, bestDist <= maxEdits
}

// distance is the Levenshtein distance between a and b, counted in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
