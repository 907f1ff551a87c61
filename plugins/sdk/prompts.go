package sdk

import "encoding/json"

// PromptRequest asks a PromptProvider to render one of its prompts. The
// host has checked Arguments against the prompt's spec (required ones
// present, no unknown ones).
type PromptRequest struct {
	Name      string
	Arguments map[string]string
	Meta      Meta
	// Inputs are the client's answers to the questions an earlier
	// rendering asked (PromptResult.Ask), by key, as JSON: decode them
	// with Elicited, or json.Unmarshal into SamplingResult or RootsResult.
	Inputs map[string]json.RawMessage
}

// Elicited is the client's answer to the elicitation asked under key, if
// it has arrived and is well formed.
func (r *PromptRequest) Elicited(key string) (*ElicitResult, bool) {
	raw, ok := r.Inputs[key]
	if !ok {
		return nil, false
	}
	var out ElicitResult
	if json.Unmarshal(raw, &out) != nil || out.Action == "" {
		return nil, false
	}
	return &out, true
}

// PromptResult is a rendered prompt, or the questions it needs answered
// first. A prompt cannot block on the client as a tool call does (Call.Ask):
// it returns Ask, keyed by the names it chooses, and is asked to render
// again with the answers in PromptRequest.Inputs. Each question needs its
// client capability (Meta.Client). When Ask is set, Description and
// Messages are ignored.
type PromptResult struct {
	Description string
	Messages    []PromptMessage
	Ask         map[string]Question
}

// PromptMessage is one message of a rendered prompt: Text, or, when
// Resource is set, that resource embedded as the message's content, or,
// when Content is set (its Type not empty), that content block: an image
// (ImageContent), audio (AudioContent), an embedded resource or a
// resource link. Set only one of Text, Resource and Content. Content
// blocks are checked like a tool result's (Result.Validate), and the
// blocks of one prompt may carry at most MaxContentBytes together.
type PromptMessage struct {
	Role     Role
	Text     string
	Resource *Resource
	Content  Content
}

// CompleteRequest asks a Completer for candidate values of one argument of
// a prompt (Prompt set) or a resource template (Template set, as spelt in
// the spec).
type CompleteRequest struct {
	Prompt   string
	Template string
	// Argument is the argument being completed; Value is what the user
	// has typed so far.
	Argument string
	Value    string
	// Context holds the arguments already chosen.
	Context map[string]string
	Meta    Meta
}

// Completion is a list of candidate values, best first. The host sends at
// most 100; Total and HasMore say how many there are beyond that.
type Completion struct {
	Values  []string
	Total   int
	HasMore bool
}
