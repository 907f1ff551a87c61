package mcp

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/fluxgit/fluxgit/internal/wire"
)

// Content blocks a provider adds to a tool result or a prompt message are
// rendered here for the protocol version being answered. Text, image and
// embedded resource blocks exist in every version; audio arrived with
// 2025-03-26 and resource_link with 2025-06-18 (the MCP schema of each
// version). A client that negotiated an older version must not receive a
// type it does not know, so it gets a text note saying what was left out
// and how to get it.

// audio reports whether the generation knows audio content blocks.
func (g generation) audio() bool { return g.modern || g.version >= V20250326 }

// resourceLinks reports whether the generation knows resource_link blocks.
func (g generation) resourceLinks() bool { return g.modern || g.version >= V20250618 }

// providerContent checks a provider's extra content blocks (the wire
// contract, which a provider may break) and renders them for g.
func providerContent(g generation, what string, items []wire.Content) ([]map[string]any, error) {
	if _, err := wire.CheckContent(what, items); err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(items))
	for _, c := range items {
		out = append(out, contentBlock(g, c))
	}
	return out, nil
}

// contentBlock renders one checked block as its MCP JSON for g.
func contentBlock(g generation, c wire.Content) map[string]any {
	switch c.Type {
	case wire.ContentImage:
		return map[string]any{"type": c.Type, "data": c.Data, "mimeType": c.MimeType}
	case wire.ContentAudio:
		if !g.audio() {
			n := base64.StdEncoding.DecodedLen(len(c.Data))
			return textBlock(fmt.Sprintf("[%s audio of about %d bytes left out: MCP %s, the protocol version this client negotiated, has no audio content; a client on 2025-03-26 or later receives it]",
				c.MimeType, n, g.version))
		}
		return map[string]any{"type": c.Type, "data": c.Data, "mimeType": c.MimeType}
	case wire.ContentResource:
		r := map[string]any{"uri": c.Resource.URI, "mimeType": c.Resource.MimeType}
		if c.Resource.Blob != nil {
			r["blob"] = c.Resource.Blob // []byte marshals as base64
		} else {
			r["text"] = c.Resource.Text
		}
		return map[string]any{"type": c.Type, "resource": r}
	case wire.ContentResourceLink:
		if !g.resourceLinks() {
			return textBlock(linkNote(g, c))
		}
		b := map[string]any{"type": c.Type, "uri": c.URI, "name": c.Name}
		for k, v := range map[string]string{"title": c.Title, "description": c.Description, "mimeType": c.MimeType} {
			if v != "" {
				b[k] = v
			}
		}
		if c.Size > 0 {
			b["size"] = c.Size
		}
		return b
	}
	return textBlock(c.Text)
}

func textBlock(text string) map[string]any {
	return map[string]any{"type": wire.ContentText, "text": text}
}

// linkNote describes a resource link in text for a client whose version
// has no resource_link blocks, so the model still learns the URI.
func linkNote(g generation, c wire.Content) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Resource link: %s <%s>", c.Name, c.URI)
	var about []string
	for _, s := range []string{c.Title, c.MimeType} {
		if s != "" {
			about = append(about, s)
		}
	}
	if c.Size > 0 {
		about = append(about, fmt.Sprintf("%d bytes", c.Size))
	}
	if len(about) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(about, ", "))
	}
	if c.Description != "" {
		b.WriteString(": " + c.Description)
	}
	if !strings.HasSuffix(b.String(), ".") {
		b.WriteByte('.')
	}
	fmt.Fprintf(&b, " [Sent as text: MCP %s, the protocol version this client negotiated, has no resource_link content; read the URI with resources/read if this server lists it.]", g.version)
	return b.String()
}
