//go:build windows

package providers

import (
	"fmt"
	"os/exec"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows has no parent-death signal; a job object that kills its
// processes when its last handle closes does the same. The host holds the
// only handle and never closes it, so every provider in the job ends when
// the host ends, however it ends (the kernel closes the handle).
var (
	jobOnce sync.Once
	job     windows.Handle
	jobErr  error
)

func killOnCloseJob() (windows.Handle, error) {
	jobOnce.Do(func() {
		h, err := windows.CreateJobObject(nil, nil)
		if err != nil {
			jobErr = fmt.Errorf("create job object: %w", err)
			return
		}
		var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
		info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
		if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
			windows.CloseHandle(h)
			jobErr = fmt.Errorf("set kill-on-close on job object: %w", err)
			return
		}
		job = h
	})
	return job, jobErr
}

// tieToHost needs nothing before start on Windows; see afterStart.
func tieToHost(*exec.Cmd) {}

// afterStart puts the started provider into the kill-on-close job. Until
// then (the go-plugin handshake) the provider's own watcher, which waits
// on the host's process handle, covers a host that dies.
func afterStart(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	j, err := killOnCloseJob()
	if err != nil {
		return err
	}
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		return fmt.Errorf("open provider process %d: %w", cmd.Process.Pid, err)
	}
	defer windows.CloseHandle(p)
	if err := windows.AssignProcessToJobObject(j, p); err != nil {
		return fmt.Errorf("assign provider process %d to the host's job: %w", cmd.Process.Pid, err)
	}
	return nil
}
