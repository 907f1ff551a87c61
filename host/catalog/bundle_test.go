package catalog

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/fluxgit/fluxgit/spec"
)

// The embedded bundle is current: after editing any spec file, run
// `go generate ./spec` (CI fails here until then).
func TestEmbeddedBundleIsCurrent(t *testing.T) {
	want, err := Bundle(spec.FS)
	if err != nil {
		t.Fatal(err)
	}
	got, err := spec.FS.ReadFile(BundleFile)
	if err != nil {
		t.Fatalf("spec/%s missing: run go generate ./spec", BundleFile)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("spec/%s is stale: run go generate ./spec", BundleFile)
	}
}

// Loading through the bundle gives exactly what parsing the sources gives.
func TestBundleMatchesSources(t *testing.T) {
	bl, err := loadLayerFast(spec.FS)
	if err != nil {
		t.Fatal(err)
	}
	yl, err := loadLayer(spec.FS)
	if err != nil {
		t.Fatal(err)
	}
	fromBundle, fromYAML := bl.Tools, yl.Tools
	a, _ := json.Marshal(fromBundle)
	b, _ := json.Marshal(fromYAML)
	pa, _ := json.Marshal(bl.Prompts)
	pb, _ := json.Marshal(yl.Prompts)
	if !bytes.Equal(a, b) || !reflect.DeepEqual(bl.Resources, yl.Resources) || !bytes.Equal(pa, pb) {
		t.Fatal("bundle and sources disagree")
	}
	if len(yl.Prompts) == 0 || len(bl.Prompts) != len(yl.Prompts) {
		t.Fatalf("prompts: bundle %d, sources %d", len(bl.Prompts), len(yl.Prompts))
	}
	for i := range fromBundle {
		if !bytes.Equal(fromBundle[i].InputSchema, fromYAML[i].InputSchema) || !bytes.Equal(fromBundle[i].OutputSchema, fromYAML[i].OutputSchema) {
			t.Fatalf("%s: served schema bytes differ", fromBundle[i].Name)
		}
	}
}

// A stale or foreign bundle is ignored: the sources win.
func TestStaleBundleIgnored(t *testing.T) {
	layer := fstest.MapFS{"tools/demo.echo.yaml": {Data: []byte(baseTool)}}
	b, err := Bundle(layer)
	if err != nil {
		t.Fatal(err)
	}
	layer[BundleFile] = &fstest.MapFile{Data: b}
	l, err := loadLayerFast(layer)
	if err != nil || len(l.Tools) != 1 || l.Tools[0].Title != "Demo Echo" {
		t.Fatalf("current bundle: %v %v", l, err)
	}
	// Edit the source without regenerating: the edit is what loads.
	layer["tools/demo.echo.yaml"] = &fstest.MapFile{Data: bytes.Replace([]byte(baseTool), []byte("title: Demo Echo"), []byte("title: Edited"), 1)}
	l, err = loadLayerFast(layer)
	if err != nil || l.Tools[0].Title != "Edited" {
		t.Fatalf("stale bundle was used: %v %v", l, err)
	}
	// Garbage bundle: sources.
	layer[BundleFile] = &fstest.MapFile{Data: []byte("{not json")}
	if l, err = loadLayerFast(layer); err != nil || l.Tools[0].Title != "Edited" {
		t.Fatalf("garbage bundle: %v", err)
	}
}
