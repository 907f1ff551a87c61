package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// The fixtures of the input-required-result-* scenarios (SEP-2322, MCP
// 2026-07-28 multi round-trip requests). Each asks the client through the
// SDK's blocking calls (Call.Elicit, Sample, ListRoots, Ask) under the
// keys the scenarios name; the host turns every question into an
// input_required round, or, for a 2025-11-25 session, into a client
// request.

func init() {
	for name, fn := range map[string]toolFunc{
		"test_input_required_result_elicitation":     irElicitation,
		"test_input_required_result_sampling":        irSampling,
		"test_input_required_result_list_roots":      irListRoots,
		"test_input_required_result_request_state":   irRequestState,
		"test_input_required_result_multiple_inputs": irMultipleInputs,
		"test_input_required_result_multi_round":     irMultiRound,
		"test_input_required_result_tampered_state":  irTamperedState,
		"test_input_required_result_capabilities":    irCapabilities,
	} {
		extraTools[name] = fn
	}
	extraPrompts["test_input_required_result_prompt"] = irPrompt
}

// schemaOf is a requested schema with one required property.
func schemaOf(prop, typ string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%q:{"type":%q}},"required":[%q]}`, prop, typ, prop))
}

var (
	askName = &sdk.ElicitRequest{Key: "user_name", Message: "What is your name?", RequestedSchema: schemaOf("name", "string")}
	askOK   = &sdk.ElicitRequest{Key: "confirm", Message: "Please confirm", RequestedSchema: schemaOf("ok", "boolean")}
	askCap  = &sdk.SamplingRequest{Key: "capital_question", MaxTokens: 100,
		Messages: []sdk.SamplingMessage{{Role: sdk.RoleUser, Content: sdk.TextContent("What is the capital of France?")}}}
	askRoots = &sdk.RootsRequest{Key: "client_roots"}
)

// accepted is the answer's content when the user accepted, or an error
// result saying what they did instead.
func accepted(a *sdk.ElicitResult) (map[string]any, *sdk.Result) {
	if a.Action != sdk.ElicitAccept {
		res, _ := text(fmt.Sprintf("The user did not answer (action=%s).", a.Action), nil)
		return nil, res
	}
	return a.Content, nil
}

func irElicitation(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	a, err := c.Elicit(ctx, askName)
	if err != nil {
		return nil, err
	}
	content, res := accepted(a)
	if res != nil {
		return res, nil
	}
	return text(fmt.Sprintf("Hello, %v!", content["name"]), nil)
}

func irSampling(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	a, err := c.Sample(ctx, askCap)
	if err != nil {
		return nil, err
	}
	return text("The model answered: "+a.Content.Text, nil)
}

func rootList(r *sdk.RootsResult) string {
	uris := make([]string, 0, len(r.Roots))
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	return strings.Join(uris, ", ")
}

func irListRoots(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	r, err := c.ListRoots(ctx, askRoots)
	if err != nil {
		return nil, err
	}
	return text(fmt.Sprintf("The client shares %d roots: %s", len(r.Roots), rootList(r)), nil)
}

// irRequestState completes only through the requestState the host
// issued: the host parks the call under it and resumes it on the retry,
// so an answer that arrives here passed that check.
func irRequestState(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	a, err := c.Elicit(ctx, askOK)
	if err != nil {
		return nil, err
	}
	content, res := accepted(a)
	if res != nil {
		return res, nil
	}
	return text(fmt.Sprintf("state-ok: confirmed=%v", content["ok"]), nil)
}

func irMultipleInputs(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	answers, err := c.Ask(ctx,
		sdk.Question{Elicit: askName},
		sdk.Question{Sample: &sdk.SamplingRequest{Key: "greeting", MaxTokens: 50,
			Messages: []sdk.SamplingMessage{{Role: sdk.RoleUser, Content: sdk.TextContent("Generate a greeting")}}}},
		sdk.Question{Roots: askRoots})
	if err != nil {
		return nil, err
	}
	content, res := accepted(answers[0].Elicit)
	if res != nil {
		return res, nil
	}
	return text(fmt.Sprintf("%s %v (roots: %s)", answers[1].Sample.Content.Text, content["name"], rootList(answers[2].Roots)), nil)
}

func irMultiRound(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	first, err := c.Elicit(ctx, &sdk.ElicitRequest{Key: "step1", Message: "Step 1: What is your name?", RequestedSchema: schemaOf("name", "string")})
	if err != nil {
		return nil, err
	}
	name, res := accepted(first)
	if res != nil {
		return res, nil
	}
	second, err := c.Elicit(ctx, &sdk.ElicitRequest{Key: "step2", Message: "Step 2: What is your favorite color?", RequestedSchema: schemaOf("color", "string")})
	if err != nil {
		return nil, err
	}
	color, res := accepted(second)
	if res != nil {
		return res, nil
	}
	return text(fmt.Sprintf("%v's favorite color is %v.", name["name"], color["color"]), nil)
}

func irTamperedState(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	a, err := c.Elicit(ctx, askOK)
	if err != nil {
		return nil, err
	}
	return text(fmt.Sprintf("Confirmed (action=%s).", a.Action), nil)
}

// irCapabilities asks only what the client declared it can answer.
func irCapabilities(ctx context.Context, c *sdk.Call) (*sdk.Result, error) {
	var qs []sdk.Question
	if c.Meta.Client.Elicitation {
		qs = append(qs, sdk.Question{Elicit: askName})
	}
	if c.Meta.Client.Sampling {
		qs = append(qs, sdk.Question{Sample: askCap})
	}
	if c.Meta.Client.Roots {
		qs = append(qs, sdk.Question{Roots: askRoots})
	}
	if len(qs) == 0 {
		return text("The client declared no capability to ask with.", nil)
	}
	answers, err := c.Ask(ctx, qs...)
	if err != nil {
		return nil, err
	}
	return text(fmt.Sprintf("Asked %d questions, each within the client's capabilities.", len(answers)), nil)
}

// irPrompt asks, before rendering, what context to use. A prompt cannot
// block on the client: it returns the question and is asked again with
// the answer in Inputs.
func irPrompt(_ context.Context, req *sdk.PromptRequest) (*sdk.PromptResult, error) {
	a, ok := req.Elicited("user_context")
	if !ok || a.Action != sdk.ElicitAccept {
		return &sdk.PromptResult{Ask: map[string]sdk.Question{"user_context": {Elicit: &sdk.ElicitRequest{
			Message: "What context should the prompt use?", RequestedSchema: schemaOf("context", "string")}}}}, nil
	}
	return &sdk.PromptResult{Messages: []sdk.PromptMessage{{Role: sdk.RoleUser,
		Text: fmt.Sprintf("Answer with this context in mind: %v", a.Content["context"])}}}, nil
}
