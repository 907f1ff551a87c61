// Package spec embeds fluxgit's tool, resource and prompt contract as data.
//
// The tree rooted at FS is a "spec layer":
//
//	tools/<name>.yaml        one file per tool (see schemas/tool.schema.json)
//	resources/<name>.yaml    one file per resource or resource template
//	                         (see schemas/resource.schema.json)
//	prompts/<name>.yaml      one file per prompt (see schemas/prompt.schema.json):
//	                         its arguments and, for prompts the host renders,
//	                         the messages as Go text/templates over the
//	                         argument map; a prompt without messages is
//	                         rendered by its provider
//	fragments/*.yaml         shared schema pieces, referenced from tool files
//	                         with relative $refs such as
//	                         ../fragments/common.yaml#/$defs/repoPath
//
// Nothing in this package interprets the files; host/catalog loads, inlines,
// compiles and lints them. bundle.json is the same layer pre-built (its
// digest ties it to the sources; a stale bundle is ignored and a test
// fails): regenerate it with `go generate ./spec` after editing a file. A
// directory with the same layout can be layered on top of FS to override or
// add tools, resources and prompts without rebuilding the binary.
package spec

import "embed"

//go:generate sh -c "go run ../cmd/fluxgit spec bundle . > bundle.json.tmp && mv bundle.json.tmp bundle.json"

// FS is the built-in spec layer. Its root contains the tools, fragments,
// resources and prompts directories (not a "spec" prefix), so it can be
// passed directly to catalog.Load or catalog.Lint.
//
//go:embed tools fragments resources prompts bundle.json
var FS embed.FS
