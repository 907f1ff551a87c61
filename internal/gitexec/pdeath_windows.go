//go:build windows

package gitexec

import (
	"os/exec"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows has no parent-death signal; a job object that kills its
// processes when its last handle closes does the same. This process holds
// the only handle and never closes it, so the job, and every git in it,
// ends when the process ends, however it ends.
var (
	jobOnce sync.Once
	job     windows.Handle
)

func killOnCloseJob() windows.Handle {
	jobOnce.Do(func() {
		h, err := windows.CreateJobObject(nil, nil)
		if err != nil {
			return
		}
		var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
		info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
		if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
			windows.CloseHandle(h)
			return
		}
		job = h
	})
	return job
}

// tieToParent needs nothing before Start on Windows; see afterStart.
func tieToParent(*exec.Cmd) (release func()) { return func() {} }

// afterStart puts git into the kill-on-close job. A process git started
// in the moment before the assignment is not in the job; git's own
// children started later are.
func afterStart(cmd *exec.Cmd) {
	j := killOnCloseJob()
	if j == 0 || cmd.Process == nil {
		return
	}
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		return
	}
	defer windows.CloseHandle(p)
	_ = windows.AssignProcessToJobObject(j, p)
}
