package control

import (
	"encoding/json"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
)

func TestMessageFromUserLine(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       cadre.Message
	}{
		{"string", `{"type":"user","uuid":"u1","message":{"role":"user","content":"hello"}}`, cadre.Message{Text: "hello", UUID: "u1"}},
		{"blocks", `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}}]}}`,
			cadre.Message{Blocks: []cadre.ContentBlock{{Type: llm.BlockText, Text: "look"}, {Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBOR"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var env envelope
			if err := json.Unmarshal([]byte(tc.line), &env); err != nil {
				t.Fatal(err)
			}
			in, err := parseUser(env)
			if err != nil {
				t.Fatal(err)
			}
			got, err := message(in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}
