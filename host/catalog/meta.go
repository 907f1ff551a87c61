package catalog

import (
	"fmt"
	"io/fs"

	"github.com/fluxgit/fluxgit/schemas"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// metaschema is one of the embedded file schemas, compiled once per process.
type metaschema struct {
	file string
	lazySchema
}

var (
	toolMeta     = &metaschema{file: "tool.schema.json"}
	resourceMeta = &metaschema{file: "resource.schema.json"}
	promptMeta   = &metaschema{file: "prompt.schema.json"}
)

func (m *metaschema) compiled() (*jsonschema.Schema, any, error) {
	raw, err := fs.ReadFile(schemas.FS, m.file)
	if err != nil {
		return nil, nil, err
	}
	return m.get("mem:///schemas/"+m.file, raw)
}

// check validates a parsed spec file (value model) against the metaschema.
// A mismatch is a *ValidationError whose details are paths within the file
// ("tier must be one of ...").
func (m *metaschema) check(doc any) error {
	sch, sdoc, err := m.compiled()
	if err != nil {
		return fmt.Errorf("catalog: metaschema %s: %w", m.file, err)
	}
	return validateWith(sch, sdoc, toPlain(doc), "")
}
