package acp

import (
	"fmt"
	"net/url"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// message builds the user message of a prompt. Text is kept as written;
// a resource link becomes a line naming it (a file:// link by its path,
// which the agent's tools can read); an embedded text resource is quoted in
// a <context> element with its URI; an image travels as an image when the
// model may take one. Audio is refused: initialize does not offer it.
func message(blocks []acpsdk.ContentBlock, images bool) (Message, error) {
	var m Message
	var parts []string
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			parts = append(parts, "Referenced: "+linkText(b.ResourceLink.Uri, b.ResourceLink.Name))
		case b.Resource != nil:
			r := b.Resource.Resource
			switch {
			case r.TextResourceContents != nil:
				parts = append(parts, fmt.Sprintf("<context ref=%q>\n%s\n</context>", r.TextResourceContents.Uri, r.TextResourceContents.Text))
			case r.BlobResourceContents != nil:
				parts = append(parts, "Referenced (binary, not included): "+linkText(r.BlobResourceContents.Uri, ""))
			}
		case b.Image != nil && images:
			m.Images = append(m.Images, Image{MediaType: b.Image.MimeType, Data: b.Image.Data})
		case b.Image != nil:
			return Message{}, fmt.Errorf("prompt block %d is an image, which this model does not take", i)
		case b.Audio != nil:
			return Message{}, fmt.Errorf("prompt block %d is audio, which cadre does not take", i)
		default:
			return Message{}, fmt.Errorf("prompt block %d has no content cadre knows", i)
		}
	}
	m.Text = strings.Join(parts, "\n\n")
	if strings.TrimSpace(m.Text) == "" && len(m.Images) == 0 {
		return Message{}, fmt.Errorf("the prompt is empty")
	}
	return m, nil
}

func linkText(uri, name string) string {
	if u, err := url.Parse(uri); err == nil && u.Scheme == "file" && u.Path != "" {
		return u.Path
	}
	if name != "" && name != uri {
		return name + " <" + uri + ">"
	}
	return uri
}
