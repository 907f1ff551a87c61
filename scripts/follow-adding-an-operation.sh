#!/usr/bin/env bash
# Follows docs/adding-an-operation.md literally on a scratch copy of the
# committed tree: adds the walk-through's `tag` operation (schema, Go body,
# policy enum, spec file, provider arguments, executor function, test
# tables), regenerates, and runs the tests the walk-through names. It fails
# when the walk-through no longer matches the code.
#
#   scripts/follow-adding-an-operation.sh [WORKDIR]
#
# WORKDIR (default: a new temporary directory) receives the copy; the
# repository itself is never touched. Needs git, go and python3.
set -euo pipefail

root=$(git rev-parse --show-toplevel)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
git -C "$root" archive HEAD | tar -x -C "$work"
echo "scratch copy: $work" >&2

python3 - "$work" <<'PY'
import json, collections, sys, os
os.chdir(sys.argv[1])
O=collections.OrderedDict
def edit(p, a, b):
    s=open(p).read()
    assert a in s, (p, a)
    open(p,'w').write(s.replace(a,b,1))
def append(p, t):
    open(p,'a').write(t)
# 1 schema
s=json.load(open('schemas/operations/branch.schema.json'), object_pairs_hook=O)
s['title']='fluxgit tag proposal body'
s['description']='Create a lightweight tag at HEAD. The body the handshake provider POSTs to /v1/mcp/operation/preview/tag (internal/operation).'
s['required']=[r for r in s['required'] if r not in ('name','checkout')]+['name']
p=s['properties']
p['idempotencyKey']['pattern']=p['idempotencyKey']['pattern'].replace('^branch:','^tag:')
p['operationType']['const']='tag'
del p['checkout']; del p['startPoint']
p['name']['description']='The new tag.'
ex=s['examples'][0]; ex['operationType']='tag'; ex['idempotencyKey']=ex['idempotencyKey'].replace('branch:','tag:'); ex['name']='v1.0.0'; del ex['startPoint']; del ex['checkout']
open('schemas/operations/tag.schema.json','w').write(json.dumps(s, indent=2)+'\n')
# 2 internal/operation
edit('internal/operation/operation.go','''	{"submodulePointer", RiskMedium, func() Body { return &SubmodulePointer{} }},''','''	{"submodulePointer", RiskMedium, func() Body { return &SubmodulePointer{} }},
	{"tag", RiskLow, func() Body { return &Tag{} }},''')
append('internal/operation/bodies.go','''
// Tag is the tag body.
type Tag struct {
	Header
	Name string `json:"name"`
}
''')
# 3 policy enum
edit('schemas/agent-policy.schema.json','"branchDelete", "submodulePointer"]','"branchDelete", "submodulePointer", "tag"]')
# 4 spec file
s=open('spec/tools/operation.preview.branch.yaml').read()
s=s.replace('operation.preview.branch','operation.preview.tag').replace('title: Operation Preview Branch','title: Operation Preview Tag')
s=s.replace('Proposes creating branch name at startPoint and, unless checkout is false, switching to it.','Proposes creating the lightweight tag name at HEAD.')
s=s.replace('order: 190','order: 195')
s=s.replace('''    name:
      $ref: ../fragments/handshake.yaml#/$defs/ref
      description: Name of the new branch.
    startPoint:
      $ref: ../fragments/handshake.yaml#/$defs/optionalRef
      default: HEAD
      description: Commit or ref to start at; empty means HEAD.
    checkout:
      type: boolean
      default: true
      description: Switch to the new branch.
''','''    name:
      $ref: ../fragments/handshake.yaml#/$defs/ref
      description: Name of the new tag.
''')
s=s.replace('plus branch and checkedOut.','plus tag.')
s=s.replace("""- name: rescue-branch
  description: Propose a branch at a commit lost by a reset, without switching to it.
  arguments:
    repoPath: /home/dev/src/webshop
    name: rescue/lost-work
    startPoint: 9a8b7c6d5e4f30211203f4e5d6c7b8a990817263
    checkout: false
    reason: Keep the commit the last reset dropped.""","""- name: release-tag
  description: Propose tagging HEAD as a release.
  arguments:
    repoPath: /home/dev/src/webshop
    name: v1.0.0
    reason: Mark the release the user just approved.""")
s=s.replace("      operationType: branch","      operationType: tag")
open('spec/tools/operation.preview.tag.yaml','w').write(s)
# 5 provider
edit('plugins/proposals/args.go','''	case "submodulePointer":
		return &submodulePointerArgs{}
	}''','''	case "submodulePointer":
		return &submodulePointerArgs{}
	case "tag":
		return &tagArgs{}
	}''')
append('plugins/proposals/args.go','''
type tagArgs struct {
	commonArgs
	Name string `json:"name"`
}

func (a *tagArgs) body(h header) (any, []string, error) {
	if err := text("name", a.Name, maxRef); err != nil {
		return nil, nil, err
	}
	return &operation.Tag{Header: h, Name: a.Name}, nil, nil
}
''')
edit('plugins/proposals/provider_test.go','''	case "submodulePointer":
		m["relativePath"], m["direction"] = "libs/x", "return"
	}''','''	case "submodulePointer":
		m["relativePath"], m["direction"] = "libs/x", "return"
	case "tag":
		m["name"] = "v1.0.0"
	}''')
# 6 executor
append('gateway/execute/tag.go','''package execute

import (
	"context"

	"github.com/fluxgit/fluxgit/internal/operation"
)

// tag creates the lightweight tag r.Name at HEAD. No restore point.
func (x *execution) tag(ctx context.Context, r *operation.Tag) result {
	if _, err := x.e.run(ctx, x.repo, "tag", "--end-of-options", r.Name); err != nil {
		return failed("tag %s not created: %s; nothing changed", r.Name, details(err))
	}
	return result{"status": "completed", "message": "created tag " + r.Name, "tag": r.Name}
}
''')
edit('gateway/execute/execute.go','''	"submodulePointer": typed((*execution).submodulePointer),
''','''	"submodulePointer": typed((*execution).submodulePointer),
	"tag":              typed((*execution).tag),
''')
edit('gateway/execute/review.go','''	case *operation.SubmodulePointer:''','''	case *operation.Tag:
		rv.Summary = "Create tag " + req.Name + " at HEAD"
	case *operation.SubmodulePointer:''')
# 7 ./tests tables
s=open('spec/tools/operation.preview.tag.yaml').read()
s=s.replace('toolsets: [core, proposals]','toolsets: [proposals]')
open('spec/tools/operation.preview.tag.yaml','w').write(s)
edit('tests/handshake_test.go','''		{"branch defaults", "branch",''','''		{"tag", "tag", map[string]any{"name": "v1.0.0"},
			map[string]any{"name": "v1.0.0"}, ""},
		{"branch defaults", "branch",''')
edit('tests/toolsets_test.go','count: 43,','count: 44,')
PY

cd "$work"
gofmt -l internal plugins gateway | { ! grep .; }
go generate ./spec
go run ./cmd/fluxgit spec lint
go test ./tests -run 'TestTranscripts|TestToolSnapshots' -update
go test -race ./internal/operation ./plugins/proposals ./gateway/... ./tests/gatewaytest ./host/catalog
go test -race -run 'Gateway|Handshake|Operation|Proposal|Policy|Toolset' ./tests
echo "the walk-through holds: operation tag added and green in $work" >&2
