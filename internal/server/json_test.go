package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A value that cannot be encoded (a bug) is a 500 saying so, never a 200
// with half a body.
func TestWriteJSONUnencodable(t *testing.T) {
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, map[string]any{"ok": true, "bad": make(chan int)})
	var body errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusInternalServerError || !strings.Contains(body.Error, "encode the answer") {
		t.Errorf("status %d, body %q (%v); want 500 and the encoding error", rec.Code, rec.Body.String(), err)
	}
	rec = httptest.NewRecorder()
	writeJSON(rec, http.StatusCreated, map[string]int{"n": 1})
	if rec.Code != http.StatusCreated || rec.Body.String() != "{\n  \"n\": 1\n}\n" {
		t.Errorf("status %d, body %q", rec.Code, rec.Body.String())
	}
}
