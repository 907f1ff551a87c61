package wire

import (
	"bytes"
	"encoding/json"

	"google.golang.org/grpc/encoding"
)

// The provider service is one generic gRPC service whose messages are JSON
// documents. Schemas live in the spec, not in protobuf, so a JSON codec
// keeps the wire as generic as the host: adding a tool never changes this
// package. The codec is selected per call by content-subtype, which leaves
// go-plugin's own protobuf services (health, broker, controller) untouched.
const (
	// The service name stays v1 across wire protocols so an old provider
	// still answers Describe and the host can say which protocol it speaks.
	serviceName = "fluxgit.provider.v1.Provider"
	codecName   = "fluxgit-json"
)

type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                       { return codecName }

func init() { encoding.RegisterCodec(jsonCodec{}) }

// Marshal encodes v without HTML escaping: tool data is read by models, and
// encoding/json's default spells every '<' of a diff as \u003c.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
