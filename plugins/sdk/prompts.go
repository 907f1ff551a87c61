package sdk

// PromptRequest asks a PromptProvider to render one of its prompts. The
// host has checked Arguments against the prompt's spec (required ones
// present, no unknown ones).
type PromptRequest struct {
	Name      string
	Arguments map[string]string
	Meta      Meta
}

// PromptResult is a rendered prompt.
type PromptResult struct {
	Description string
	Messages    []PromptMessage
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
