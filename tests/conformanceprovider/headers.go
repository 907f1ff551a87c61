package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fluxgit/fluxgit/plugins/sdk"
)

// The fixture of the http-custom-header-server-validation scenario
// (SEP-2243): its spec marks region with x-mcp-header, so a client
// mirrors it into Mcp-Param-Region and the host's HTTP transport checks
// the header against the body before the call reaches this provider.

func init() { extraTools["test_mcp_param_header"] = paramHeader }

func paramHeader(_ context.Context, c *sdk.Call) (*sdk.Result, error) {
	var in struct {
		Region string `json:"region"`
	}
	if err := json.Unmarshal(c.Arguments, &in); err != nil {
		return nil, fmt.Errorf("decode test_mcp_param_header arguments: %w", err)
	}
	return text("Routed to region "+in.Region, nil)
}
