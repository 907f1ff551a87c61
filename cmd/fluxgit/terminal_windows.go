//go:build windows

package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/windows"
)

// consoleRW reads the console's input buffer and writes its screen.
type consoleRW struct{ in, out *os.File }

func (c consoleRW) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c consoleRW) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c consoleRW) Close() error {
	err := c.in.Close()
	if e := c.out.Close(); err == nil {
		err = e
	}
	return err
}

// openTTY opens the console attached to this process (CONIN$, CONOUT$),
// never the standard handles. A process without a console (started
// detached, or with CREATE_NO_WINDOW by an agent's tool runner) cannot open
// it.
func openTTY() (io.ReadWriteCloser, error) {
	open := func(name string) (*os.File, error) {
		p, err := windows.UTF16PtrFromString(name)
		if err != nil {
			return nil, err
		}
		h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE,
			windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_EXISTING, 0, 0)
		if err != nil {
			return nil, err
		}
		var mode uint32
		if err := windows.GetConsoleMode(h, &mode); err != nil {
			windows.CloseHandle(h)
			return nil, err
		}
		return os.NewFile(uintptr(h), name), nil
	}
	in, err := open("CONIN$")
	if err != nil {
		return nil, fmt.Errorf("%w: open CONIN$: %v", errNoTerminal, err)
	}
	out, err := open("CONOUT$")
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("%w: open CONOUT$: %v", errNoTerminal, err)
	}
	return consoleRW{in: in, out: out}, nil
}
