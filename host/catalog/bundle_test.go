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
	fromBundle, fromBundleRes, err := loadLayerFast(spec.FS)
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, fromYAMLRes, err := loadLayer(spec.FS)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromBundle)
	b, _ := json.Marshal(fromYAML)
	if !bytes.Equal(a, b) || !reflect.DeepEqual(fromBundleRes, fromYAMLRes) {
		t.Fatal("bundle and sources disagree")
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
	tools, _, err := loadLayerFast(layer)
	if err != nil || len(tools) != 1 || tools[0].Title != "Demo Echo" {
		t.Fatalf("current bundle: %v %v", tools, err)
	}
	// Edit the source without regenerating: the edit is what loads.
	layer["tools/demo.echo.yaml"] = &fstest.MapFile{Data: bytes.Replace([]byte(baseTool), []byte("title: Demo Echo"), []byte("title: Edited"), 1)}
	tools, _, err = loadLayerFast(layer)
	if err != nil || tools[0].Title != "Edited" {
		t.Fatalf("stale bundle was used: %v %v", tools[0].Title, err)
	}
	// Garbage bundle: sources.
	layer[BundleFile] = &fstest.MapFile{Data: []byte("{not json")}
	if tools, _, err = loadLayerFast(layer); err != nil || tools[0].Title != "Edited" {
		t.Fatalf("garbage bundle: %v", err)
	}
}
