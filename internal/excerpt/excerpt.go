package excerpt

import (
	"strconv"
	"unicode/utf8"
)

// Max is the most bytes of a value a message repeats.
const Max = 64

// Clip returns s when it is at most Max bytes long, and otherwise its
// first Max bytes (cut at a rune boundary) followed by "…".
func Clip(s string) string {
	return clip(s, Max)
}

// Quote returns s quoted as %q quotes it, clipped as Clip clips it; a
// clipped value says how long it was: "aaaa…" (1200 bytes).
func Quote(s string) string {
	if len(s) <= Max {
		return strconv.Quote(s)
	}
	return strconv.Quote(clip(s, Max)) + " (" + strconv.Itoa(len(s)) + " bytes)"
}

// Message clips the text of another parser's error, which may quote the
// input as it likes, to twice Max bytes.
func Message(s string) string {
	return clip(s, 2*Max)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
