// Command conformanceprovider serves the fixture tools, resources and
// prompts that the server scenarios of the official MCP conformance suite
// (@modelcontextprotocol/conformance) call by name: test_simple_text,
// test://static-text, test_prompt_with_arguments and so on. It is an
// ordinary third-party provider built on plugins/sdk and registered through
// a configuration file, so the suite exercises fluxgit the way a user's
// provider would be served, image, audio and embedded-resource content
// included. Scenarios it cannot pass are listed, with the reason, in
// tests/conformance/expected-failures.yaml.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sort"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

const source = "conformance"

// toolFunc and promptFunc serve fixtures kept in files of their own
// (mrtr.go, stateless.go, ...), which register them in init.
type (
	toolFunc   func(context.Context, *sdk.Call) (*sdk.Result, error)
	promptFunc func(context.Context, *sdk.PromptRequest) (*sdk.PromptResult, error)
)

var (
	extraTools   = map[string]toolFunc{}
	extraPrompts = map[string]promptFunc{}
)

// names lists a registry's keys, sorted.
func names[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// conformance embeds a Broadcaster so test://watched-resource can be
// subscribed to (resources-subscribe, resources-unsubscribe).
type conformance struct {
	sdk.Broadcaster
	tasks keptTasks // test_tool_with_task's tasks (tasks.go)
}

func (*conformance) Describe() sdk.Description {
	d := sdk.Description{
		Tools: append([]string{
			"test_simple_text", "test_error_handling", "test_tool_with_logging", "test_tool_with_progress",
			"test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults",
			"test_elicitation_sep1330_enums", "json_schema_2020_12_tool", "test_reconnection",
			"test_image_content", "test_audio_content", "test_embedded_resource", "test_multiple_content_types",
		}, names(extraTools)...),
		Resources: []string{"test://static-text", "test://static-binary", "test://watched-resource", "test://template/{id}/data"},
		Prompts:   append([]string{"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image"}, names(extraPrompts)...),
	}
	d.Tools = append(d.Tools, taskTools...)
	return d
}

// text is a result: plain answer: the text is the only content item the
// client sees, data goes out as structuredContent.
func text(s string, data map[string]any) (*sdk.Result, error) {
	if data == nil {
		data = map[string]any{}
	}
	data["text"] = s
	res, err := sdk.OK(source, data)
	if err != nil {
		return nil, err
	}
	res.Text = s
	return res, nil
}

// withContent is a text answer followed by content items.
func withContent(s string, items ...sdk.Content) (*sdk.Result, error) {
	res, err := text(s, nil)
	if err != nil {
		return nil, err
	}
	res.Content = items
	return res, nil
}

// pause waits d unless the call is cancelled first.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *conformance) CallTool(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	if res, ok, err := p.callTaskTool(ctx, c); ok {
		return res, err
	}
	switch c.Tool {
	case "test_simple_text":
		return text("This is a simple text response for testing.", nil)
	case "test_error_handling":
		res := sdk.Fail(source, 10000, "This tool intentionally returns an error for testing", nil)
		res.Text = "This tool intentionally returns an error for testing"
		return res, nil
	case "test_tool_with_logging":
		// The pauses let the client see the messages arrive one by one
		// while the call runs, as the scenario asks.
		for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				if err := pause(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			c.Log(sdk.LevelInfo, source, msg)
		}
		return text("Tool with logging executed successfully", nil)
	case "test_tool_with_progress":
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				if err := pause(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			c.Progress(p, 100, "")
		}
		return text("Tool with progress executed successfully", nil)
	case "test_sampling":
		var in struct {
			Prompt string `json:"prompt"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, fmt.Errorf("decode test_sampling arguments: %w", err)
		}
		reply, err := c.Sample(ctx, &sdk.SamplingRequest{
			Messages:  []sdk.SamplingMessage{{Role: sdk.RoleUser, Content: sdk.TextContent(in.Prompt)}},
			MaxTokens: 100,
		})
		if err != nil {
			return nil, err
		}
		return text("LLM response: "+reply.Content.Text, nil)
	case "test_elicitation":
		var in struct {
			Message string `json:"message"`
		}
		if err := json.Unmarshal(c.Arguments, &in); err != nil {
			return nil, fmt.Errorf("decode test_elicitation arguments: %w", err)
		}
		return elicit(ctx, c, "User response: ", in.Message, elicitUser)
	case "test_elicitation_sep1034_defaults":
		return elicit(ctx, c, "Elicitation completed: ", "Please review and update the form fields with defaults", elicitDefaults)
	case "test_elicitation_sep1330_enums":
		return elicit(ctx, c, "Elicitation completed: ", "Please select options from the enum fields", elicitEnums)
	case "json_schema_2020_12_tool":
		return text("JSON Schema 2020-12 tool called with "+string(c.Arguments), nil)
	case "test_image_content":
		return withContent("A 1x1 red PNG image.", sdk.ImageContent(redPixel(), "image/png"))
	case "test_audio_content":
		return withContent("A short silent WAV clip.", sdk.AudioContent(silentWAV(), "audio/wav"))
	case "test_embedded_resource":
		return withContent("An embedded text resource.", sdk.ResourceContent(sdk.Resource{
			URI: "test://embedded-resource", MimeType: "text/plain", Text: "This is an embedded resource content."}))
	case "test_multiple_content_types":
		return withContent("Multiple content types test:",
			sdk.ImageContent(redPixel(), "image/png"),
			sdk.ResourceContent(sdk.Resource{URI: "test://mixed-content-resource", MimeType: "application/json", Text: `{"test":"data","value":123}`}))
	case "test_reconnection":
		// Long enough for a transport that closes the response stream
		// mid-call (SEP-1699 polling) to do so before the result exists.
		if err := pause(ctx, 500*time.Millisecond); err != nil {
			return nil, err
		}
		return text("Reconnection test completed successfully", nil)
	}
	if fn, ok := extraTools[c.Tool]; ok {
		return fn(ctx, c)
	}
	return nil, sdk.NotFound("unknown tool", c.Tool)
}

// The requested schemas of the elicitation fixtures, as the scenarios
// describe them.
const (
	elicitUser = `{"type":"object","properties":{
		"username":{"type":"string","description":"User's response"},
		"email":{"type":"string","description":"User's email address"}},
		"required":["username","email"]}`
	elicitDefaults = `{"type":"object","properties":{
		"name":{"type":"string","description":"User name","default":"John Doe"},
		"age":{"type":"integer","description":"User age","default":30},
		"score":{"type":"number","description":"User score","default":95.5},
		"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
		"verified":{"type":"boolean","description":"Verification status","default":true}},
		"required":[]}`
	elicitEnums = `{"type":"object","properties":{
		"untitledSingle":{"type":"string","description":"Untitled single-select","enum":["option1","option2","option3"]},
		"titledSingle":{"type":"string","description":"Titled single-select","oneOf":[
			{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
		"legacyEnum":{"type":"string","description":"Legacy titled enum","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
		"untitledMulti":{"type":"array","description":"Untitled multi-select","items":{"type":"string","enum":["option1","option2","option3"]}},
		"titledMulti":{"type":"array","description":"Titled multi-select","items":{"anyOf":[
			{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},
		"required":[]}`
)

func elicit(ctx context.Context, c *sdk.Call, prefix, message, schema string) (*sdk.Result, error) {
	answer, err := c.Elicit(ctx, &sdk.ElicitRequest{Message: message, RequestedSchema: json.RawMessage(schema)})
	if err != nil {
		return nil, err
	}
	content, err := json.Marshal(answer.Content)
	if err != nil {
		return nil, fmt.Errorf("encode elicitation content: %w", err)
	}
	return text(fmt.Sprintf("%saction=%s, content=%s", prefix, answer.Action, content),
		map[string]any{"action": string(answer.Action), "content": answer.Content})
}

// redPixel is a 1×1 red PNG, the smallest real image for the binary
// resource.
func redPixel() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // cannot fail on an in-memory buffer
	return buf.Bytes()
}

// silentWAV is a tenth of a second of 8 kHz 8-bit mono silence, a real
// RIFF/WAVE file for the audio fixture.
func silentWAV() []byte {
	const rate, samples = 8000, 800
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) } // cannot fail on a buffer
	b.WriteString("RIFF")
	le(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	le(uint32(16))   // fmt chunk size
	le(uint16(1))    // PCM
	le(uint16(1))    // mono
	le(uint32(rate)) // sample rate
	le(uint32(rate)) // byte rate: rate × 1 channel × 1 byte
	le(uint16(1))    // block align
	le(uint16(8))    // bits per sample
	b.WriteString("data")
	le(uint32(samples))
	b.Write(bytes.Repeat([]byte{0x80}, samples)) // 8-bit PCM silence is the midpoint
	return b.Bytes()
}

func (*conformance) ReadResource(_ context.Context, uri string, _ sdk.Meta) (*sdk.Resource, error) {
	switch uri {
	case "test://static-text":
		return &sdk.Resource{URI: uri, MimeType: "text/plain", Text: "This is the content of the static text resource."}, nil
	case "test://static-binary":
		return &sdk.Resource{URI: uri, MimeType: "image/png", Blob: redPixel()}, nil
	case "test://watched-resource":
		return &sdk.Resource{URI: uri, MimeType: "text/plain", Text: "Watched resource content"}, nil
	}
	if id, ok := strings.CutPrefix(uri, "test://template/"); ok {
		if id, ok := strings.CutSuffix(id, "/data"); ok && id != "" && !strings.Contains(id, "/") {
			b, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, fmt.Errorf("encode template resource: %w", err)
			}
			return &sdk.Resource{URI: uri, MimeType: "application/json", Text: string(b)}, nil
		}
	}
	return nil, sdk.ErrResourceNotFound
}

func (*conformance) GetPrompt(ctx context.Context, req *sdk.PromptRequest) (*sdk.PromptResult, error) {
	if fn, ok := extraPrompts[req.Name]; ok {
		return fn(ctx, req)
	}
	switch req.Name {
	case "test_simple_prompt":
		return &sdk.PromptResult{Messages: []sdk.PromptMessage{{Role: sdk.RoleUser, Text: "This is a simple prompt for testing."}}}, nil
	case "test_prompt_with_arguments":
		return &sdk.PromptResult{Messages: []sdk.PromptMessage{{Role: sdk.RoleUser,
			Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"])}}}, nil
	case "test_prompt_with_embedded_resource":
		return &sdk.PromptResult{Messages: []sdk.PromptMessage{
			{Role: sdk.RoleUser, Resource: &sdk.Resource{URI: req.Arguments["resourceUri"], MimeType: "text/plain", Text: "Embedded resource content for testing."}},
			{Role: sdk.RoleUser, Text: "Please process the embedded resource above."},
		}}, nil
	case "test_prompt_with_image":
		return &sdk.PromptResult{Messages: []sdk.PromptMessage{
			{Role: sdk.RoleUser, Content: sdk.ImageContent(redPixel(), "image/png")},
			{Role: sdk.RoleUser, Text: "Please analyze the image above."},
		}}, nil
	}
	return nil, sdk.NotFound("unknown prompt", req.Name)
}

// Complete offers values for the first argument of
// test_prompt_with_arguments (completion-complete asks for arg1).
func (*conformance) Complete(_ context.Context, req *sdk.CompleteRequest) (*sdk.Completion, error) {
	if req.Prompt != "test_prompt_with_arguments" {
		return nil, sdk.NotFound("nothing to complete", req.Prompt+req.Template+" "+req.Argument)
	}
	var out []string
	for _, v := range []string{"testValue1", "testValue2", "test", "other"} {
		if strings.HasPrefix(v, req.Value) {
			out = append(out, v)
		}
	}
	return &sdk.Completion{Values: out, Total: len(out)}, nil
}

func main() { sdk.Serve(&conformance{}) }
