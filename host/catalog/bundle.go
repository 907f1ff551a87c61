package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
)

// BundleFile is the optional pre-built form of a spec layer, stored at the
// layer root. Parsing two dozen YAML files and inlining their $refs is most
// of the host's start-up time; the bundle holds the result as JSON and is
// used only while its digest matches the layer's source files, so a stale
// bundle costs speed, never correctness.
const BundleFile = "bundle.json"

type bundle struct {
	// Digest covers the names and bytes of every spec file of the layer.
	Digest    string      `json:"digest"`
	Tools     []*Tool     `json:"tools"`
	Resources []*Resource `json:"resources"`
	Prompts   []*Prompt   `json:"prompts"`
}

// layerDigest hashes the layer's spec sources in a fixed order.
func layerDigest(fsys fs.FS) (string, error) {
	var names []string
	for _, dir := range []string{"tools", "resources", "fragments", "prompts"} {
		files, err := specFiles(fsys, dir)
		if err != nil {
			return "", err
		}
		names = append(names, files...)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Bundle builds the bundle of one spec layer (what `fluxgit spec bundle`
// writes). It fails when the layer does not load.
func Bundle(fsys fs.FS) ([]byte, error) {
	digest, err := layerDigest(fsys)
	if err != nil {
		return nil, err
	}
	b, err := loadLayer(fsys)
	if err != nil {
		return nil, err
	}
	b.Digest = digest
	if b.Tools == nil {
		b.Tools = []*Tool{}
	}
	if b.Resources == nil {
		b.Resources = []*Resource{}
	}
	if b.Prompts == nil {
		b.Prompts = []*Prompt{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// loadLayerFast uses the layer's bundle when it is current, and parses the
// sources otherwise.
func loadLayerFast(fsys fs.FS) (*bundle, error) {
	raw, err := fs.ReadFile(fsys, BundleFile)
	if err != nil {
		return loadLayer(fsys)
	}
	var b bundle
	if json.Unmarshal(raw, &b) != nil {
		return loadLayer(fsys)
	}
	digest, err := layerDigest(fsys)
	if err != nil || digest != b.Digest {
		return loadLayer(fsys)
	}
	// The bundle is indented for review; served schemas are compact.
	for _, t := range b.Tools {
		// A bundle written before tools had audit labels: the defaults
		// loadLayer would give the same sources.
		if t.Audit.Event == "" {
			t.Audit.Event = DefaultAudit.Event
		}
		if t.Audit.Risk == "" {
			t.Audit.Risk = DefaultAudit.Risk
		}
		for _, raw := range []*json.RawMessage{&t.InputSchema, &t.OutputSchema, &t.ReferenceOutputSchema, &t.SpecInputSchema} {
			if len(*raw) == 0 && (raw == &t.ReferenceOutputSchema || raw == &t.SpecInputSchema) {
				continue // optional: a second shape, or a served schema that leaves arguments out
			}
			var c bytes.Buffer
			if err := json.Compact(&c, *raw); err != nil {
				return loadLayer(fsys)
			}
			*raw = c.Bytes()
		}
		if !compactRaw(&t.UI) {
			return loadLayer(fsys)
		}
	}
	for _, r := range b.Resources {
		if !compactRaw(&r.UI) {
			return loadLayer(fsys)
		}
	}
	return &b, nil
}

// compactRaw compacts an optional JSON member of the indented bundle in
// place; false when it is not JSON.
func compactRaw(raw *json.RawMessage) bool {
	if len(*raw) == 0 {
		return true
	}
	var c bytes.Buffer
	if json.Compact(&c, *raw) != nil {
		return false
	}
	*raw = c.Bytes()
	return true
}
