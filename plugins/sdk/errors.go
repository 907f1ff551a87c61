package sdk

// ErrorKind says what kind of refusal an *Error is. Providers never name
// JSON-RPC codes: the host maps each kind to the code the client's
// protocol generation expects.
type ErrorKind string

// The error kinds.
const (
	// KindInvalidArgument: arguments that passed the schema are still
	// unacceptable. Details should tell a model how to fix the call.
	KindInvalidArgument ErrorKind = "invalid_argument"
	// KindOutsideRoots: a path the provider derived (a git directory, a
	// worktree) lies outside Meta.AllowedRoots.
	KindOutsideRoots ErrorKind = "outside_roots"
	// KindNotFound: the named resource, prompt or completion target does
	// not exist.
	KindNotFound ErrorKind = "not_found"
	// KindClientCapability: the call needs a client capability the client
	// did not declare; Data holds requiredCapabilities.
	KindClientCapability ErrorKind = "client_capability"
	// KindUnavailable: a dependency is down; retrying later may help.
	KindUnavailable ErrorKind = "unavailable"
	// KindInternal: anything else. A plain Go error is reported as this.
	KindInternal ErrorKind = "internal"
)

// Error is a refusal a provider returns instead of a result. The host
// turns it into the protocol error of its kind.
type Error struct {
	Kind    ErrorKind
	Message string
	// Details is the sentence a model reads to correct the call.
	Details string
	// Data is sent to the client as the error's data.
	Data map[string]any
}

func (e *Error) Error() string {
	if e.Details == "" {
		return string(e.Kind) + ": " + e.Message
	}
	return string(e.Kind) + ": " + e.Message + ": " + e.Details
}

// InvalidArgument refuses arguments that passed the schema but are still
// unacceptable; details names the argument and what to send instead.
func InvalidArgument(details string) *Error {
	return &Error{Kind: KindInvalidArgument, Message: "Invalid params", Details: details}
}

// OutsideRoots refuses a call that would reach outside the allowed roots.
func OutsideRoots(message string, data map[string]any) *Error {
	return &Error{Kind: KindOutsideRoots, Message: message, Data: data}
}

// NotFound reports that what the request names does not exist.
func NotFound(message, details string) *Error {
	return &Error{Kind: KindNotFound, Message: message, Details: details}
}

// Unavailable reports a dependency that is down; a retry may succeed.
func Unavailable(message, details string) *Error {
	return &Error{Kind: KindUnavailable, Message: message, Details: details}
}

// MissingCapability reports that the client did not declare capability
// ("sampling", "elicitation"), which the call needs.
func MissingCapability(capability string) *Error {
	return &Error{
		Kind:    KindClientCapability,
		Message: "Client capability required",
		Details: "this call needs the client capability " + capability + ", which the client did not declare",
		Data:    map[string]any{"requiredCapabilities": map[string]any{capability: map[string]any{}}},
	}
}

// ArgumentError is returned by a provider when arguments that passed the
// schema are still unacceptable (a path with "..", say). It is the same
// refusal as InvalidArgument(Details).
type ArgumentError struct {
	Message string `json:"message"`
	Details string `json:"details"`
}

func (e *ArgumentError) Error() string { return e.Message + ": " + e.Details }
