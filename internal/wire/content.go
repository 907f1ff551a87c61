package wire

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Content types a provider may put in a tool result or a prompt message.
// They are the MCP content block types; the host renders each for the
// protocol version it is answering.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResource     = "resource"
	ContentResourceLink = "resource_link"
)

// MaxContentBytes bounds the content a provider may attach to one tool
// result or one rendered prompt: the sum of the decoded image and audio
// data, the embedded resources' text and blobs and the text items. Media
// travels base64-encoded, a third larger, in every MCP message that
// carries it, so the bound keeps one answer within what clients and the
// HTTP transport handle comfortably.
const MaxContentBytes = 8 << 20

// Content is one MCP content block as the provider built it. Its JSON is
// the MCP shape: {type:"image", data, mimeType}, {type:"resource",
// resource:{uri, mimeType, text|blob}}, {type:"resource_link", uri, name,
// …}.
type Content struct {
	Type string `json:"type"`
	// Text is the text of a text block.
	Text string `json:"text,omitempty"`
	// Data is the base64-encoded payload of an image or audio block.
	Data string `json:"data,omitempty"`
	// MimeType of an image, audio or resource link block.
	MimeType string `json:"mimeType,omitempty"`
	// Resource is the embedded resource of a resource block.
	Resource *Resource `json:"resource,omitempty"`
	// URI, Name, Title, Description and Size describe a resource link.
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// CheckContent validates content blocks and returns the number of bytes
// they carry (see MaxContentBytes). what names the blocks in errors, such
// as "result content"; the messages say what to fix.
func CheckContent(what string, items []Content) (int, error) {
	total := 0
	for i, c := range items {
		n, err := c.check()
		if err != nil {
			return 0, fmt.Errorf("%s[%d] (%s): %w", what, i, c.Type, err)
		}
		total += n
		if total > MaxContentBytes {
			return 0, fmt.Errorf("%s carries more than %d bytes (%d MiB) at item %d: link large media as a resource (a resource_link item) instead of embedding it", what, MaxContentBytes, MaxContentBytes>>20, i)
		}
	}
	return total, nil
}

// check validates one block and returns its size in bytes.
func (c Content) check() (int, error) {
	switch c.Type {
	case ContentText:
		if c.Text == "" {
			return 0, fmt.Errorf("a text item needs non-empty text")
		}
		return len(c.Text), nil
	case ContentImage, ContentAudio:
		if c.MimeType == "" {
			return 0, fmt.Errorf("mimeType is required, such as %s/png or %s/wav", c.Type, c.Type)
		}
		if !strings.HasPrefix(c.MimeType, c.Type+"/") {
			return 0, fmt.Errorf("mimeType %q is not an %s/* type", c.MimeType, c.Type)
		}
		if c.Data == "" {
			return 0, fmt.Errorf("data is empty: it must be the base64-encoded %s", c.Type)
		}
		// Refused before decoding, so an oversize item costs no memory.
		if len(c.Data) > base64.StdEncoding.EncodedLen(MaxContentBytes) {
			return 0, fmt.Errorf("data exceeds %d bytes once decoded", MaxContentBytes)
		}
		b, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil {
			return 0, fmt.Errorf("data is not standard base64 (RFC 4648 with padding): %w", err)
		}
		return len(b), nil
	case ContentResource:
		r := c.Resource
		switch {
		case r == nil:
			return 0, fmt.Errorf("resource is missing: an embedded resource needs {uri, mimeType, text or blob}")
		case r.URI == "":
			return 0, fmt.Errorf("resource.uri is required")
		case r.MimeType == "":
			return 0, fmt.Errorf("resource.mimeType is required, such as text/plain or application/json")
		case r.Blob != nil && r.Text != "":
			return 0, fmt.Errorf("resource %s has both text and blob; set one", r.URI)
		}
		return len(r.Text) + len(r.Blob), nil
	case ContentResourceLink:
		if c.URI == "" || c.Name == "" {
			return 0, fmt.Errorf("a resource link needs uri and name")
		}
		if c.Size < 0 {
			return 0, fmt.Errorf("size must not be negative")
		}
		return 0, nil
	case "":
		return 0, fmt.Errorf("type is missing; it is one of text, image, audio, resource, resource_link")
	}
	return 0, fmt.Errorf("unknown type; it is one of text, image, audio, resource, resource_link")
}
