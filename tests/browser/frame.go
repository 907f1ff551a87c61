package browser

import (
	"fmt"
	"net/http"
)

// EnterFrame makes the iframe element e the context of every later find,
// wait and script (W3C WebDriver "Switch To Frame"), so a test can read a
// page embedded in another, such as an MCP Apps view inside its host.
// LeaveFrames returns to the top-level page.
func (b *Browser) EnterFrame(e Element) {
	b.t.Helper()
	if err := b.run(http.MethodPost, "/frame", map[string]any{"id": map[string]string{elementKey: e.id}}, nil); err != nil {
		b.fatal(fmt.Errorf("enter frame %q: %w", e.css, err))
	}
}

// LeaveFrames makes the top-level page the context again.
func (b *Browser) LeaveFrames() {
	b.t.Helper()
	if err := b.run(http.MethodPost, "/frame", map[string]any{"id": nil}, nil); err != nil {
		b.fatal(fmt.Errorf("leave frames: %w", err))
	}
}
