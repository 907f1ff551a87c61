// TEMPORARY: replaced by helper B's implementation at merge.

package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

// Policy is a loaded policy file (stub: JSON only).
type Policy struct {
	Version int    `json:"version"`
	Default string `json:"default"`
	Rules   []struct {
		Name            string   `json:"name"`
		Agents          []string `json:"agents"`
		Operations      []string `json:"operations"`
		PathConstraints []string `json:"pathConstraints"`
	} `json:"rules"`
}

// Load reads a policy file.
func Load(p string) (*Policy, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("agent policy %s: %w", p, err)
	}
	var pol Policy
	if err := json.Unmarshal(b, &pol); err != nil {
		return nil, fmt.Errorf("agent policy %s: %w", p, err)
	}
	if pol.Version != 1 {
		return nil, fmt.Errorf("agent policy %s: unsupported policy version", p)
	}
	return &pol, nil
}

// FromEnv loads the file FLUXGIT_MCP_AGENT_POLICY names; unset: nil, nil.
func FromEnv() (*Policy, error) {
	p, ok := os.LookupEnv(EnvPolicy)
	if !ok {
		return nil, nil
	}
	if strings.TrimSpace(p) == "" {
		return nil, errors.New(EnvPolicy + " is set but empty")
	}
	return Load(p)
}

// Check refuses what the policy does not allow.
func (p *Policy) Check(r Request) error {
	if p == nil {
		return nil
	}
	for _, rule := range p.Rules {
		match := false
		for _, g := range rule.Agents {
			if ok, _ := path.Match(g, r.AgentID); ok {
				match = true
			}
		}
		if !match {
			continue
		}
		if len(rule.Operations) > 0 && !slices.Contains(rule.Operations, r.OperationType) {
			return &Violation{Rule: rule.Name, Reason: "operation " + r.OperationType + " is not allowed; allowed: " + strings.Join(rule.Operations, ", ")}
		}
		for _, rp := range r.RepoPaths {
			ok := len(rule.PathConstraints) == 0
			for _, c := range rule.PathConstraints {
				c = strings.TrimSuffix(c, "/")
				ok = ok || rp == c || strings.HasPrefix(rp, c+"/")
			}
			if !ok {
				return &Violation{Rule: rule.Name, Reason: "path " + rp + " is outside the allowed prefixes " + strings.Join(rule.PathConstraints, ", ")}
			}
		}
		return nil
	}
	if p.Default == "deny" {
		return &Violation{Rule: "default", Reason: "agent " + r.AgentID + " matches no rule and the default is deny"}
	}
	return nil
}
