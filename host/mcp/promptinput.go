package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/fluxgit/fluxgit/host/rpc"
	"github.com/fluxgit/fluxgit/internal/wire"
)

// A prompt may need the client's answers before it renders (an
// elicitation, a sampled message, the client's roots). Prompts are unary
// on the wire, so a provider cannot block on the client as a tool call
// does (Call.Ask): it answers with the questions instead
// (wire.PromptResult.InputRequests) and is asked again with the answers
// in wire.PromptRequest.Inputs.
//
// The 2026-07-28 generation gets the questions as an input_required
// result. Nothing of the prompt stays on the server between the rounds:
// the answers gathered so far travel in requestState, signed with a key
// this process made, so a client cannot alter them, slip in answers to
// questions never asked, or replay the state for another prompt, other
// arguments or another client. Legacy sessions get the questions as
// client requests on their connection, and the prompt renders in one
// prompts/get.

// maxPromptRounds bounds how often one prompts/get asks a legacy client
// before the provider counts as broken.
const maxPromptRounds = 8

// promptStateTTL is how long a prompt's requestState is honoured.
const promptStateTTL = 15 * time.Minute

// promptState is what a prompt's requestState carries.
type promptState struct {
	Prompt string            `json:"p"`
	Args   map[string]string `json:"a,omitempty"`
	Client string            `json:"c,omitempty"`
	// Inputs are the answers gathered in earlier rounds, by key.
	Inputs map[string]json.RawMessage `json:"i,omitempty"`
	// Asked are the questions of the last round: key → method.
	Asked map[string]string `json:"q"`
	// Issued is when the state was made (Unix seconds).
	Issued int64 `json:"t"`
}

func newStateKey() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return b
}

// sealState encodes st and appends its HMAC-SHA256.
func (s *Server) sealState(st promptState) (string, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("encode prompt state: %w", err)
	}
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(b)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(b) + "." + enc.EncodeToString(mac.Sum(nil)), nil
}

// errBadPromptState is the refusal of a requestState this server did not
// issue, or issued too long ago.
var errBadPromptState = refuseParams("params.requestState failed its integrity check or expired (a prompt's state is honoured for " +
	promptStateTTL.String() + " by the server process that issued it): get the prompt again without requestState and inputResponses")

// openState checks a requestState's signature and age and decodes it.
func (s *Server) openState(tok string, now time.Time) (promptState, error) {
	enc := base64.RawURLEncoding
	body, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return promptState{}, errBadPromptState
	}
	b, err1 := enc.DecodeString(body)
	got, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return promptState{}, errBadPromptState
	}
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(b)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return promptState{}, errBadPromptState
	}
	var st promptState
	if json.Unmarshal(b, &st) != nil {
		return promptState{}, errBadPromptState
	}
	if age := now.Sub(time.Unix(st.Issued, 0)); age < 0 || age > promptStateTTL {
		return promptState{}, errBadPromptState
	}
	return st, nil
}

// promptWithInput renders a provider's prompt, putting its questions to
// the client. It returns the rendered prompt, or (input != nil) the
// input_required result to send instead.
func (s *Server) promptWithInput(ctx context.Context, rq *request, provider string, req *wire.PromptRequest, p params) (*wire.PromptResult, json.RawMessage, error) {
	inputs := map[string]json.RawMessage{}
	if rq.gen.modern {
		responses, err := inputResponses(p)
		if err != nil {
			return nil, nil, err
		}
		if raw, ok := p["requestState"]; ok && string(raw) != "null" {
			var tok string
			if json.Unmarshal(raw, &tok) != nil {
				return nil, nil, refuseParams("params.requestState must be the string an input_required result returned")
			}
			st, err := s.openState(tok, time.Now())
			if err != nil {
				return nil, nil, err
			}
			if st.Prompt != req.Name || !maps.Equal(st.Args, req.Arguments) || st.Client != rq.gen.client.Name {
				return nil, nil, refuseParams("params.requestState belongs to a different prompts/get: a retry must repeat the name and arguments of the request that returned it")
			}
			maps.Copy(inputs, st.Inputs)
			// Only answers to the questions asked count, and only in the
			// shape of their method's result; anything else is ignored
			// and the provider asks again what it still needs.
			for k, res := range responses {
				if method, ok := st.Asked[k]; ok && answerFits(method, res) {
					inputs[k] = res
				}
			}
		} else {
			// Answers sent up front, before any question: the provider
			// judges them (sdk.PromptRequest.Elicited checks the shape).
			maps.Copy(inputs, responses)
		}
	}
	rq.ctx = ctx
	for round := 0; ; round++ {
		req.Inputs = nil
		if len(inputs) > 0 {
			req.Inputs = inputs
		}
		res, err := s.opts.Providers.GetPrompt(ctx, provider, req)
		if err != nil {
			return nil, nil, err
		}
		if len(res.InputRequests) == 0 {
			return res, nil, nil
		}
		keys := make([]string, 0, len(res.InputRequests))
		for k, q := range res.InputRequests {
			if fail := rq.checkCapability(q.Method); fail != nil {
				return nil, nil, fail
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if rq.gen.modern {
			st := promptState{Prompt: req.Name, Args: req.Arguments, Client: rq.gen.client.Name, Inputs: inputs,
				Asked: map[string]string{}, Issued: time.Now().Unix()}
			reqs := make(map[string]any, len(keys))
			for _, k := range keys {
				q := res.InputRequests[k]
				st.Asked[k] = q.Method
				reqs[k] = map[string]any{"method": q.Method, "params": json.RawMessage(q.Params)}
			}
			tok, err := s.sealState(st)
			if err != nil {
				return nil, nil, err
			}
			out, err := rpc.Marshal(map[string]any{"inputRequests": reqs, "requestState": tok})
			if err != nil {
				return nil, nil, err
			}
			rq.inputRequired = true
			return nil, out, nil
		}
		if round >= maxPromptRounds {
			return nil, nil, s.brokenProvider(provider, fmt.Sprintf("prompt %s asked the client for input %d times without rendering", req.Name, round+1))
		}
		for _, k := range keys {
			q := res.InputRequests[k]
			answer, fail := rq.askClient(&wire.ClientRequest{Method: q.Method, Params: q.Params, Key: k})
			if fail != nil {
				return nil, nil, fail
			}
			inputs[k] = answer
		}
	}
}
