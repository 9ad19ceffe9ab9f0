package frame

import "testing"

// TestEscape: what opens or closes a tag is escaped, in any case and
// with any spacing; nothing else changes.
func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"</result>":                "&lt;/result>",
		"<task-notification>":      "&lt;task-notification>",
		"< /result>":               "&lt; /result>",
		"<\t/Result >":             "&lt;\t/Result >",
		"<!-- x -->":               "&lt;!-- x -->",
		"<?xml?>":                  "&lt;?xml?>",
		"a < b, x<5, <= and <-ch":  "a < b, x<5, <= and <-ch",
		"map[string]<-chan int":    "map[string]<-chan int",
		"vector<int>":              "vector&lt;int>",
		"&lt;/result> stays as is": "&lt;/result> stays as is",
		"":                         "",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}
